// Any Keras-style trainer measured right (issue "Other people's trainers", item 1): the last
// epoch's end without our `Training done:` line, images per epoch from the experiment file,
// buffered output and disagreeing clocks refused, mid-line launcher tags repaired, and our
// trainer's np checked against the np it was launched for.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "orchestrator/line_parser.hpp"
#include "orchestrator/run_analysis.hpp"
#include "stamped_lines.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;

namespace {

constexpr std::int64_t kStart = 7'000'000'000;

StampedLine at(double seconds, std::string text, Stream stream = Stream::Stdout) {
  return test::stamped(kStart, seconds, std::move(text), stream);
}

bool has_problem(const RunAnalysis& analysis, const std::string& part) {
  return std::any_of(analysis.problems.begin(), analysis.problems.end(),
                     [&](const std::string& p) { return p.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("a Keras script: the last epoch ends at its end-of-epoch line, images from the file") {
  // What tf.keras's model.fit(verbose=2) prints: no header, no `Training done:`.
  const std::vector<StampedLine> lines = {
      at(0.40, "Epoch 1/2"),
      at(1.40, "469/469 - 1s - loss: 0.51 - accuracy: 0.82 - 1s/epoch - 2ms/step"),
      at(1.41, "Epoch 2/2"),
      at(2.61, "469/469 - 1s - loss: 0.38 - accuracy: 0.86 - 1s/epoch - 3ms/step"),
      at(2.90, "313/313 - 0s - loss: 0.40 - accuracy: 0.85"),  // evaluate(): after the epoch
  };
  RunExpectations expected;
  expected.train_images = 60000;
  const auto analysis = analyze_run(lines, kStart, {}, expected, 3.5);
  CHECK(analysis.problems.empty());
  CHECK(analysis.train_images == 60000);
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(1.01));
  CHECK(analysis.epochs[0].end_rule == "next_epoch");
  CHECK(*analysis.epochs[1].duration_seconds == doctest::Approx(1.20));
  CHECK(analysis.epochs[1].end_rule == "epoch_end_line");
  CHECK(*analysis.epochs[1].loss == doctest::Approx(0.38));
}

TEST_CASE("a script printing only `Epoch y/z`: the last line, else the exit ends the last epoch") {
  const auto with_tail =
      analyze_run({at(0.2, "Epoch 1/2"), at(1.2, "Epoch 2/2"), at(2.0, "saving the model")}, kStart,
                  {}, {}, 2.5);
  CHECK(with_tail.problems.empty());
  REQUIRE(with_tail.epochs.size() == 2);
  CHECK(with_tail.epochs[1].end_rule == "last_line");
  CHECK(*with_tail.epochs[1].duration_seconds == doctest::Approx(0.8));

  const auto bare = analyze_run({at(0.2, "Epoch 1/2"), at(1.2, "Epoch 2/2")}, kStart, {}, {}, 2.1);
  CHECK(bare.problems.empty());
  CHECK(bare.epochs[1].end_rule == "exit");
  CHECK(*bare.epochs[1].duration_seconds == doctest::Approx(0.9));

  // Without the exit time nothing ends the last epoch: a problem, never a made-up end.
  const auto unended = analyze_run({at(0.2, "Epoch 1/2"), at(1.2, "Epoch 2/2")}, kStart);
  CHECK(has_problem(unended, "the last epoch has no end"));
  CHECK_FALSE(unended.epochs[1].duration_seconds);
  CHECK_FALSE(unended.epochs[1].end_rule);
}

TEST_CASE("our trainer's `Training done:` still ends the last epoch first") {
  const auto analysis = analyze_run(
      {at(0.1, "scalebench-train model=mlp train_images=100 np=1"), at(0.2, "Epoch 1/1"),
       at(1.0, "2/2 - loss: 0.5 - accuracy: 0.5 - epoch_seconds: 0.79"),
       at(1.01, "Training done: epochs=1"), at(1.5, "bye")},
      kStart, {}, {1, 5000}, 2.0);
  CHECK(analysis.problems.empty());
  CHECK(analysis.epochs[0].end_rule == "training_done");
  CHECK(analysis.train_images == 100);  // the header wins over the file's figure
}

TEST_CASE("epoch lines that arrive in one burst are buffered output, not epochs") {
  // A block-buffered script: everything arrives at exit, microseconds apart.
  const std::vector<StampedLine> lines = {
      at(3.000000, "Epoch 1/3"), at(3.000010, "10/10 - loss: 0.9 - accuracy: 0.5"),
      at(3.000020, "Epoch 2/3"), at(3.000030, "10/10 - loss: 0.8 - accuracy: 0.6"),
      at(3.000040, "Epoch 3/3"), at(3.000050, "10/10 - loss: 0.7 - accuracy: 0.7")};
  const auto analysis = analyze_run(lines, kStart, {}, {}, 3.01);
  CHECK(has_problem(analysis, "the `Epoch` lines arrived in one burst"));
  CHECK(has_problem(analysis, "PYTHONUNBUFFERED=1"));
}

TEST_CASE("line-timed epochs far from the program's own clock are not trusted") {
  const std::vector<StampedLine> lines = {
      at(0.1, "Epoch 1/2"), at(1.1, "5/5 - loss: 0.5 - epoch_seconds: 1.0"),
      at(1.1, "Epoch 2/2"),                             // right: 1.0 s
      at(4.1, "5/5 - loss: 0.4 - epoch_seconds: 1.0"),  // 3.0 s by arrival, 1.0 s by its clock
      at(4.2, "Training done: epochs=2")};
  const auto analysis = analyze_run(lines, kStart);
  CHECK(has_problem(analysis,
                    "epoch 2: 3.100 s from line arrivals but 1.000 s by the program's own clock"));
  // Within the tolerance (0.25 s or 25 %) is fine: pipes and launchers add milliseconds.
  const auto close =
      analyze_run({at(0.1, "Epoch 1/1"), at(1.25, "5/5 - loss: 0.5 - epoch_seconds: 1.0"),
                   at(1.3, "Training done: epochs=1")},
                  kStart);
  CHECK(close.problems.empty());
}

TEST_CASE("our trainer reporting another np than the run was launched for is not ok") {
  // MPICH's hydra starting two copies of an Open MPI program: two np=1 trainings.
  const std::vector<StampedLine> lines = {
      at(0.1, "scalebench-train model=mlp train_images=100 np=1"),
      at(0.1, "scalebench-train model=mlp train_images=100 np=1"), at(0.2, "Epoch 1/1"),
      at(1.0, "Training done: epochs=1")};
  const auto analysis = analyze_run(lines, kStart, {}, {2, std::nullopt});
  CHECK(has_problem(analysis, "the trainer reports np=1 but the run was launched for np=2"));
  CHECK(std::count_if(analysis.problems.begin(), analysis.problems.end(), [](const auto& p) {
          return p.find("reports np=") != std::string::npos;
        }) == 1);
  CHECK(analyze_run(lines, kStart, {}, {1, std::nullopt}).problems.empty());
}

TEST_CASE("an Open MPI tag in mid-line is a chunk boundary, removed") {
  CHECK(remove_embedded_tags("Epoch 2/3[1,0]<stdout>:") == "Epoch 2/3");
  CHECK(remove_embedded_tags("Epo[1,0]<stdout>:ch 2/3") == "Epoch 2/3");
  CHECK(remove_embedded_tags("a[ns@3,12]<stderr>: b[1,2]<stdout>:c") == "abc");
  // Brackets that are not Open MPI tags stay text.
  CHECK(remove_embedded_tags("x[0]<stdout>:y") == "x[0]<stdout>:y");
  CHECK(remove_embedded_tags("[a,b]<stdout>:y") == "[a,b]<stdout>:y");
  CHECK(remove_embedded_tags("loss: [0.5, 0.4]") == "loss: [0.5, 0.4]");
  CHECK(remove_embedded_tags("") == "");

  // What `mpirun --tag-output python -u` gives: `Epoch` lines with a tag where the newline
  // was written.
  const std::vector<StampedLine> lines = {at(0.2, "[1,0]<stdout>:Epoch 1/2[1,0]<stdout>:"),
                                          at(1.2, "[1,0]<stdout>:Epoch 2/2[1,0]<stdout>:"),
                                          at(2.2, "[1,0]<stdout>:2/2 - loss: 0.5[1,0]<stdout>:")};
  const auto analysis = analyze_run(lines, kStart, {}, {}, 2.3);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(analysis.epochs[1].end_rule == "epoch_end_line");
  CHECK(analysis.lines[0].text == "Epoch 1/2");
  CHECK(analysis.lines[0].rank == 0);
}

TEST_CASE("Keras's time item is the program's own epoch clock, val_accuracy its test accuracy") {
  const auto whole =
      parse_epoch_end("469/469 - 3s - loss: 0.5 - accuracy: 0.8 - val_accuracy: 0.7");
  REQUIRE(whole);
  CHECK(whole->epoch_seconds == 3.0);
  CHECK(whole->epoch_seconds_resolution == 0.5);
  CHECK(whole->test_accuracy == 0.7);
  const auto step = parse_epoch_end("469/469 [====] - 12s 25ms/step - loss: 0.5 - val_loss: 0.6");
  REQUIRE(step);
  CHECK(step->epoch_seconds == 12.0);
  CHECK_FALSE(step->test_accuracy);
  // examples/torch_ddp_train.py prints milliseconds.
  const auto fine = parse_epoch_end("16/16 - 3.214s - loss: 2.2 - accuracy: 0.1");
  REQUIRE(fine);
  CHECK(fine->epoch_seconds == doctest::Approx(3.214));
  CHECK(fine->epoch_seconds_resolution == doctest::Approx(0.0005));
  // Our own keys win over Keras's; items that only look like times are not times.
  const auto ours = parse_epoch_end(
      "5/5 - 3s - loss: 0.5 - test_accuracy: 0.9 - val_accuracy: 0.1 - epoch_seconds: 2.5");
  REQUIRE(ours);
  CHECK(ours->epoch_seconds == 2.5);
  CHECK(ours->epoch_seconds_resolution == 0.0);
  CHECK(ours->test_accuracy == 0.9);
  for (const char* line :
       {"5/5 - 1s/epoch - loss: 0.5", "5/5 - s - loss: 0.5", "5/5 - -3s - loss: 0.5",
        "5/5 - 3ms/step - loss: 0.5", "5/5 - .5s - loss: 0.5"}) {
    INFO(line);
    const auto end = parse_epoch_end(line);
    REQUIRE(end);
    CHECK_FALSE(end->epoch_seconds);
  }
}

TEST_CASE("a whole-second Keras time is checked within its rounding") {
  // 0.6 s by arrival, printed as "1s": 0.4 s apart, but within the 0.5 s of rounding.
  const auto rounded =
      analyze_run({at(0.1, "Epoch 1/1"), at(0.7, "5/5 - 1s - loss: 0.5")}, kStart, {}, {}, 0.8);
  CHECK(rounded.problems.empty());
  REQUIRE(rounded.epochs.size() == 1);
  CHECK(rounded.epochs[0].trainer_seconds == 1.0);
  // 3.1 s by arrival against "1s": beyond rounding and tolerance.
  const auto late =
      analyze_run({at(0.1, "Epoch 1/1"), at(3.2, "5/5 - 1s - loss: 0.5")}, kStart, {}, {}, 3.3);
  CHECK(has_problem(late, "epoch 1: 3.100 s from line arrivals but 1.000 s"));
}
