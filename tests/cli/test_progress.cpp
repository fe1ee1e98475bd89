// `scalebench run`'s progress (issue "What people publish", item 5), driven through the fake
// executor: the epoch and elapsed time of the current run and the matrix's time left, as plain
// lines (CI logs), as one updating terminal line, or nothing with --quiet.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "cli/progress.hpp"
#include "db/database.hpp"
#include "orchestrator/executor.hpp"
#include "orchestrator/experiment.hpp"
#include "orchestrator/runner.hpp"
#include "test_support.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;

namespace {

// Three runs of 30 one-second epochs: wall time 31 s each (the fake clock).
FakeProcess thirty_epochs(const LaunchSpec&) {
  FakeProcess p;
  for (int y = 1; y <= 30; ++y)
    p.lines.push_back(
        {static_cast<double>(y - 1), Stream::Stdout, "Epoch " + std::to_string(y) + "/30"});
  p.lines.push_back({30.0, Stream::Stdout, "10/10 - loss: 0.1"});
  p.duration_seconds = 31;
  return p;
}

struct Printed {
  std::string out, err;
};

Printed run_with(cli::ProgressStyle style, const FakeExecutor::Script& script = thirty_epochs,
                 int ok_runs = 3) {
  test::TempDir dir;
  auto database = db::Database::open((dir / "p.db").string());
  const auto experiment = parse_experiment(
      R"({"name": "p", "repetitions": 3, "train_images": 100,
          "conditions": [{"name": "one", "launcher": "single"}]})",
      "p.json");
  const auto plans = expand_matrix(experiment, {"/opt/train", false});
  db::ExperimentRecord context;
  context.name = "p";
  context.source_path = "p.json";
  context.spec_json = experiment.spec_json;
  context.started_at = "2026-11-25T00:00:00Z";
  context.host = "h";
  FakeExecutor executor(script);
  std::ostringstream out, err;
  cli::ProgressPrinter printer(out, err, style);
  const auto outcome = run_experiment(experiment, plans, executor, database, context, &printer);
  CHECK(outcome.ok == ok_runs);
  return {out.str(), err.str()};
}

}  // namespace

TEST_CASE("progress as plain lines: first and last epoch, every 10 s between, time left") {
  const auto printed = run_with(cli::ProgressStyle::Lines);
  INFO(printed.err);
  // The first run cannot know the matrix's time: epochs 1, 11, 21 and 30.
  CHECK(printed.err.find("      epoch 1/30 at 0s\n      epoch 11/30 at 10s\n"
                         "      epoch 21/30 at 20s\n      epoch 30/30 at 29s\n") == 0);
  // Later runs know the mean run (31 s): at epoch 11 of run 2 there are 21 s of it and 31 s of
  // run 3 left.
  CHECK(printed.err.find("      epoch 11/30 at 10s; about 52s left in the matrix\n") !=
        std::string::npos);
  CHECK(printed.err.find("      epoch 30/30 at 29s; about 2s left in the matrix\n") !=
        std::string::npos);
  CHECK(printed.err.find('\r') == std::string::npos);  // no terminal controls in a log
  CHECK(printed.out.find("[2/3] one np=1 repetition 2: /opt/train") != std::string::npos);
  CHECK(printed.out.find("      ok in 31.00 s: 30 epochs") != std::string::npos);
}

TEST_CASE("progress on a terminal: one line rewritten in place, cleared before each result") {
  const auto printed = run_with(cli::ProgressStyle::Terminal);
  // Every epoch rewrites the line ...
  CHECK(printed.err.find("\r\x1b[K[1/3] one np=1: epoch 1/30, 0s elapsed\r\x1b[K[1/3] one np=1: "
                         "epoch 2/30, 1s elapsed") == 0);
  CHECK(printed.err.find("\r\x1b[K[3/3] one np=1: epoch 30/30, 29s elapsed; about 2s left in "
                         "the matrix\r\x1b[K") != std::string::npos);
  CHECK(printed.err.find('\n') == std::string::npos);  // never a new line of its own
  // ... and is erased before the run's result line goes to stdout.
  CHECK(printed.err.substr(printed.err.size() - 4) == "\r\x1b[K");
}

TEST_CASE("--quiet: no progress at all, the start and result lines stay") {
  const auto printed = run_with(cli::ProgressStyle::Quiet);
  CHECK(printed.err.empty());
  CHECK(printed.out.find("[3/3] one") != std::string::npos);
}

TEST_CASE("durations read as people write them") {
  CHECK(cli::format_duration(0.4) == "0s");
  CHECK(cli::format_duration(59.6) == "1m00s");
  CHECK(cli::format_duration(200) == "3m20s");
  CHECK(cli::format_duration(3725) == "1h02m");
  CHECK(cli::format_duration(-5) == "0s");
}

TEST_CASE("a failed run's reason shows the trainer's control and bidi characters as escapes") {
  // The trainer's last words: an ESC sequence and U+202E (RIGHT-TO-LEFT OVERRIDE).
  const auto failing = [](const LaunchSpec&) {
    FakeProcess p;
    p.lines.push_back({0.5, Stream::Stderr, "Error: bad \x1b[2Jthing \xE2\x80\xAEtxt"});
    p.exit_code = 1;
    p.duration_seconds = 1;
    return p;
  };
  const auto printed = run_with(cli::ProgressStyle::Lines, failing, 0);
  INFO(printed.out);
  CHECK(printed.out.find("\\u202etxt") != std::string::npos);
  CHECK(printed.out.find("\xE2\x80\xAE") == std::string::npos);
  CHECK_FALSE(test::has_raw_control(printed.out));
}
