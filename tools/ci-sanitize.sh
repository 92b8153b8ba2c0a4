#!/usr/bin/env bash
# Builds ttsim with AddressSanitizer + UndefinedBehaviorSanitizer (TTSIM_SANITIZE=ON) into build-asan/ and runs
# the whole test suite (ctest) on it. Any sanitizer report fails the run: UBSan does not recover
# (-fno-sanitize-recover), ASan aborts on the first error, LeakSanitizer fails at exit.
#   tools/ci-sanitize.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
jobs=${TTSIM_JOBS:-$(nproc)}
# -O1 -g1, as the sanitizers' own documentation advises (-O1 keeps reports exact; -g1's line tables are all a
# report's stack trace needs): it compiles in about half the time of RelWithDebInfo's -O2 -g (row_codec.cpp
# 22 s against 48 s of CPU under ASan+UBSan), which is most of this stage.
cmake -S . -B "$build" -G Ninja -DTTSIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DTTSIM_BENCH=OFF >/dev/null
cmake --build "$build" -j "$jobs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Every test runs but three: speed is measured by the benchmark programs (tools/bench), never asserted in a test,
# so nothing here depends on the sanitizers' slowdown. The three left out refit the whole operator model on the
# <= 64-GPU results (multi-start BOBYQA over every result's simulated iteration): the hold-out guard, the
# forward-chaining guard (a refit per fold) and `ttsim validate`'s report. They take 1-3 minutes in Release and
# over 22 minutes here (measured on 2bb2735: the hold-out guard alone ran 22 minutes and was still going), which
# is most of this stage's budget; their code runs under the sanitizers in the small fits (the lumped hold-out,
# forward chaining, user runs, the operator model's small fits), and stage 1 runs them. TTSIM_SANITIZE_EXCLUDE=REGEX leaves more
# tests out (for a local investigation only).
full_refits='^(operator model: (hold-out|forward-chaining CV) MAPE stays at or below|cli\.validate_report$)'
exclude=(-E "$full_refits${TTSIM_SANITIZE_EXCLUDE:+|$TTSIM_SANITIZE_EXCLUDE}")
# The method check (ctest label `slow`: three rounds' full refits, about 8 CPU-minutes in Release) is left out
# for the same reason; the small fits exercise its code here.
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 1800 -LE slow "${exclude[@]}"
