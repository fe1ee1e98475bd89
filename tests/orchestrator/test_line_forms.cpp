// Any epoch marker (issue 22, item 3): line forms for programs that do not print Keras's
// `Epoch y/z`: the presets on the lines those programs print (their own source's print
// statements and a capture of Lightning's TQDMProgressBar), user patterns, refusals naming the
// field, and the hint when a run has no epoch.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "orchestrator/experiment.hpp"
#include "orchestrator/line_forms.hpp"
#include "orchestrator/run_analysis.hpp"
#include "stamped_lines.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;

namespace {

constexpr std::int64_t kStart = 5'000'000'000;

StampedLine at(double seconds, std::string text, Stream stream = Stream::Stdout) {
  return test::stamped(kStart, seconds, std::move(text), stream);
}

RunAnalysis analyze(const std::vector<StampedLine>& lines, const std::string& form,
                    double exit_at) {
  RunExpectations expected;
  expected.line_forms = line_forms_named(form);
  return analyze_run(lines, kStart, {}, expected, exit_at);
}

}  // namespace

TEST_CASE("line forms: pytorch/examples mnist/main.py, unedited") {
  // main.py's own prints: 'Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}' every log interval,
  // '\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n' after each epoch's test.
  const std::vector<StampedLine> lines = {
      at(0.50, "Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.305122"),
      at(0.90, "Train Epoch: 1 [640/60000 (1%)]\tLoss: 1.523400"),
      at(1.90, ""),
      at(1.90, "Test set: Average loss: 0.1028, Accuracy: 9680/10000 (97%)"),
      at(1.90, ""),
      at(2.00, "Train Epoch: 2 [0/60000 (0%)]\tLoss: 0.210000"),
      at(2.40, "Train Epoch: 2 [640/60000 (1%)]\tLoss: 0.150000"),
      at(3.50, ""),
      at(3.50, "Test set: Average loss: 0.0475, Accuracy: 9842/10000 (98%)"),
      at(3.60, "saving mnist_cnn.pt"),
  };
  const auto analysis = analyze(lines, "pytorch-examples", 3.7);
  CHECK(analysis.problems.empty());
  CHECK(analysis.total_epochs == 2);  // main.py does not print it: as many as began
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(1.5));
  CHECK(*analysis.epochs[1].duration_seconds == doctest::Approx(1.5));  // to its Test set line
  CHECK(analysis.epochs[1].end_rule == "epoch_end_line");
  CHECK(*analysis.epochs[0].loss == doctest::Approx(1.5234));
  CHECK(*analysis.epochs[0].test_accuracy == doctest::Approx(0.968));
  CHECK(*analysis.epochs[1].test_accuracy == doctest::Approx(0.9842));
}

TEST_CASE("line forms: Lightning's progress bar, 0-based, as a terminal shows it") {
  // tests/data/orchestrator/progress/lightning-tqdmprogressbar-pipe.out, one redraw per line.
  const std::vector<StampedLine> lines = {
      at(0.40,
         "\rEpoch 0:  50%|█████     | 3/6 [00:00<00:00, 19.6it/s, v_num=0]"
         "\rEpoch 0: 100%|██████████| 6/6 [00:00<00:00, 19.66it/s, v_num=0, train_loss=0.514]"),
      at(0.50, "\rValidation DataLoader 0: 100%|██████████| 2/2 [00:00<00:00, 19.83it/s]"),
      at(0.81,
         "\rEpoch 1: 100%|██████████| 6/6 [00:00<00:00, 19.75it/s, v_num=0, "
         "train_loss=0.340, val_loss=0.800, val_acc=0.61]"),
      at(0.91, "\rValidation DataLoader 0: 100%|██████████| 2/2 [00:00<00:00, 19.78it/s]"),
      at(1.22,
         "\rEpoch 2: 100%|██████████| 6/6 [00:00<00:00, 19.87it/s, v_num=0, "
         "train_loss=0.254, val_loss=0.571, val_acc=0.72]"),
      at(1.32, "\rValidation DataLoader 0: 100%|██████████| 2/2 [00:00<00:00, 19.85it/s]"),
      // The bar's last redraw, with the last validation's metrics.
      at(1.33,
         "\rEpoch 2: 100%|██████████| 6/6 [00:00<00:00, 14.85it/s, v_num=0, "
         "train_loss=0.254, val_loss=0.444, val_acc=0.75]"),
      at(1.34, "`Trainer.fit` stopped: `max_epochs=3` reached.", Stream::Stderr),
  };
  const auto analysis = analyze(lines, "lightning", 1.4);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 3);
  CHECK(analysis.epochs[0].epoch == 1);  // Lightning's epoch 0
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(0.41));
  CHECK(*analysis.epochs[0].loss == doctest::Approx(0.514));
  // The postfix of `Epoch N` shows the previous epoch's validation while N trains: val_acc is
  // the validation accuracy, and no test accuracy was printed.
  CHECK(*analysis.epochs[0].validation_accuracy == doctest::Approx(0.61));
  CHECK(*analysis.epochs[1].validation_accuracy == doctest::Approx(0.72));
  CHECK(*analysis.epochs[2].validation_accuracy == doctest::Approx(0.75));
  CHECK_FALSE(analysis.epochs[2].test_accuracy);
  // fit's own end line (stderr) ends the last epoch.
  CHECK(analysis.epochs[2].end_rule == "epoch_end_line");
  CHECK(*analysis.epochs[2].duration_seconds == doctest::Approx(0.12));
}

