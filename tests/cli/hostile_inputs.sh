#!/usr/bin/env bash
# Hostile inputs beyond tests/cli/malformed_inputs.sh. Each must be refused with exit code 2 and ONE stderr
# line (no crash, no hang, no leftover output files):
#  1. every bad topology in tests/cli/malformed/topologies/, reached through a collective scenario's
#     cluster.topology_file (tests/cli/malformed/topology-scenarios/) and through `ttsim collective --topology`:
#     the message names the *topology* file:line and contains the text of its "# expect: TEXT" first line;
#  2. files that are not YAML text: a NUL byte, a directory, /dev/zero, an oversized file, deep nesting; and
#     names the OS refuses (a component longer than 255 bytes);
#  3. an --out directory that cannot be created;
#  4. resource limits lowered through TTSIM_MAX_GPUS / TTSIM_MAX_MEMORY;
#  5. SIGINT in the middle of a long sweep (tests/cli/long_sweep.yaml): the run stops with exit code 130,
#     results.csv holds only complete rows, and no temporary files remain.
set -u
ttsim=$1; root=$2
cd "$root"
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

check() {  # name, expected-text, location-regex, command...
  local name=$1 expect=$2 where=$3; shift 3
  local out="$tmp/out" err="$tmp/err" code
  timeout 60 "$@" >"$out" 2>"$err"; code=$?
  local lines; lines=$(wc -l <"$err")
  local ok=1 why=""
  [[ $code -eq 2 ]] || { ok=0; why="exit code $code (want 2)"; }
  [[ $lines -eq 1 ]] || { ok=0; why+=" stderr has $lines lines (want 1)"; }
  if [[ -n $where ]] && ! grep -q -- "$where" "$err"; then ok=0; why+=" no '$where' in message"; fi
  if [[ -n $expect ]] && ! grep -qF -- "$expect" "$err"; then ok=0; why+=" message lacks '$expect'"; fi
  if ((ok)); then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $name: $why"; sed 's/^/    /' "$err" | head -3; fi
}
no_output() {  # name, dir
  if [[ -e $2 ]] && [[ -n $(ls -A "$2" 2>/dev/null) ]]; then fail=$((fail+1)); echo "FAIL $1: left output files behind"; fi
  rm -rf "$2"
}

