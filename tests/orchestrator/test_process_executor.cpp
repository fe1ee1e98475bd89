// Real processes (sh): line stamping, streams, partial lines, exit codes, signals, timeouts.
#include <doctest/doctest.h>

#include "orchestrator/executor.hpp"

using namespace scalebench::orchestrator;
using namespace std::chrono_literals;

namespace {

struct Captured {
  ProcessOutcome outcome;
  std::vector<StampedLine> lines;
};

Captured run(std::vector<std::string> argv, std::optional<std::chrono::milliseconds> timeout = {},
             std::map<std::string, std::string> env = {}) {
  Captured captured;
  ProcessExecutor executor(500ms);
  captured.outcome = executor.execute(LaunchSpec{std::move(argv), std::move(env), timeout},
                                      [&](StampedLine&& line) { captured.lines.push_back(line); });
  return captured;
}

}  // namespace

TEST_CASE("lines of both streams arrive in order with increasing stamps") {
  const auto result = run({"sh", "-c", "echo one; sleep 0.2; echo two >&2; sleep 0.2; printf 'last'"});
  CHECK(result.outcome.exit_code == 0);
  REQUIRE(result.lines.size() == 3);
  CHECK(result.lines[0].text == "one");
  CHECK(result.lines[0].stream == Stream::Stdout);
  CHECK(result.lines[1].text == "two");
  CHECK(result.lines[1].stream == Stream::Stderr);
  CHECK(result.lines[2].text == "last");
  CHECK(result.lines[2].unterminated);
  const double gap = static_cast<double>(result.lines[1].monotonic_ns - result.lines[0].monotonic_ns) * 1e-9;
  CHECK(gap == doctest::Approx(0.2).epsilon(0.5));  // sleep 0.2 apart, loosely
  CHECK(result.lines[0].monotonic_ns >= result.outcome.start_monotonic_ns);
  CHECK(result.outcome.end_monotonic_ns >= result.lines[2].monotonic_ns);
}

TEST_CASE("exit codes, signals, environment and a missing program") {
  CHECK(run({"sh", "-c", "exit 3"}).outcome.exit_code == 3);
  const auto killed = run({"sh", "-c", "kill -9 $$"});
  CHECK(!killed.outcome.exit_code);
  CHECK(killed.outcome.signal == 9);
  const auto env = run({"sh", "-c", "echo $SCALEBENCH_X"}, {}, {{"SCALEBENCH_X", "hello"}});
  REQUIRE(env.lines.size() == 1);
  CHECK(env.lines[0].text == "hello");
  const auto missing = run({"definitely-not-a-program-xyz"});
  CHECK(missing.outcome.launch_error == "program not found: definitely-not-a-program-xyz");
}

TEST_CASE("a hanging process and its children are stopped at the timeout") {
  const auto result = run({"sh", "-c", "echo started; sleep 30 & sleep 30; echo never"}, 300ms);
  CHECK(result.outcome.timed_out);
  CHECK(result.outcome.signal == 15);
  REQUIRE(result.lines.size() == 1);
  CHECK(result.lines[0].text == "started");
  const double seconds =
      static_cast<double>(result.outcome.end_monotonic_ns - result.outcome.start_monotonic_ns) * 1e-9;
  CHECK(seconds < 5.0);
}

TEST_CASE("a process ignoring SIGTERM gets SIGKILL after the grace period") {
  const auto result = run({"sh", "-c", "trap '' TERM; echo up; while :; do sleep 0.05; done"}, 300ms);
  CHECK(result.outcome.timed_out);
  CHECK(result.outcome.signal == 9);
}
