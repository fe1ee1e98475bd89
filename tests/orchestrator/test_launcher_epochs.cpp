// Every epoch right under every launcher (issue 34): progress bars dated by their first byte when
// a launcher tags each chunk (mpirun --tag-output, scalebench-tag under torchrun), interleaved
// ranks each keeping their own first byte, a rank's two streams joined, untagged every-rank end
// lines, the clock checks that name the rule they could not apply, and the framework forms in
// their defaults (Hugging Face per-step logging, Lightning's end line and val_acc).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "orchestrator/experiment.hpp"
#include "orchestrator/line_forms.hpp"
#include "orchestrator/run_analysis.hpp"
#include "orchestrator/tag_output.hpp"
#include "stamped_lines.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;

namespace {

constexpr std::int64_t kStart = 5'000'000'000;

std::int64_t ns(double seconds) { return kStart + static_cast<std::int64_t>(seconds * 1e9); }

StampedLine at(double seconds, std::string text, Stream stream = Stream::Stdout) {
  return test::stamped(kStart, seconds, std::move(text), stream);
}

// One physical line whose pieces arrived at the given times (as ProcessExecutor stamps it): the
// first piece's arrival is the line's first byte, each later one an arrival mark, the newline
// with the last.
StampedLine pieces(const std::vector<std::pair<double, std::string>>& parts,
                   Stream stream = Stream::Stdout) {
  StampedLine line;
  line.stream = stream;
  line.first_byte_ns = ns(parts.front().first);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) line.arrivals.push_back({line.text.size(), ns(parts[i].first)});
    line.text += parts[i].second;
  }
  line.monotonic_ns = line.wall_ns = ns(parts.back().first);
  return line;
}

std::string bar(int epoch, int percent) {
  return "\rEpoch " + std::to_string(epoch) + "/3: " + std::to_string(percent) +
         "%|#####     | 3/6 [00:00<00:00, 19.7it/s, loss=0.5]";
}

bool has_problem(const RunAnalysis& analysis, const std::string& part) {
  for (const auto& problem : analysis.problems)
    if (problem.find(part) != std::string::npos) return true;
  return false;
}

RunExpectations form(const std::string& name, std::optional<int> np = std::nullopt) {
  RunExpectations expected;
  expected.line_forms = line_forms_named(name);
  expected.np = np;
  return expected;
}

}  // namespace

TEST_CASE("line splitter: a line's later chunks are marked where they begin and when") {
  LineSplitter splitter;
  std::vector<std::string> lines;
  std::vector<std::int64_t> started;
  std::vector<std::vector<ByteArrival>> arrivals;
  splitter.feed("[1,0]<stdout>:Epoch 1", lines, &started, 100, &arrivals);
  splitter.feed("[1,0]<stdout>:\rEpoch 1 50%", lines, &started, 200, &arrivals);
  splitter.feed("!\nnext", lines, &started, 300, &arrivals);
  REQUIRE(lines.size() == 1);
  CHECK(started == std::vector<std::int64_t>{100});
  REQUIRE(arrivals.size() == 1);
  REQUIRE(arrivals[0].size() == 2);
  CHECK(arrivals[0][0].offset == 21);
  CHECK(arrivals[0][0].ns == 200);
  CHECK(arrivals[0][1].offset == lines[0].size() - 1);
  CHECK(arrivals[0][1].ns == 300);
  // The rest began with the last chunk, with no mark of its own yet.
  CHECK(splitter.pending_since() == 300);
  CHECK(splitter.take_pending_arrivals().empty());
}

