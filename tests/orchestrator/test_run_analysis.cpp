#include <doctest/doctest.h>

#include <cmath>

#include "orchestrator/run_analysis.hpp"

using namespace scalebench::orchestrator;

namespace {

constexpr std::int64_t kStart = 5'000'000'000;

StampedLine at(double seconds, std::string text, Stream stream = Stream::Stdout) {
  const auto ns = kStart + static_cast<std::int64_t>(std::llround(seconds * 1e9));
  return StampedLine{ns, ns, stream, std::move(text)};
}

}  // namespace

TEST_CASE("epoch rule: first `Epoch y/z` of any rank, last epoch ends at Training done") {
  const std::vector<StampedLine> lines = {
      at(0.10, "[1,0]<stdout>:scalebench-train model=mlp train_images=1000 np=2"),
      at(0.50, "[1,1]<stdout>:Epoch 1/3"),  // rank 1 first: any rank counts
      at(0.52, "[1,0]<stdout>:Epoch 1/3"),
      at(1.40, "[1,0]<stdout>:10/10 - loss: 0.9 - accuracy: 0.5 - epoch_seconds: 0.899"),
      at(1.50, "[1,0]<stdout>:Epoch 2/3"),
      at(1.60, "[1,1]<stderr>:some warning"),
      at(2.25, "[1,1]<stdout>:Epoch 2/3"),  // a late duplicate does not move the start
      at(2.70, "[1,0]<stdout>:10/10 - loss: 0.5 - accuracy: 0.7 - epoch_seconds: 1.2"),
      at(2.75, "[1,0]<stdout>:Epoch 3/3"),
      at(3.70, "[1,0]<stdout>:10/10 - loss: 0.4 - accuracy: 0.8 - epoch_seconds: 0.95"),
      at(3.75, "[1,0]<stdout>:Training done: epochs=3 seconds=3.25"),
  };
  const auto analysis = analyze_run(lines, kStart);
  CHECK(analysis.problems.empty());
  CHECK(analysis.total_epochs == 3);
  CHECK(analysis.train_images == 1000);
  CHECK(*analysis.startup_seconds == doctest::Approx(0.5));
  REQUIRE(analysis.epochs.size() == 3);
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(1.0));
  CHECK(*analysis.epochs[1].duration_seconds == doctest::Approx(1.25));
  CHECK(*analysis.epochs[2].duration_seconds == doctest::Approx(1.0));
  CHECK(analysis.epochs[1].start_offset_seconds == doctest::Approx(1.5));
  CHECK(*analysis.epochs[0].trainer_seconds == doctest::Approx(0.899));
  CHECK(*analysis.epochs[1].loss == doctest::Approx(0.5));
  CHECK(*analysis.epochs[2].accuracy == doctest::Approx(0.8));

  REQUIRE(analysis.lines.size() == lines.size());
  CHECK(analysis.lines[5].stream == "stderr");
  CHECK(analysis.lines[5].rank == 1);
  CHECK(analysis.lines[5].text == "some warning");
  CHECK(analysis.lines[5].seq == 5);
  CHECK(analysis.lines[5].offset_seconds == doctest::Approx(1.6));
}

TEST_CASE("a run that dies mid-epoch: that epoch has no duration and the run is incomplete") {
  const std::vector<StampedLine> lines = {at(0.2, "Epoch 1/3"), at(1.2, "Epoch 2/3"),
                                          at(1.9, "Traceback: boom", Stream::Stderr)};
  const auto analysis = analyze_run(lines, kStart);
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(1.0));
  CHECK(!analysis.epochs[1].duration_seconds);
  REQUIRE(analysis.problems.size() == 2);
  CHECK(analysis.problems[0] == "no `Epoch 3/3` line");
}

TEST_CASE("no epochs at all, garbage and empty lines") {
  const std::vector<StampedLine> lines = {at(0.1, ""), at(0.2, "\xff\xfe garbage"),
                                          at(0.3, "[1,0]<stdout>:"), at(0.4, "Epoch 9/3")};
  const auto analysis = analyze_run(lines, kStart);
  CHECK(analysis.epochs.empty());
  CHECK(!analysis.startup_seconds);
  CHECK(analysis.problems == std::vector<std::string>{"no `Epoch y/z` line"});
  CHECK(analysis.lines[1].text == "\xEF\xBF\xBD\xEF\xBF\xBD garbage");
  CHECK(analysis.lines[2].text.empty());
  CHECK(analysis.lines[2].rank == 0);
}

TEST_CASE("an epoch count that changes mid-run is reported, not trusted") {
  const std::vector<StampedLine> lines = {at(0.1, "Epoch 1/2"), at(1.1, "Epoch 2/5"),
                                          at(2.1, "Epoch 2/2"), at(3.1, "Training done: epochs=2")};
  const auto analysis = analyze_run(lines, kStart);
  REQUIRE(analysis.problems.size() == 1);
  CHECK(analysis.problems[0].find("`Epoch 2/5` disagrees with 2 epochs") != std::string::npos);
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(2.0));
}
