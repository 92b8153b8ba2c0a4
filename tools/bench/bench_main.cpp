// The single main() of ttsim_bench; benchmarks register themselves from the other files in this folder.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
