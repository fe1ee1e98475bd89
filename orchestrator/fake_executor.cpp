#include <cmath>

#include "orchestrator/executor.hpp"

namespace scalebench::orchestrator {

ProcessOutcome FakeExecutor::execute(const LaunchSpec& spec, const LineCallback& on_line) {
  launched_.push_back(spec);
  const FakeProcess process = script_(spec);
  constexpr std::int64_t kWallOffsetNs = 1'790'000'000'000'000'000;  // 2026-09-20, any fixed date
  const auto at = [&](double seconds) { return clock_ns_ + std::llround(seconds * 1e9); };

  ProcessOutcome outcome;
  outcome.start_monotonic_ns = clock_ns_;
  outcome.start_wall_ns = clock_ns_ + kWallOffsetNs;
  outcome.launch_error = process.launch_error;
  double last = 0;
  if (process.launch_error.empty()) {
    for (const auto& line : process.lines) {
      on_line(StampedLine{at(line.offset_seconds), at(line.offset_seconds) + kWallOffsetNs,
                          line.stream, line.text, line.unterminated});
      last = line.offset_seconds;
    }
  }
  const double duration = process.duration_seconds > 0 ? process.duration_seconds : last;
  outcome.exit_code = process.launch_error.empty() ? process.exit_code : std::nullopt;
  outcome.signal = process.signal;
  outcome.timed_out = process.timed_out;
  outcome.end_monotonic_ns = at(duration);
  outcome.end_wall_ns = outcome.end_monotonic_ns + kWallOffsetNs;
  clock_ns_ = outcome.end_monotonic_ns + 1'000'000;
  return outcome;
}

}  // namespace scalebench::orchestrator
