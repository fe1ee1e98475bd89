// Every script measured right (issue 22, items 1 and 2): progress bars read as a terminal shows
// them (Keras 3's `━` bar redrawn with \b and \r in colour, Keras 2's `[====]`), intermediate
// steps never taken for an epoch's end, and with every rank printing a rank's end line ends only
// its own epoch; the run's last epoch ends with the last rank.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "orchestrator/line_parser.hpp"
#include "orchestrator/run_analysis.hpp"
#include "stamped_lines.hpp"
#include "util/terminal.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;

namespace {

constexpr std::int64_t kStart = 3'000'000'000;

StampedLine at(double seconds, std::string text) {
  return test::stamped(kStart, seconds, std::move(text));
}

// One redraw of Keras 3's Progbar (keras/src/utils/progbar.py, verbose=1, dynamic display):
// backspaces over the previous width, \r, the bold count, the green and grey bar, the time and
// the metrics, padded with spaces to the previous width.
std::string keras3_frame(int current, int target, const std::string& time,
                         const std::string& metrics, std::size_t previous_width) {
  const int done = 20 * current / target;
  std::string bar;
  for (int i = 0; i < done; ++i) bar += "━";
  std::string rest;
  for (int i = done; i < 20; ++i) rest += "━";
  const std::string count = std::to_string(current) + "/" + std::to_string(target);
  std::string frame = std::string(previous_width, '\b') + "\r" + "\x1b[1m" + count + "\x1b[0m ";
  if (done > 0) frame += "\x1b[32m" + bar + "\x1b[0m";
  frame += "\x1b[37m" + rest + "\x1b[0m";
  frame += " \x1b[1m" + time + "\x1b[0m 82ms/step" + metrics;
  return frame;
}

// A whole Keras 3 epoch line: six redraws with ETAs, the last one finalized (elapsed time and
// the validation metrics), as one line of ~1 KB.
std::string keras3_epoch_line(const std::string& elapsed, const std::string& final_metrics) {
  std::string line;
  std::size_t width = 0;
  for (int step = 1; step <= 6; ++step) {
    const std::string metrics = " - accuracy: 0.51" + std::to_string(step) + " - loss: 1.2345";
    line += keras3_frame(step, 6, std::to_string(6 - step) + "s", metrics, width);
    width = 60 + metrics.size();
  }
  line += keras3_frame(6, 6, elapsed, final_metrics, width) + "   ";
  return line;
}

}  // namespace

TEST_CASE("progress bars: Keras 3's finished epoch line is an end line, its steps are not") {
  const std::string line =
      keras3_epoch_line("4s",
                        " - accuracy: 0.8123 - loss: 0.5000 - val_accuracy: 0.8500 - "
                        "val_loss: 0.4100");
  // The raw line does not parse: the terminal's view of it does.
  const auto end = parse_epoch_end(util::terminal_view(line));
  REQUIRE(end);
  CHECK(*end->loss == doctest::Approx(0.5));
  CHECK(*end->accuracy == doctest::Approx(0.8123));
  CHECK(*end->test_accuracy == doctest::Approx(0.85));
  CHECK(*end->epoch_seconds == doctest::Approx(4.0));
  CHECK(end->epoch_seconds_resolution == doctest::Approx(0.5));
  // Keras 3 verbose=2 and tf.keras forms.
  const auto two = parse_epoch_end("43/43 - 4s - 82ms/step - accuracy: 0.7 - loss: 0.9");
  REQUIRE(two);
  CHECK(*two->epoch_seconds == doctest::Approx(4.0));
  CHECK(parse_epoch_end("469/469 [==============================] - 3s 6ms/step - loss: 0.5"));
  CHECK(parse_epoch_end("43/43 ━━━━━━━━━━━━━━━━━━━━ 1s 2ms/step - loss: 0.5"));
  // Steps in between, printed on lines of their own where the bar is not redrawn in place:
  CHECK_FALSE(parse_epoch_end("12/43 ━━━━━━━━━━━━━━━━━━━━ 3s 82ms/step - loss: 0.9"));
  CHECK_FALSE(parse_epoch_end("  1/469 [..............................] - ETA: 3:02 - loss: 2.3"));
  CHECK_FALSE(parse_epoch_end("469/469 [==============================] - ETA: 0s - loss: 2.3"));
  // Anything else between the count and the values is not Keras's.
  CHECK_FALSE(parse_epoch_end("43/43 done - loss: 0.5"));
  CHECK_FALSE(parse_epoch_end("43/43 ━━━━ 4s 82ms/step extra - loss: 0.5"));
}

TEST_CASE("progress bars: a Keras 3 run is measured from its redrawn lines") {
  // model.fit(verbose=1) into a pipe (Keras 3 redraws even there), then model.evaluate.
  const std::string metrics = " - accuracy: 0.8 - loss: 0.5 - val_accuracy: 0.85 - val_loss: 0.4";
  const std::vector<StampedLine> lines = {
      at(0.5, "Epoch 1/3"),
      at(2.5, keras3_epoch_line("2s", metrics)),
      at(2.51, "Epoch 2/3"),
      at(4.5, keras3_epoch_line("2s", metrics)),
      at(4.51, "Epoch 3/3"),
      at(6.5, keras3_epoch_line("2s", metrics)),
      at(7.9, keras3_epoch_line("1s", " - accuracy: 0.86 - loss: 0.39")),  // evaluate
  };
  const auto analysis = analyze_run(lines, kStart, {}, {}, 8.0);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 3);
  CHECK(*analysis.epochs[2].duration_seconds == doctest::Approx(1.99));  // not to evaluate's end
  CHECK(analysis.epochs[2].end_rule == "epoch_end_line");
  for (const auto& epoch : analysis.epochs) {
    CHECK(*epoch.loss == doctest::Approx(0.5));
    CHECK(*epoch.test_accuracy == doctest::Approx(0.85));
  }
  // The stored text is what the program wrote.
  CHECK(analysis.lines[1].text.find('\b') != std::string::npos);
}

