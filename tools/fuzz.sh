#!/usr/bin/env bash
# Runs one libFuzzer target for a while, starting from its seed corpus in tests/fuzz/corpus/<name>/.
#   tools/fuzz.sh TARGET [SECONDS] [extra libFuzzer args...]      e.g. tools/fuzz.sh scenario 60
#   tools/fuzz.sh build                                            only build every target (CI does this first,
#                                                                  so the fuzzing stages time fuzzing alone)
# TARGET: units | scenario (or fuzz_units | fuzz_scenario). Builds the target with clang into
# $TTSIM_FUZZ_BUILD (default build-fuzz/) with TTSIM_FUZZ=ON. New inputs the fuzzer finds go to a scratch
# copy of the corpus (the repository's seeds are not modified; keep an interesting input by copying it from
# the directory printed at the end). A crash, leak, sanitizer report, uncaught exception or timeout makes the
# script fail and leaves the reproducer in $TTSIM_FUZZ_ARTIFACTS (default build-fuzz/artifacts/).
# Reproduce:  build-fuzz/fuzz_scenario build-fuzz/artifacts/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: tools/fuzz.sh TARGET [SECONDS] [libFuzzer args] | tools/fuzz.sh build}; shift
seconds=${1:-60}; [[ $# -gt 0 ]] && shift
name=${target#fuzz_}
build=${TTSIM_FUZZ_BUILD:-build-fuzz}
artifacts=${TTSIM_FUZZ_ARTIFACTS:-$build/artifacts}
jobs=${TTSIM_FUZZ_JOBS:-2}
[[ $name == build || -f tests/fuzz/fuzz_$name.cpp ]] || { echo "no fuzz target tests/fuzz/fuzz_$name.cpp" >&2; exit 2; }

if [[ ! -f $build/build.ninja ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DTTSIM_FUZZ=ON -DTTSIM_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
if [[ $name == build ]]; then
  targets=()
  for source in tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$source" .cpp)"); done
  ninja -C "$build" -j "$jobs" "${targets[@]}" >/dev/null
  echo "built ${targets[*]} in $build"
  exit 0
fi
ninja -C "$build" -j "$jobs" "fuzz_$name" >/dev/null

mkdir -p "$artifacts"
work=$(mktemp -d "${TMPDIR:-/tmp}/ttsim-fuzz-$name.XXXXXX")
[[ -n ${TTSIM_FUZZ_KEEP:-} ]] || trap 'rm -rf "$work"' EXIT   # TTSIM_FUZZ_KEEP=1 keeps the grown corpus
cp -r "tests/fuzz/corpus/$name/." "$work/" 2>/dev/null || true
dict=()
[[ -f tests/fuzz/$name.dict ]] && dict=(-dict="tests/fuzz/$name.dict")
echo "fuzzing $name for ${seconds}s (corpus: $work, artifacts: $artifacts)"
set +e
"$build/fuzz_$name" "$work" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=8192 -print_final_stats=1 -artifact_prefix="$artifacts/" "$@" 2>"$build/fuzz_$name.log"
code=$?
set -e
grep -E "^(stat::number_of_executed_units|stat::new_units_added|#[0-9]+ +DONE)" "$build/fuzz_$name.log" || true
if ((code != 0)); then
  echo "fuzz_$name FOUND A PROBLEM (exit $code); last lines of $build/fuzz_$name.log:" >&2
  tail -40 "$build/fuzz_$name.log" >&2
  ls -1 "$artifacts" >&2
  exit 1
fi
echo "fuzz_$name: no crash in ${seconds}s; corpus grew to $(ls "$work" | wc -l) inputs${TTSIM_FUZZ_KEEP:+ in $work}"