TEST_CASE("mpirun: a progress bar redrawn in tagged chunks starts its epoch at its first byte") {
  // Under mpirun --tag-output every redraw is its own write, so its own tag: the physical line
  // is `[1,0]<stdout>:<bar 0%>[1,0]<stdout>:\r<bar 50%>...` and its newline comes at the end of
  // the epoch. Each epoch begins when its bar's first chunk arrived.
  std::vector<StampedLine> lines;
  for (int epoch = 1; epoch <= 3; ++epoch) {
    const double begin = 0.2 + 0.5 * (epoch - 1);
    lines.push_back(pieces({{begin, "[1,0]<stdout>:" + bar(epoch, 0)},
                            {begin + 0.2, "[1,0]<stdout>:" + bar(epoch, 50)},
                            {begin + 0.49, "[1,0]<stdout>:" + bar(epoch, 100)}}));
  }
  lines.push_back(at(1.75, "[1,0]<stdout>:done"));
  const auto analysis = analyze_run(lines, kStart, {}, form("tqdm", 1), 1.8);
  INFO(analysis.problems.size());
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 3);
  for (const auto& epoch : analysis.epochs) {
    CAPTURE(epoch.epoch);
    CHECK(epoch.start_offset_seconds == doctest::Approx(0.2 + 0.5 * (epoch.epoch - 1)));
  }
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(0.5));
  CHECK(*analysis.epochs[2].duration_seconds == doctest::Approx(0.55));  // to the last line
  CHECK(analysis.epochs[0].loss == doctest::Approx(0.5));
}

TEST_CASE("mpirun: interleaved ranks' bars each keep their own first byte, across lines") {
  // Rank 0's bar and rank 1's interleave in one physical line that rank 0's newline ends; rank
  // 1's line goes on in the next physical line. Rank 1 began epoch 2 when its first chunk came.
  const auto bar2 = [](int epoch, const char* state) {
    return std::string("\rEpoch ") + std::to_string(epoch) + "/2: " + state + "|###  | 3/6";
  };
  const std::vector<StampedLine> lines = {
      at(0.10, "[1,0]<stdout>:" + bar2(1, "100%")),
      at(0.11, "[1,1]<stdout>:" + bar2(1, "100%")),
      pieces({{0.60, "[1,0]<stdout>:" + bar2(2, "0%")},
              {0.64, "[1,1]<stdout>:" + bar2(2, "0%")},
              {0.90, "[1,0]<stdout>:" + bar2(2, "100%")}}),
      pieces({{1.00, "[1,1]<stdout>:" + bar2(2, "100%")}}),
      at(1.10, "[1,0]<stdout>:Training done: epochs=2"),
  };
  const auto analysis = analyze_run(lines, kStart, {}, form("tqdm", 2), 1.2);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(analysis.epochs[1].start_offset_seconds == doctest::Approx(0.60));
  // Each rank's end of epoch 1 is its own start of epoch 2: rank 1's first chunk at 0.64, not
  // the newline that completed its line at 1.00.
  REQUIRE(analysis.epochs[0].rank_ends.size() == 2);
  CHECK(analysis.epochs[0].rank_ends[0].end_offset_seconds == doctest::Approx(0.60));
  CHECK(analysis.epochs[0].rank_ends[1].end_offset_seconds == doctest::Approx(0.64));
}

TEST_CASE("a rank's two streams are one: an epoch begun on stdout ends on stderr") {
  // tqdm writes to stderr, print() to stdout: the end line and its metrics on the other stream
  // of the same rank end the rank's epoch (scalebench-tag tags both streams).
  const std::vector<StampedLine> lines = {
      at(0.1, "[1,0]<stdout>:Epoch 1/2"),
      at(0.1, "[1,1]<stdout>:Epoch 1/2"),
      at(0.6, "[1,0]<stdout>:Epoch 2/2"),
      at(0.6, "[1,1]<stdout>:Epoch 2/2"),
      at(1.1, "[1,1]<stderr>:6/6 - 0.500s - loss: 0.4000 - accuracy: 0.8000"),
      at(1.2, "[1,0]<stderr>:6/6 - 0.600s - loss: 0.3000 - accuracy: 0.9000"),
      at(1.5, "[1,0]<stdout>:evaluating"),
  };
  const auto analysis = analyze_run(lines, kStart, {}, {}, 1.6);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(analysis.epochs[1].end_rule == "epoch_end_line");
  CHECK(*analysis.epochs[1].duration_seconds == doctest::Approx(0.6));  // the last rank's
  CHECK(analysis.epochs[1].loss == doctest::Approx(0.4));               // the first end line's
}

