// What the analysis tests share: a line as the executor would stamp it, `seconds` after `start`
// (arrived in one read).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "orchestrator/executor.hpp"

namespace scalebench::test {

inline orchestrator::StampedLine stamped(
    std::int64_t start_ns, double seconds, std::string text,
    orchestrator::Stream stream = orchestrator::Stream::Stdout) {
  const auto ns = start_ns + static_cast<std::int64_t>(std::llround(seconds * 1e9));
  // Arrived whole: its first byte with its newline.
  return orchestrator::StampedLine{ns, ns, stream, std::move(text), false, ns, {}};
}

}  // namespace scalebench::test
