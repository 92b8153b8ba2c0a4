#!/usr/bin/env bash
# Sweeps and plans over MPI ranks, and --shard / ttsim merge (README "Sweeps beyond one machine"):
#  1. `mpirun -np 2` and `-np 3` on a shipped sweep, and `-np 2` on a shipped plan, write files byte-identical
#     to one process's, and print the same report;
#  2. 3 shards of the sweep merged give the same files and report; a shard of another scenario, of another N,
#     a duplicate and an incomplete set are refused with exit 2 naming the file;
#  3. a rank killed mid-run (TTSIM_TEST_KILL_RANK: rank 1 SIGKILLs itself after its first chunk): the run exits
#     non-zero, rank 0 names the points not gathered, and no result file (nor a temporary one) is written;
#  4. SIGUSR1 to mpirun (forwarded to every rank: the job's Ctrl-C) stops it with exit 130 and complete rows.
# Needs ttsim built with MPI and mpirun (tools/install-deps.sh installs OpenMPI); exits 77 (ctest: skipped)
# when either is missing, saying why.
set -u
ttsim=$1; root=$2
cd "$root"
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

if ! command -v mpirun >/dev/null; then echo "SKIP: no mpirun (apt-get install openmpi-bin)"; exit 77; fi
if OMPI_COMM_WORLD_SIZE=2 "$ttsim" run scenarios/sweep-gpu-types.yaml 2>&1 >/dev/null | grep -q "built without MPI"; then
  echo "SKIP: $ttsim was built without MPI (libopenmpi-dev)"; exit 77
fi
# Open MPI refuses to run as root (CI containers) without both variables. --oversubscribe: more ranks than the
# machine's cores (CI has 2). No MCA settings are needed in a container without network: the shared-memory
# transport (vader) and self are chosen by default for ranks on one node.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Under the sanitizer build (tools/ci-sanitize.sh) LeakSanitizer reports Open MPI's own allocations, never freed
# by design at MPI_Finalize; leaks are still checked for ttsim by every other test of the suite.
mpi_run() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 300 mpirun --oversubscribe -x ASAN_OPTIONS "$@"; }

ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
same_outputs() {  # name, reference dir, dir, reference stdout, stdout
  if diff -r "$2" "$3" >/dev/null && cmp -s "$4" "$5"; then ok; else bad "$1: outputs differ from one process"; diff -r "$2" "$3" | head -5; fi
}

sweep=scenarios/sweep-gpu-types.yaml
"$ttsim" run "$sweep" --out "$tmp/one" >"$tmp/one.txt" || bad "one-process sweep failed"
[[ -f $tmp/one/results.csv ]] || bad "one-process sweep wrote no results.csv"
for n in 2 3; do
  mpi_run -np $n "$ttsim" run "$sweep" --out "$tmp/np$n" >"$tmp/np$n.txt" 2>"$tmp/np$n.err" || bad "mpirun -np $n: exit $?"
  same_outputs "sweep at -np $n" "$tmp/one" "$tmp/np$n" "$tmp/one.txt" "$tmp/np$n.txt"
done
plan=scenarios/plan-deadline-bert.yaml
"$ttsim" run "$plan" --out "$tmp/plan1" >"$tmp/plan1.txt" || bad "one-process plan failed"
mpi_run -np 2 "$ttsim" run "$plan" --out "$tmp/plan2" >"$tmp/plan2.txt" 2>"$tmp/plan2.err" || bad "plan at -np 2: exit $?"
same_outputs "plan at -np 2" "$tmp/plan1" "$tmp/plan2" "$tmp/plan1.txt" "$tmp/plan2.txt"

# 2. Shards.
for i in 1 2 3; do "$ttsim" run "$sweep" --shard $i/3 --out "$tmp/shard$i" >/dev/null || bad "shard $i/3 failed"; done
"$ttsim" merge "$tmp/shard1" "$tmp/shard3" "$tmp/shard2/shard-2-of-3.cbor" --out "$tmp/merged" >"$tmp/merged.txt" ||
  bad "merge of 3 shards: exit $?"
