// What the C++ benchmarks share: a wall clock and `--name value` options.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace scalebench::bench {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The value after `name` in args, or `fallback`.
inline std::string option(const std::vector<std::string>& args, const std::string& name,
                          const std::string& fallback) {
  const auto it = std::find(args.begin(), args.end(), name);
  return it != args.end() && it + 1 != args.end() ? *(it + 1) : fallback;
}

}  // namespace scalebench::bench
