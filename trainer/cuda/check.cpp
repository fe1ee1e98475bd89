#include "trainer/cuda/check.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <atomic>

#include "trainer/errors.hpp"

namespace scalebench::trainer::cuda {
namespace {

std::atomic<int> g_rank{0};

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown host";
  return name.data();
}

}  // namespace

void set_error_rank(int rank) { g_rank = rank; }

void fail(std::string_view call, const char* file, int line, std::string_view what) {
  // The first line of the call is enough to find it; the file:line finds the rest.
  const std::string_view first = call.substr(0, call.find('\n'));
  throw BackendError(fmt::format("{} failed at {}:{} (host {}, rank {}): {}", first, file, line,
                                 host_name(), g_rank.load(), what));
}

}  // namespace scalebench::trainer::cuda
