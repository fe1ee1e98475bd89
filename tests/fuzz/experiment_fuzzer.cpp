// libFuzzer entry point for parse_experiment (tests/fuzz/README.md).
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    scalebench::fuzz::experiment_target({reinterpret_cast<const char*>(data), size});
  } catch (const std::exception& error) {
    std::fprintf(stderr, "invariant broken: %s\n", error.what());
    std::abort();
  }
  return 0;
}