same_outputs "3 shards merged" "$tmp/one" "$tmp/merged" "$tmp/one.txt" "$tmp/merged.txt"
refused() {  # name, text the message must hold, merge arguments...
  local name=$1 want=$2; shift 2
  "$ttsim" merge "$@" --out "$tmp/refused" >/dev/null 2>"$tmp/err"; local code=$?
  if ((code == 2)) && (($(wc -l <"$tmp/err") == 1)) && grep -qF -- "$want" "$tmp/err" && [[ ! -e $tmp/refused ]]; then ok
  else bad "$name: exit $code, want 2 with '$want' and no output"; head -2 "$tmp/err"; fi
}
"$ttsim" run scenarios/whatif-network.yaml --shard 2/3 --out "$tmp/other" >/dev/null || bad "shard of another sweep failed"
"$ttsim" run "$sweep" --shard 2/4 --out "$tmp/four" >/dev/null || bad "shard 2/4 failed"
refused "shard of another scenario" "$tmp/other/shard-2-of-3.cbor: a shard of another scenario" \
  "$tmp/shard1" "$tmp/other" "$tmp/shard3"
refused "shard of another N" "$tmp/four/shard-2-of-4.cbor: shard 2/4" "$tmp/shard1" "$tmp/four" "$tmp/shard3"
refused "shard given twice" "shard-1-of-3.cbor: shard 1/3 is given twice" "$tmp/shard1" "$tmp/shard1" "$tmp/shard2"
refused "incomplete set" "shard(s) 2 of 3 missing" "$tmp/shard1" "$tmp/shard3"
refused "not a shard file" "$sweep: not a file or message ttsim wrote" "$sweep"

# 3. A rank lost mid-run.
TTSIM_TEST_KILL_RANK=1:1 mpi_run -np 2 -x TTSIM_TEST_KILL_RANK "$ttsim" run "$sweep" --out "$tmp/killed" \
  >"$tmp/killed.txt" 2>"$tmp/killed.err"; code=$?
((code != 0)) || bad "killed rank: exit 0"
grep -qE "of 84 points were not gathered: (.*, )?[0-9]+(-[0-9]+)? \(in flight on rank 1\)" "$tmp/killed.err" ||
  { bad "killed rank: the lost points are not named"; grep ttsim "$tmp/killed.err" | head -3; }
(($(find "$tmp/killed" -type f 2>/dev/null | wc -l) == 0)) || bad "killed rank: files written: $(ls "$tmp/killed")"
[[ ! -s $tmp/killed.txt ]] || bad "killed rank: a report was printed"

# 4. SIGUSR1 to mpirun part way through a long sweep (one thread per rank, a few seconds).
mpi_run -np 2 "$ttsim" run tests/cli/long_sweep.yaml --threads 1 --out "$tmp/stopped" >/dev/null 2>"$tmp/stopped.err" &
job=$!
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
for _ in $(seq 600); do   # until a rank has computed for 0.5 s (at most 30 s); ranks' command lines start with $ttsim
  rank=$(pgrep -f -n "^$ttsim run tests/cli/long_sweep.yaml --threads 1 --out $tmp/stopped")
  [[ -n $rank ]] && (( $(cpu_ticks "$rank") * 2 >= $(getconf CLK_TCK) )) && break
  sleep 0.05
done
kill -USR1 "$(pgrep -f -n "^mpirun .*--out $tmp/stopped")" 2>/dev/null
wait "$job"; code=$?
finished=$(sed -n 's/.*interrupted: \([0-9]*\) of 792 points finished.*/\1/p' "$tmp/stopped.err")
if ((code != 130)) || [[ -z $finished ]]; then bad "SIGUSR1: exit $code, want 130 with 'interrupted: N of 792'"; head -3 "$tmp/stopped.err"
elif (($(wc -l <"$tmp/stopped/results.csv") - 1 != finished)) || ((finished >= 792)); then
  bad "SIGUSR1: results.csv rows do not match the $finished finished points"
else ok; fi
(($(find "$tmp" -name '*.tmp*' | wc -l) == 0)) || bad "temporary files left"

echo "mpi_sweeps: $pass passed, $fail failed"
((fail == 0))