TEST_CASE("untagged every-rank output: the last epoch ends at the last rank's end line") {
  // Two ranks print Keras-2 lines with no tag (a launcher that cannot tag): a slower rank's end
  // line of epoch 2 arrives after the faster rank began epoch 3. It is epoch 2's, and epoch 3
  // ends at the second end line, not the first.
  std::vector<StampedLine> lines = {at(0.000, "Epoch 1/3"), at(0.004, "Epoch 1/3")};
  for (int epoch = 1; epoch <= 3; ++epoch) {
    const double end = 0.5 * epoch;
    lines.push_back(at(end, "6/6 - 0s - loss: 0.5000 - accuracy: 0.8000"));
    if (epoch < 3) lines.push_back(at(end + 0.0001, "Epoch " + std::to_string(epoch + 1) + "/3"));
    lines.push_back(at(end + 0.004, "6/6 - 0s - loss: 0.5000 - accuracy: 0.8000"));
    if (epoch < 3) lines.push_back(at(end + 0.0041, "Epoch " + std::to_string(epoch + 1) + "/3"));
  }
  RunExpectations expected;
  expected.np = 2;
  const auto analysis = analyze_run(lines, kStart, {}, expected, 1.6);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 3);
  CHECK(analysis.epochs[2].end_rule == "epoch_end_line");
  CHECK(*analysis.epochs[2].duration_seconds == doctest::Approx(1.504 - 1.0001));
}

TEST_CASE("untagged: every rank prints `Epoch`, rank 0 alone its end lines: each epoch its own") {
  // Both ranks' markers, one end line per epoch at the epoch's end: an end line in the second
  // half of an epoch is that epoch's, not a slower rank's line of the previous one.
  std::vector<StampedLine> lines;
  for (int epoch = 1; epoch <= 3; ++epoch) {
    const double begin = 0.5 * (epoch - 1);
    const auto marker = "Epoch " + std::to_string(epoch) + "/3";
    lines.push_back(at(begin, marker));
    lines.push_back(at(begin + 0.002, marker));
    lines.push_back(
        at(begin + 0.49, "6/6 - 0s - loss: 0." + std::to_string(epoch) + "000 - accuracy: 0.8000"));
  }
  RunExpectations expected;
  expected.np = 2;
  const auto analysis = analyze_run(lines, kStart, {}, expected, 1.6);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 3);
  for (const auto& epoch : analysis.epochs) {
    CAPTURE(epoch.epoch);
    CHECK(epoch.loss == doctest::Approx(0.1 * epoch.epoch));
  }
  CHECK(analysis.epochs[2].end_rule == "epoch_end_line");
  CHECK(*analysis.epochs[2].duration_seconds == doctest::Approx(0.49));
}

TEST_CASE("untagged every-rank output that cannot be told apart says so by name") {
  // Each rank's Keras time item disagrees with the line-timed epochs because the ranks' lines are
  // mixed: the problem names the cause, not "did not arrive as printed".
  const std::vector<StampedLine> lines = {
      at(0.0, "Epoch 1/2"),
      at(0.0, "Epoch 1/2"),
      at(0.2, "Epoch 2/2"),
      at(2.0, "32/32 - 2.000s - loss: 0.5"),
      at(2.2, "Epoch 2/2"),
      at(4.0, "32/32 - 2.000s - loss: 0.4"),
      at(4.2, "32/32 - 2.000s - loss: 0.4"),
  };
  RunExpectations expected;
  expected.np = 2;
  const auto analysis = analyze_run(lines, kStart, {}, expected, 4.3);
  CHECK(has_problem(analysis, "untagged every-rank output"));
  CHECK_FALSE(has_problem(analysis, "did not arrive as they were printed"));
}

