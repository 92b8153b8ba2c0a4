#!/usr/bin/env bash
# Wall time of a 1,056-point sweep (tools/bench/sweep-1056.yaml) in one process and over 1 and 2 MPI ranks, one
# TBB thread per rank (so ranks, not threads, are what scales), and with all threads; checks every run's files
# are byte-identical. Rank 0's work per handed-out chunk is measured by `ttsim_bench --benchmark_filter=chunk`.
#   tools/bench/mpi_sweep.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # containers run as root
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
scenario=tools/bench/sweep-1056.yaml
# Wall time and CPU time (user + system of every process, mpirun and its ranks included): on a shared or loaded
# machine the wall time says little, while the CPU time shows what distributing costs.
run() {  # label, out dir, --threads value (0 = all cores), launcher and binary...
  local label=$1 out=$2 threads=$3; shift 3
  local TIMEFORMAT="%R %U %S" times
  times=$( { time "$@" run "$scenario" --out "$out" --threads "$threads" >/dev/null; } 2>&1 | tail -1)
  read -r wall user sys <<<"$times"
  printf '%-36s wall %6.2f s   CPU %6.2f s\n' "$label" "$wall" "$(echo "$user + $sys" | bc)"
  [[ $out == "$tmp/one" ]] || diff -r -q "$tmp/one" "$out" >/dev/null || echo "  files differ from one process!"
}
run "one process, 1 thread" "$tmp/one" 1 "$build/ttsim"
for np in 1 2; do
  run "mpirun -np $np, 1 thread per rank" "$tmp/np$np" 1 mpirun --oversubscribe -np $np "$build/ttsim"
done
run "one process, all threads" "$tmp/all" 0 "$build/ttsim"
run "mpirun -np 2, all threads per rank" "$tmp/np2all" 0 mpirun --oversubscribe -np 2 "$build/ttsim"
