// The single main() of ttsim_bench; benchmarks register themselves from the other files in this folder.
// A benchmark whose name starts with `slow_` takes minutes (a whole calibration fit): a run without
// --benchmark_filter skips it, and a filter that names it runs it.
#include <string>

#include <benchmark/benchmark.h>

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    const std::string filter = benchmark::GetBenchmarkFilter();
    const bool unfiltered = filter.empty() || filter == "." || filter == "all";
    benchmark::RunSpecifiedBenchmarks(unfiltered ? std::string("-^slow_") : filter);
    benchmark::Shutdown();
    return 0;
}