TEST_CASE("a last epoch under a fifth of the others is not measured right, and says its rule") {
  // A form whose start line is printed when the epoch's work is done (a summary line taken for
  // a start): every epoch is shifted, and the last one is a sliver ending at the run's last line.
  std::vector<StampedLine> lines;
  for (int epoch = 1; epoch <= 3; ++epoch)
    lines.push_back(at(0.5 * epoch, "epoch " + std::to_string(epoch) + " done"));
  lines.push_back(at(1.51, "saving"));
  RunExpectations expected;
  LineFormPatterns patterns;
  patterns.epoch_start = R"(^epoch (?<epoch>\d+) done)";
  patterns.total_epochs = 3;
  expected.line_forms = line_forms_from_patterns(nullptr, patterns);
  const auto analysis = analyze_run(lines, kStart, {}, expected, 1.52);
  CHECK(has_problem(analysis, "epoch 3 (the last) lasted 0.010 s by the rule `last_line`"));

  // A first epoch of warm-up (torch.compile, autotuning) is not what the last one is measured
  // against: 6 s, then 1 s epochs.
  const std::vector<StampedLine> warm = {at(0.0, "Epoch 1/3"), at(6.0, "Epoch 2/3"),
                                         at(7.0, "Epoch 3/3"), at(8.0, "saved")};
  CHECK(analyze_run(warm, kStart, {}, {}, 8.1).problems.empty());

  // The same shape with the program's own clock confirming the short epoch is what happened.
  const std::vector<StampedLine> confirmed = {
      at(0.0, "Epoch 1/2"), at(1.0, "Epoch 2/2"),
      at(1.1, "10/10 - loss: 0.5 - accuracy: 0.9 - epoch_seconds: 0.1")};
  CHECK(analyze_run(confirmed, kStart, {}, {}, 1.2).problems.empty());
}

TEST_CASE("a progress bar's start with no first-byte time says the rule was not applied") {
  StampedLine undated = at(0.5, bar(1, 0) + bar(1, 100));
  undated.first_byte_ns = 0;  // an executor that did not say when the line began
  const std::vector<StampedLine> lines = {undated, at(1.0, bar(2, 0) + bar(2, 100)),
                                          at(1.5, bar(3, 0) + bar(3, 100))};
  const auto analysis = analyze_run(lines, kStart, {}, form("tqdm"), 1.6);
  CHECK(has_problem(analysis,
                    "line 0: epoch 1 starts at a progress bar's line, but when its "
                    "first byte arrived is unknown"));
}

TEST_CASE("hf-trainer: per-step logging stores each loss with the epoch its 'epoch' is in") {
  // Trainer's defaults: a log dict every logging_steps with a fractional 'epoch', evaluation per
  // epoch (`'epoch': N.0` ends epoch N). The loss at 1.33 and 1.67 is epoch 2's.
  const std::vector<StampedLine> lines = {
      at(0.3, "{'loss': 0.9, 'grad_norm': 1.0, 'learning_rate': 4e-05, 'epoch': 0.33}"),
      at(0.6, "{'loss': 0.8, 'grad_norm': 1.0, 'learning_rate': 3e-05, 'epoch': 0.67}"),
      at(0.9, "{'eval_loss': 0.7, 'eval_accuracy': 0.71, 'eval_runtime': 0.01, 'epoch': 1.0}"),
      at(1.2, "{'loss': 0.6, 'grad_norm': 1.0, 'learning_rate': 2e-05, 'epoch': 1.33}"),
      at(1.5, "{'loss': 0.5, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 1.67}"),
      at(1.8, "{'eval_loss': 0.4, 'eval_accuracy': 0.81, 'eval_runtime': 0.01, 'epoch': 2.0}"),
      at(1.9, "{'train_runtime': 1.9, 'train_loss': 0.7, 'epoch': 2.0}"),
  };
  const auto analysis = analyze_run(lines, kStart, {}, form("hf-trainer"), 2.0);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(analysis.epochs[0].loss == doctest::Approx(0.8));
  CHECK(analysis.epochs[1].loss == doctest::Approx(0.5));
  CHECK(analysis.epochs[0].test_accuracy == doctest::Approx(0.71));
  CHECK(analysis.epochs[1].test_accuracy == doctest::Approx(0.81));
  CHECK(*analysis.epochs[1].duration_seconds == doctest::Approx(0.9));
}