TEST_CASE("line forms: Hugging Face Trainer's log dicts, epochs marked by their ends") {
  const std::vector<StampedLine> lines = {
      at(0.1, "{'loss': 0.6931, 'grad_norm': 1.2, 'learning_rate': 3.3e-05, 'epoch': 1.0}"),
      at(0.2, "{'eval_loss': 0.52, 'eval_accuracy': 0.81, 'eval_runtime': 0.1, 'epoch': 1.0}"),
      at(1.1, "{'loss': 0.4, 'grad_norm': 1.1, 'learning_rate': 1.6e-05, 'epoch': 2.0}"),
      at(1.2, "{'eval_loss': 0.41, 'eval_accuracy': 0.86, 'eval_runtime': 0.1, 'epoch': 2.0}"),
      at(1.3, "{'train_runtime': 1.3, 'train_samples_per_second': 800.0, 'epoch': 2.0}"),
  };
  const auto analysis = analyze(lines, "hf-trainer", 1.5);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 2);
  // Epoch 1 from the process's start (it holds the start-up: "warmup_epochs": 1 leaves it out).
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(0.1));
  CHECK(*analysis.epochs[1].duration_seconds == doctest::Approx(1.0));
  CHECK(*analysis.epochs[1].loss == doctest::Approx(0.4));
  CHECK(*analysis.epochs[1].test_accuracy == doctest::Approx(0.86));
}

