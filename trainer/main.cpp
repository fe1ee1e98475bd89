// scalebench-train: parse the command line, start MPI if a launcher started us, train (or, with
// --benchmark allreduce, time allreduces).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "trainer/allreduce_bench.hpp"
#include "trainer/distributed.hpp"
#include "trainer/options.hpp"
#include "trainer/trainer.hpp"

namespace dist = scalebench::trainer::dist;

int main(int argc, char** argv) {
  // Whole lines only: a launcher tags whatever chunk it reads (docs/trainer-output.md).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  scalebench::trainer::TrainOptions options;
  CLI::App app;
  scalebench::trainer::add_options(app, options);
  CLI11_PARSE(app, argc, argv);

  dist::init(&argc, &argv);
  try {
    if (options.benchmark) {
      (void)scalebench::trainer::run_allreduce_benchmark(options);
    } else {
      scalebench::trainer::run(options);
    }
  } catch (const std::exception& e) {
    if (dist::size() > 1) {
      std::fprintf(stderr, "scalebench-train: error: %s (rank %d on %s)\n", e.what(), dist::rank(),
                   dist::host_name().c_str());
    } else {
      std::fprintf(stderr, "scalebench-train: error: %s\n", e.what());
    }
    dist::abort_all(1);
  }
  dist::finalize();
  return 0;
}