TEST_CASE(
    "lightning: fit's end line ends the last epoch before trainer.test(), val_acc stored apart") {
  const std::vector<StampedLine> lines = {
      at(0.5, "\rEpoch 0:  50%|###  | 3/6\rEpoch 0: 100%|#####| 6/6 [v_num=0, train_loss=0.500]"),
      at(1.0,
         "\rEpoch 1: 100%|#####| 6/6 [v_num=0, train_loss=0.400, val_loss=0.8, "
         "val_acc=0.600]"),
      at(1.5,
         "\rEpoch 2: 100%|#####| 6/6 [v_num=0, train_loss=0.300, val_loss=0.7, "
         "val_acc=0.700]"),
      at(1.85,
         "\rEpoch 2: 100%|#####| 6/6 [v_num=0, train_loss=0.300, val_loss=0.6, "
         "val_acc=0.750]"),
      at(1.9, "`Trainer.fit` stopped: `max_epochs=3` reached.", Stream::Stderr),
      at(2.6, "Testing DataLoader 0: 100%|#####| 2/2"),
      at(2.7, "│         test_acc          │    0.7200000286102295     │"),
  };
  const auto analysis = analyze_run(lines, kStart, {}, form("lightning"), 2.8);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 3);
  CHECK(analysis.epochs[2].end_rule == "epoch_end_line");
  CHECK(*analysis.epochs[2].duration_seconds == doctest::Approx(0.4));
  CHECK(analysis.epochs[0].validation_accuracy == doctest::Approx(0.6));
  CHECK(analysis.epochs[1].validation_accuracy == doctest::Approx(0.7));
  CHECK(analysis.epochs[2].validation_accuracy == doctest::Approx(0.75));
  CHECK_FALSE(analysis.epochs[1].test_accuracy);
  CHECK(analysis.epochs[2].test_accuracy == doctest::Approx(0.72));  // what the script printed
}

TEST_CASE("scalebench-tag's writes: Open MPI's tag per chunk and per line, each write whole") {
  CHECK(tagged_writes(3, Stream::Stdout, "") == std::vector<std::string>{});
  CHECK(tagged_writes(3, Stream::Stdout, "\rEpoch 1: 50%") ==
        std::vector<std::string>{"[1,3]<stdout>:\rEpoch 1: 50%"});
  CHECK(tagged_writes(0, Stream::Stderr, "a\nb\n") ==
        std::vector<std::string>{"[1,0]<stderr>:a\n[1,0]<stderr>:b\n"});
  // A long chunk: every write at most PIPE_BUF and starting with a tag; joined, the text.
  const std::string long_line(10'000, 'x');
  const auto writes = tagged_writes(1, Stream::Stdout, long_line + "\n");
  REQUIRE(writes.size() == 3);
  std::string joined;
  for (const auto& write : writes) {
    CHECK(write.size() <= kAtomicWriteBytes);
    CHECK(write.starts_with("[1,1]<stdout>:"));
    joined += write.substr(14);
  }
  CHECK(joined == long_line + "\n");
  // Read back as a line, it is the rank's line with its chunks joined.
  std::string physical;
  for (const auto& write : writes) physical += write;
  physical.pop_back();
  const auto analysis = analyze_run({at(0.1, physical)}, kStart);
  REQUIRE(analysis.lines.size() == 1);
  CHECK(analysis.lines[0].rank == 1);
  CHECK(analysis.lines[0].text == long_line);
}

TEST_CASE("a user's line form takes every metric name, validation_accuracy and images/s too") {
  const auto experiment = parse_experiment(
      R"json({"name": "m", "program": "/bin/true", "line_forms": {"epoch_start": "^E (?<epoch>\\d+)",
        "metrics": {"validation_accuracy": "va=(?<value>[0-9.]+)",
                    "images_per_second": "ips=(?<value>[0-9.]+)"}},
        "conditions": [{"name": "c", "launcher": "single"}]})json",
      "exp.json");
  REQUIRE(experiment.line_forms);
  const auto match = match_line_forms(*experiment.line_forms, "va=0.5 ips=1200");
  // In the file's keys' order as read (nlohmann::json sorts them).
  CHECK(match.metrics == std::vector<std::pair<std::string, double>>{{"images_per_second", 1200.0},
                                                                     {"validation_accuracy", 0.5}});
}