TEST_CASE("every rank printing: a rank's end line never ends another rank's epoch") {
  // The DDP script without a rank-0 guard under mpirun -np 2: rank 1 runs 0.2 s behind in its
  // printing; its end line for epoch 2 arrives after rank 0 began epoch 3.
  const std::vector<StampedLine> lines = {
      at(0.10, "[1,0]<stdout>:Epoch 1/3"),
      at(0.12, "[1,1]<stdout>:Epoch 1/3"),
      at(1.10, "[1,0]<stdout>:10/10 - 1s - loss: 0.9"),
      at(1.11, "[1,0]<stdout>:Epoch 2/3"),
      at(1.30, "[1,1]<stdout>:10/10 - 1s - loss: 0.9"),
      at(1.31, "[1,1]<stdout>:Epoch 2/3"),
      at(2.10, "[1,0]<stdout>:10/10 - 1s - loss: 0.7"),
      at(2.11, "[1,0]<stdout>:Epoch 3/3"),
      at(2.30, "[1,1]<stdout>:10/10 - 1s - loss: 0.7"),  // rank 1's epoch 2, not epoch 3
      at(2.31, "[1,1]<stdout>:Epoch 3/3"),
      at(3.10, "[1,0]<stdout>:10/10 - 1s - loss: 0.5"),
      at(3.32, "[1,1]<stdout>:10/10 - 1s - loss: 0.5"),
      at(3.50, "[1,0]<stdout>:saving"),
  };
  const auto analysis = analyze_run(lines, kStart, {}, {}, 3.6);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 3);
  // The last epoch ends with the last rank's end line (3.32), not rank 1's epoch-2 line (2.30).
  CHECK(*analysis.epochs[2].duration_seconds == doctest::Approx(3.32 - 2.11));
  CHECK(analysis.epochs[2].end_rule == "epoch_end_line");
  // Per-rank ends, so that the straggler shows.
  REQUIRE(analysis.epochs[2].rank_ends.size() == 2);
  CHECK(analysis.epochs[2].rank_ends[0].rank == 0);
  CHECK(analysis.epochs[2].rank_ends[0].end_offset_seconds == doctest::Approx(3.10));
  CHECK(analysis.epochs[2].rank_ends[1].end_offset_seconds == doctest::Approx(3.32));
  CHECK(analysis.epochs[2].rank_ends[1].end_rule == "epoch_end_line");
  REQUIRE(analysis.epochs[0].rank_ends.size() == 2);
  CHECK(analysis.epochs[0].rank_ends[1].end_offset_seconds == doctest::Approx(1.30));
  // One printing rank: no per-rank rows.
  const auto one = analyze_run(
      {at(0.1, "[1,0]<stdout>:Epoch 1/1"), at(1.1, "[1,0]<stdout>:10/10 - 1s - loss: 0.5")}, kStart,
      {}, {}, 1.2);
  REQUIRE(one.epochs.size() == 1);
  CHECK(one.epochs[0].rank_ends.empty());
}

TEST_CASE("every rank printing: partial lines of two ranks interleaved by mpirun are reassembled") {
  // Open MPI tags every chunk a rank writes; a progress bar writes its redraws without a newline,
  // so two ranks' redraws share physical lines until each rank's newline arrives.
  const auto chunks = split_tagged_chunks("A[1,1]<stdout>:B[1,0]<stderr>:C[x]<stdout>:D");
  REQUIRE(chunks.size() == 3);
  CHECK_FALSE(chunks[0].rank);
  CHECK(chunks[0].text == "A");
  CHECK(chunks[1].rank == 1);
  CHECK(chunks[1].stream == Stream::Stdout);
  CHECK(chunks[1].text == "B");
  CHECK(chunks[2].rank == 0);
  CHECK(chunks[2].stream == Stream::Stderr);
  CHECK(chunks[2].text == "C[x]<stdout>:D");  // not an Open MPI tag: text

  const std::string done = "\r10/10 ━━━━━━━━━━━━━━━━━━━━ 1s 9ms/step - loss: 0.5";
  const std::vector<StampedLine> lines = {
      at(0.10, "[1,0]<stdout>:Epoch 1/1"),
      at(0.11, "[1,1]<stdout>:Epoch 1/1"),
      // rank 0's bar, rank 1's bar, rank 0's last redraw and newline: rank 0's line ends here
      at(1.00,
         "[1,0]<stdout>:\r5/10 ━━━━━━━━━━━━━━━━━━━━ 0s 9ms/step - loss: 0.9"
         "[1,1]<stdout>:\r5/10 ━━━━━━━━━━━━━━━━━━━━ 0s 9ms/step - loss: 0.9"
         "[1,0]<stdout>:" +
             done),
      // rank 1 finishes later
      at(1.20, "[1,1]<stdout>:" + done),
  };
  const auto analysis = analyze_run(lines, kStart, {}, {}, 1.3);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 1);
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(1.10));
  REQUIRE(analysis.epochs[0].rank_ends.size() == 2);
  CHECK(analysis.epochs[0].rank_ends[0].end_offset_seconds == doctest::Approx(1.00));
  CHECK(analysis.epochs[0].rank_ends[1].end_offset_seconds == doctest::Approx(1.20));
  CHECK(*analysis.epochs[0].loss == doctest::Approx(0.5));
}
