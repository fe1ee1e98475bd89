#include <cmath>

#include "orchestrator/executor.hpp"

namespace scalebench::orchestrator {

ProcessOutcome FakeExecutor::execute(const LaunchSpec& spec, const LineCallback& on_line) {
  constexpr std::int64_t kWallOffsetNs = 1'790'000'000'000'000'000;  // 2026-09-20, any fixed date
  if (interrupt_requested()) {  // as ProcessExecutor: nothing starts once a stop was asked
    ProcessOutcome refused;
    refused.interrupted = true;
    refused.start_monotonic_ns = refused.end_monotonic_ns = clock_ns_;
    refused.start_wall_ns = refused.end_wall_ns = clock_ns_ + kWallOffsetNs;
    return refused;
  }
  launched_.push_back(spec);
  const FakeProcess process = script_(spec);
  const auto at = [&](double seconds) { return clock_ns_ + std::llround(seconds * 1e9); };

  ProcessOutcome outcome;
  outcome.start_monotonic_ns = clock_ns_;
  outcome.start_wall_ns = clock_ns_ + kWallOffsetNs;
  outcome.launch_error = process.launch_error;
  outcome.launched = process.launch_error.empty();
  double last = 0;
  if (process.launch_error.empty()) {
    for (const auto& line : process.lines) {
      // Each fake line arrives whole: its first byte with its newline.
      on_line(StampedLine{at(line.offset_seconds),
                          at(line.offset_seconds) + kWallOffsetNs,
                          line.stream,
                          line.text,
                          line.unterminated,
                          at(line.offset_seconds),
                          {}});
      last = line.offset_seconds;
    }
  }
  const double duration = process.duration_seconds > 0 ? process.duration_seconds : last;
  outcome.exit_code = process.launch_error.empty() ? process.exit_code : std::nullopt;
  outcome.signal = process.signal;
  outcome.timed_out = process.timed_out;
  if (process.stop_during_run != 0 && outcome.launched) {
    request_stop(process.stop_during_run);
    outcome.interrupted = true;
  }
  outcome.end_monotonic_ns = at(duration);
  outcome.end_wall_ns = outcome.end_monotonic_ns + kWallOffsetNs;
  clock_ns_ = outcome.end_monotonic_ns + 1'000'000;
  return outcome;
}

}  // namespace scalebench::orchestrator