TEST_CASE("line forms: patterns of one's own, refusals naming the field, the hint") {
  const auto experiment = parse_experiment(R"js({"name": "o", "line_forms": {
      "epoch_start": "^== epoch (?<epoch>\\d+) of (?<total>\\d+)", "epoch_end": "^== done",
      "metrics": {"loss": "loss=(?<value>[0-9.]+)"}},
    "conditions": [{"name": "a", "launcher": "single"},
                   {"name": "b", "launcher": "single", "line_forms": "pytorch-examples"}]})js",
                                           "exp.json");
  const auto plans = expand_matrix(experiment, {"/opt/t", false});
  REQUIRE(plans.size() == 2);
  REQUIRE(plans[0].line_forms);
  CHECK(plans[0].line_forms->name == "custom");
  CHECK(plans[1].line_forms->name == "pytorch-examples");
  RunExpectations expected;
  expected.line_forms = plans[0].line_forms;
  const auto own = analyze_run({at(0.1, "== epoch 1 of 2"), at(0.5, "step loss=0.7"),
                                at(1.1, "== epoch 2 of 2"), at(1.9, "== done loss=0.3")},
                               kStart, {}, expected, 2.0);
  CHECK(own.problems.empty());
  REQUIRE(own.epochs.size() == 2);
  CHECK(*own.epochs[0].loss == doctest::Approx(0.7));
  CHECK(*own.epochs[1].duration_seconds == doctest::Approx(0.8));

  const auto error = [](const std::string& forms) {
    try {
      parse_experiment(R"js({"name": "o", "line_forms": )js" + forms +
                           R"js(, "conditions": [{"name": "a", "launcher": "single"}]})js",
                       "exp.json");
    } catch (const ExperimentError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error(R"js("keras3")js").find("one of keras, pytorch-examples, lightning, hf-trainer") !=
        std::string::npos);
  const auto no_group = error(R"js({"epoch_start": "^Epoch (\\d+)"})js");
  CHECK(no_group.find("field \"line_forms.epoch_start\"") != std::string::npos);
  CHECK(no_group.find("no (?<epoch>...) group") != std::string::npos);
  CHECK(error(R"js({"epoch_start": "(?<epoch>\\d+"})js").find("not a valid regular") !=
        std::string::npos);
  CHECK(error(R"js({"epoch_end": "x", "metrics": {"los": "(?<value>1)"}})js").find("loss") !=
        std::string::npos);
  CHECK(error(R"js({"epoch_base": 2, "epoch_end": "x"})js").find("0 or 1") != std::string::npos);

  // Without line_forms, a run of mnist/main.py has no epoch, and says which preset fits.
  const auto missed =
      analyze_run({at(0.5, "Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.305122")}, kStart, {}, {}, 1.0);
  REQUIRE_FALSE(missed.problems.empty());
  INFO(missed.problems[0]);
  // (The tab shows as a terminal shows it, to the next multiple of 8.)
  CHECK(missed.problems[0].find("no `Epoch y/z` line; `Train Epoch: 1 [0/60000 (0%)]   Loss: "
                                "2.305122` looks like an epoch marker: try \"line_forms\": "
                                "\"pytorch-examples\"") == 0);
}

TEST_CASE("line forms: a pattern that backtracks exponentially still matches in linear time") {
  // ^(a|aa)+...$ on a run of a's has Fibonacci-many ways to split it: std::regex never returned
  // on 60 characters, freezing `run` (its timer and signals live on the same thread). RE2 does
  // not backtrack, in every field a user writes.
  const std::string nasty = R"(^(a|aa)+(?<epoch>\d+)$)";
  const std::string line = std::string(60, 'a') + "!";
  const auto forms = line_forms_from_patterns(nullptr, {nasty,
                                                        R"(^(a|aa)+(?<epoch>\d+)?$)",
                                                        std::nullopt,
                                                        std::nullopt,
                                                        {{"loss", R"(^(a|aa)+(?<value>\d+)$)"}}});
  for (int i = 0; i < 1000; ++i) {
    const auto match = match_line_forms(*forms, line);
    CHECK_FALSE(match.start);
    CHECK_FALSE(match.ends);
    CHECK(match.metrics.empty());
  }
  CHECK(match_line_forms(*forms, std::string(60, 'a') + "7").start->epoch == 7);
  TagOptions tags;
  tags.pattern = std::make_shared<const TagPattern>(R"(^(a|aa)+(?<rank>\d+): )");
  CHECK_FALSE(parse_tagged_line(line, tags).rank);
  CHECK(parse_tagged_line("aaa3: Epoch 1/2", tags).rank == 3);
}

TEST_CASE("line forms: $ is the line's end, value/of needs a non-zero of, \\Q...\\E is text") {
  const auto forms =
      line_forms_from_patterns(nullptr, {R"(^== epoch (?<epoch>\d+))",
                                         std::string("^a+$"),
                                         std::nullopt,
                                         std::nullopt,
                                         {{"loss", R"(loss=(?<value>[^/ ]+)(?:/(?<of>\S+))?)"},
                                          {"accuracy", R"(\Q(?<x>\E(?<value>[0-9.]+))"}}});
  // A 2000-byte line of a's then b: not an end line (a 1024-byte window made $ match there).
  CHECK_FALSE(match_line_forms(*forms, std::string(2000, 'a') + "b").ends);
  CHECK(match_line_forms(*forms, std::string(2000, 'a')).ends);
  const auto loss = [&](const std::string& line) {
    const auto m = match_line_forms(*forms, line);
    return m.metrics.empty() ? std::optional<double>() : m.metrics[0].second;
  };
  CHECK(loss("loss=3/4") == 0.75);
  CHECK(loss("loss=0.5") == 0.5);          // no of: the value itself
  CHECK_FALSE(loss("loss=5/0"));           // not 5
  CHECK_FALSE(loss("loss=5/x"));           // an of that is no number
  CHECK_FALSE(loss("loss=1e308/1e-308"));  // overflows: no number, not inf
  // \Q(?<x>\E is literal text in RE2, not a group named x.
  const auto m = match_line_forms(*forms, "acc (?<x>0.9");
  REQUIRE(m.metrics.size() == 1);
  CHECK(m.metrics[0].second == 0.9);
  try {
    line_forms_from_patterns(
        nullptr, {R"((?<epoch>\d+)|(?<epoch>x))", std::nullopt, std::nullopt, std::nullopt, {}});
    FAIL("a twice-named group was accepted");
  } catch (const LineFormError& error) {
    CHECK(std::string(error.what()) ==
          "each named group once: (?<epoch>...) appears more than once");
  }
}

TEST_CASE("line forms: a tqdm bar, and the hint for a launcher's prefix") {
  // tests/data/orchestrator/progress/tqdm-lightning-style-pipe.err's form, 1-based here.
  const std::vector<StampedLine> lines = {
      at(0.10,
         "\rEpoch 1:   0%|          | 0/6 [00:00<?, ?it/s]"
         "\rEpoch 1: 100%|##########| 6/6 [00:00<00:00, 19.80it/s, loss=0.514]"),
      at(0.52, "\rEpoch 2: 100%|##########| 6/6 [00:00<00:00, 19.79it/s, loss=0.340]"),
  };
  const auto analysis = analyze(lines, "tqdm", 0.9);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(0.42));
  CHECK(*analysis.epochs[1].loss == doctest::Approx(0.34));
  // torchrun --tee output read without "line_tags": torchrun.
  const auto missed = analyze_run({at(0.1, "[default0]:Epoch 1/2")}, kStart, {}, {}, 0.5);
  REQUIRE_FALSE(missed.problems.empty());
  CHECK(missed.problems[0].find("has a launcher's prefix: try \"line_tags\": \"torchrun\"") !=
        std::string::npos);
}