# 1. Bad topologies, through a scenario and through the flag.
for topo in tests/cli/malformed/topologies/*.yaml; do
  name=$(basename "$topo" .yaml)
  expect=$(sed -n '1s/^# expect: //p' "$topo")
  scenario=tests/cli/malformed/topology-scenarios/$name.yaml
  if [[ ! -f $scenario ]]; then fail=$((fail+1)); echo "FAIL $topo: no $scenario"; continue; fi
  check "$scenario" "$expect" "topologies/$name.yaml:[0-9]\+" "$ttsim" run "$scenario" --out "$tmp/outdir"
  no_output "$scenario" "$tmp/outdir"
  check "collective --topology $topo" "$expect" "topologies/$name.yaml:[0-9]\+" \
    "$ttsim" collective --topology "$topo" --out "$tmp/outdir/x.txt"
  no_output "collective --topology $topo" "$tmp/outdir"
done

# 2. Files that are not YAML text.
printf 'scenario: collective\nname: a\0b\n' >"$tmp/nul.yaml"
check "NUL byte" "NUL byte" "nul.yaml:2:" "$ttsim" run "$tmp/nul.yaml"
check "a directory" "is a directory" "" "$ttsim" run tests/cli
check "/dev/zero" "not a regular file" "/dev/zero" "$ttsim" run /dev/zero
check "topology_file: /dev/zero" "not a regular file" "" "$ttsim" collective --topology /dev/zero
head -c $((17 * 1024 * 1024)) /dev/zero | tr '\0' '#' >"$tmp/huge.yaml"
check "17 MiB file" "at most 16MiB" "huge.yaml" "$ttsim" run "$tmp/huge.yaml"
{ printf 'scenario: '; head -c 200000 /dev/zero | tr '\0' '['; } >"$tmp/deep.yaml"
check "deeply nested flow sequence" "" "deep.yaml:[0-9]\+" "$ttsim" run "$tmp/deep.yaml"
{ printf 'scenario: collective\nname: '; head -c 2000000 /dev/zero | tr '\0' 'x'; printf '\n'; } >"$tmp/long.yaml"
check "2 MB scalar, missing keys" "missing required key 'cluster'" "long.yaml:[0-9]\+" "$ttsim" run "$tmp/long.yaml"
printf 'scenario: collective\ncluster: &a {system: dgx-h100, gpus: 8, x: *a}\n' >"$tmp/alias.yaml"
check "recursive alias" "" "alias.yaml:[0-9]\+" "$ttsim" run "$tmp/alias.yaml"

# A path component longer than NAME_MAX (255 bytes): the OS answers ENAMETOOLONG, which std::filesystem's
# throwing overloads turned into an internal error (exit 3); found by fuzz_scenario in CI at def82d3.
long_name=$(printf 'a%.0s' {1..300})
printf 'scenario: collective\ncluster:\n  topology_file: %s.yaml\ncollective: {op: allreduce}\n' "$long_name" >"$tmp/longname.yaml"
check "topology_file name too long" "not found" "longname.yaml:3:" "$ttsim" run "$tmp/longname.yaml"
check "--topology name too long" "no such file" "" "$ttsim" collective --topology "$long_name.yaml"
check "--profiles name too long" "not found" "" "$ttsim" predict --workload bert --system dgx-h100 --gpus 8 --profiles "$long_name"
check "--data name too long" "cannot open" "" "$ttsim" validate --data "$long_name.csv"
check "scenario name too long" "" "" "$ttsim" run "$long_name.yaml"
check "--out name too long" "cannot create output" "" "$ttsim" run scenarios/collective-h100-nvls.yaml --out "$tmp/$long_name"

# Files a merge reads (tools/cli/shard_file.cpp): not a regular file, or a missing one.
check "merge /dev/zero" "not a regular file" "/dev/zero" "$ttsim" merge /dev/zero --out "$tmp/outdir"
no_output "merge /dev/zero" "$tmp/outdir"
check "merge name too long" "no such shard file" "" "$ttsim" merge "$long_name.cbor" --out "$tmp/outdir"

# Text that is not UTF-8 (a Latin-1 byte) in a flag, a positional argument and a CSV: refused where it is written,
# never passed on to the JSON writer (which would fail with an internal error, exit 3).
check "--currency not UTF-8" "'--currency': value is not UTF-8 text" "" \
  "$ttsim" predict --workload bert --system dgx-h100 --gpus 8 --currency $'EU\xe9' --price 3 --format json
check "scenario path not UTF-8" "is not UTF-8 text" "" "$ttsim" run $'caf\xe9.yaml'
printf 'workload,system,gpus,global_batch,step_time,label\nbert,dgx-h100,8,768,95ms,caf\xe9\n' >"$tmp/runs.csv"
check "user-runs CSV not UTF-8" "not UTF-8 text" "runs.csv:2" "$ttsim" calibrate --data "$tmp/runs.csv" --out "$tmp/prof"
no_output "user-runs CSV not UTF-8" "$tmp/prof"

# 3. An --out directory that cannot be created (a regular file is in the way).
touch "$tmp/file"
check "--out under a regular file" "" "" "$ttsim" run scenarios/collective-h100-nvls.yaml --out "$tmp/file/sub"
check "collective --out under a regular file" "" "" "$ttsim" collective --gpus 8 --max-size 2MiB --out "$tmp/file/sub/x.csv"
check "user-model --out under a regular file" "is not a folder" "" "$ttsim" run scenarios/custom-decoder-7b.yaml --out "$tmp/file/sub"

# 4. Resource limits (sim/resource_guard.hpp): lowered through the environment, they refuse up front.
check "TTSIM_MAX_GPUS=4, scenario" "TTSIM_MAX_GPUS" "collective-h100-nvls.yaml:[0-9]\+" \
  env TTSIM_MAX_GPUS=4 "$ttsim" run scenarios/collective-h100-nvls.yaml --out "$tmp/outdir"
no_output "TTSIM_MAX_GPUS=4" "$tmp/outdir"
check "TTSIM_MAX_GPUS=4, flag" "TTSIM_MAX_GPUS" "" env TTSIM_MAX_GPUS=4 "$ttsim" collective --gpus 8
check "TTSIM_MAX_MEMORY=1MiB" "TTSIM_MAX_MEMORY" "" env TTSIM_MAX_MEMORY=1MiB "$ttsim" collective --gpus 1024
check "TTSIM_MAX_MEMORY malformed" "'TTSIM_MAX_MEMORY'" "" env TTSIM_MAX_MEMORY=lots "$ttsim" collective --gpus 8

# SIGINT tests. A background job of a non-interactive shell starts with SIGINT ignored, so a run is started
# through python3 with SIGINT restored to its default, as a terminal would. The interrupt is sent once the run
# has used TTSIM_SIGINT_AFTER_CPU seconds of CPU (not wall time: on a loaded machine wall time says little about
# progress).
#   interrupt_after_cpu LOG COMMAND...: runs COMMAND (stdout to LOG.stdout, stderr to LOG.stderr), interrupts it,
#   waits up to 60 s; sets `code` to its exit code, or returns 1 (having killed it) if it was still running.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
interrupt_after_cpu() {
  local log=$1; shift
  python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
    "$@" >"$log.stdout" 2>"$log.stderr" &
  local pid=$! waited=0 want=$(( ${TTSIM_SIGINT_AFTER_CPU:-2} * $(getconf CLK_TCK) ))
  while kill -0 "$pid" 2>/dev/null && (( $(cpu_ticks "$pid") < want && waited < 1200 )); do sleep 0.05; waited=$((waited + 1)); done
  kill -INT "$pid" 2>/dev/null
  waited=0
  while kill -0 "$pid" 2>/dev/null && ((waited < 600)); do sleep 0.1; waited=$((waited + 1)); done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; wait "$pid" 2>/dev/null; return 1; fi
  wait "$pid"; code=$?
}
# "interrupted: N of M UNIT finished" on LOG.stderr: sets `finished` and `total` (empty when absent).
interrupted_counts() {  # LOG UNIT
  finished=$(sed -n "s/.*interrupted: \([0-9]*\) of \([0-9]*\) $2 finished.*/\1/p" "$1.stderr")
  total=$(sed -n "s/.*interrupted: \([0-9]*\) of \([0-9]*\) $2 finished.*/\2/p" "$1.stderr")
}

# 5. SIGINT in the middle of a long sweep (792 points, ~3.5 s of CPU), part way into it.
# Expected: exit 130 within 60 s, one stderr line "interrupted: N of M points finished", results.csv = header +
# exactly N complete rows in sweep order with N < M, valid results.json listing the same N, no temporary files.
out="$tmp/sweep"
sigint_ok=1
sigint_fail() { sigint_ok=0; echo "FAIL SIGINT sweep: $*"; }
if ! interrupt_after_cpu "$tmp/sweep" "$ttsim" run tests/cli/long_sweep.yaml --out "$out"; then
  sigint_fail "still running 60 s after SIGINT"
else
  csv="$out/results.csv"
  ((code == 130)) || sigint_fail "exit code $code (want 130)"
  leftovers=$(find "$out" -name '*.tmp*' 2>/dev/null | wc -l)
  ((leftovers == 0)) || sigint_fail "$leftovers temporary files left"
  (( $(wc -l <"$tmp/sweep.stderr") == 1 )) || sigint_fail "stderr has $(wc -l <"$tmp/sweep.stderr") lines (want 1)"
  interrupted_counts "$tmp/sweep" points
  if [[ -z $finished || -z $total ]]; then
    sigint_fail "no 'interrupted: N of M points finished' on stderr"
  elif [[ ! -f $csv ]]; then
    sigint_fail "no results.csv"
  else
    rows=$(($(wc -l <"$csv") - 1))
    [[ $(head -1 "$csv") == index,workload,* ]] || sigint_fail "results.csv has no header line"
    [[ -z $(tail -c1 "$csv") ]] || sigint_fail "last row not terminated by a newline"
    # Complete rows: every row has the header's field count (read as CSV: quoted warnings and errors contain
    # commas) and rows are in sweep order (index strictly increasing).
    header_fields=$(python3 -c 'import csv, sys; print(len(next(csv.reader(open(sys.argv[1])))))' "$csv")
    bad=$(python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
print(sum(len(r) != int(sys.argv[2]) for r in rows[1:]))' "$csv" "$header_fields")
    ((bad == 0)) || sigint_fail "$bad rows with the wrong number of fields"
    unordered=$(awk -F, 'NR > 2 && $1 + 0 <= prev {c++} NR > 1 {prev = $1 + 0} END {print c+0}' "$csv")
    ((unordered == 0)) || sigint_fail "rows not in sweep order"
    ((rows == finished)) || sigint_fail "results.csv has $rows rows, stderr says $finished finished"
    ((rows >= 1)) || sigint_fail "no complete row before the interrupt"
    ((finished < total)) || sigint_fail "all $total points finished: the interrupt came too late to test anything"
    python3 - "$out/results.json" "$finished" "$total" <<'PY' || sigint_fail "results.json invalid or inconsistent"
import json, sys
doc = json.load(open(sys.argv[1]))
finished, total = int(sys.argv[2]), int(sys.argv[3])
assert len(doc["points"]) == finished, (len(doc["points"]), finished)
assert doc["interrupted"] == {"points_finished": finished, "points_requested": total}, doc["interrupted"]
PY
    [[ -e $out/trace.json ]] && sigint_fail "trace.json written for an interrupted sweep"
    echo "SIGINT sweep: exit $code, $rows of $total points kept"
  fi
fi
if ((sigint_ok)); then pass=$((pass+1)); else fail=$((fail+1)); sed 's/^/    /' "$tmp/sweep.stderr" | head -3; fi

# 6. SIGINT in the middle of a long collective sweep: 21 sizes (1MiB..1TiB) of an all-to-all over 2,048 GPUs
# under static ECMP, ~0.4 s of CPU each; through the flags and through a scenario (tests/cli/long_collective.yaml).
# Expected: exit 130 within 60 s, one stderr line "interrupted: N of M sizes finished" with 0 < N < M, the N
# finished rows on stdout (CSV: header + N rows, ascending sizes), and no result file at all: neither the --out
# file (nor a temporary one beside it) nor any file in the --out directory.
collective_sigint() {  # NAME LOG OUT COMMAND...
  local name=$1 log=$2 out=$3; shift 3
  local ok=1
  why() { ok=0; echo "FAIL SIGINT $name: $*"; }
  if ! interrupt_after_cpu "$log" "$@"; then
    why "still running 60 s after SIGINT"
  else
    ((code == 130)) || why "exit code $code (want 130)"
    (( $(wc -l <"$log.stderr") == 1 )) || why "stderr has $(wc -l <"$log.stderr") lines (want 1)"
    interrupted_counts "$log" sizes
    if [[ -z $finished || -z $total ]]; then
      why "no 'interrupted: N of M sizes finished' on stderr"
    else
      ((total == 21)) || why "$total sizes requested (want 21)"
      ((finished >= 1)) || why "no size finished before the interrupt"
      ((finished < total)) || why "all $total sizes finished: the interrupt came too late to test anything"
      local rows=$(($(wc -l <"$log.stdout") - 1))
      ((rows == finished)) || why "stdout has $rows rows, stderr says $finished finished"
      [[ $(head -1 "$log.stdout") == bytes,time_us,* ]] || why "stdout has no CSV header"
      [[ $(sed -n 2p "$log.stdout") == 1048576,* ]] || why "first row is not 1MiB"
    fi
    local left  # OUT itself, OUT.tmp-PID beside it, or any file inside OUT (a directory)
    left=$(find "$(dirname "$out")" -path "$out*" -type f | wc -l)
    ((left == 0)) || why "$left result or temporary files left: $(find "$(dirname "$out")" -path "$out*" -type f)"
    echo "SIGINT $name: exit $code, ${finished:-?} of ${total:-?} sizes printed, no file written"
  fi
  if ((ok)); then pass=$((pass+1)); else fail=$((fail+1)); sed 's/^/    /' "$log.stderr" | head -3; fi
}
mkdir -p "$tmp/coll"
collective_sigint "collective --out DIR" "$tmp/coll/flags" "$tmp/coll/sizes" \
  "$ttsim" collective --gpus 2048 --routing static --op alltoall --min-size 1MiB --max-size 1TiB --format csv \
  --out "$tmp/coll/sizes"
collective_sigint "run collective scenario --out DIR" "$tmp/coll/scenario" "$tmp/coll/results" \
  "$ttsim" run tests/cli/long_collective.yaml --format csv --out "$tmp/coll/results"

echo "hostile inputs: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
