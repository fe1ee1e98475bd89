// The launchers' line forms (issue "Other people's trainers", item 3): each form on lines as the
// tools print them, the forms off by default, a user's pattern, a mixed stream through the
// analyzer, and the experiment file's "line_tags" and per-condition "program".
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "orchestrator/experiment.hpp"
#include "orchestrator/line_parser.hpp"
#include "orchestrator/run_analysis.hpp"
#include "stamped_lines.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;

namespace {

TaggedLine tagged(std::string_view line, const std::string& form) {
  return parse_tagged_line(line, tag_options_named(form));
}

std::string error_of(const std::string& json) {
  try {
    expand_matrix(parse_experiment(json, "exp.json"), {"/t", false});
  } catch (const ExperimentError& error) {
    return error.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("torchrun: [default0]: (torch 1.x, role and local rank) and [rank0]: (torch 2.x)") {
  // torch/distributed/elastic/multiprocessing/tail_log.py writes "[{role}{local_rank}]:" before
  // each line of a teed worker log; torch 2.x's --local-ranks-filter output uses "[rank{n}]:".
  auto line = tagged("[default0]:Epoch 1/3", "torchrun");
  CHECK(line.rank == 0);
  CHECK(line.payload == "Epoch 1/3");
  line = tagged("[rank12]:469/469 - loss: 0.5", "torchrun");
  CHECK(line.rank == 12);
  CHECK(line.payload == "469/469 - loss: 0.5");
  CHECK(tagged("[trainer3]:x", "torchrun").rank == 3);
  // Not torchrun tags: no digits, no word, a space inside, or the form not chosen.
  CHECK_FALSE(tagged("[default]:x", "torchrun").rank);
  CHECK_FALSE(tagged("[12]:x", "torchrun").rank);
  CHECK_FALSE(tagged("[a b0]:x", "torchrun").rank);
  CHECK_FALSE(parse_tagged_line("[rank0]:x").rank);
}

TEST_CASE("Ray Train: workers by pid, with colour codes and the dedup suffix") {
  auto line = tagged("(RayTrainWorker pid=2934, ip=10.0.0.12) Epoch 1/3", "ray");
  CHECK(line.worker_pid == 2934);
  CHECK(line.payload == "Epoch 1/3");
  line = tagged("\x1b[36m(RayTrainWorker pid=2935, ip=10.0.0.12)\x1b[0m Epoch 2/3", "ray");
  CHECK(line.worker_pid == 2935);
  CHECK(line.payload == "Epoch 2/3");
  line = tagged("(RayTrainWorker pid=2936, ip=10.0.0.13) Epoch 3/3 [repeated 3x across cluster]",
                "ray");
  CHECK(line.payload == "Epoch 3/3");
  CHECK_FALSE(tagged("(note) Epoch 1/3", "ray").worker_pid);
  CHECK_FALSE(tagged("(RayTrainWorker pid=x, ip=1) a", "ray").worker_pid);

  // The analyzer numbers the workers in order of appearance.
  TagOptions ray = tag_options_named("ray");
  RunAnalyzer analyzer(0, ray);
  const auto at = [](double s, std::string text) { return test::stamped(0, s, std::move(text)); };
  CHECK(analyzer.add(at(0.1, "(RayTrainWorker pid=77, ip=1.2.3.4) hello")).rank == 0);
  CHECK(analyzer.add(at(0.2, "(RayTrainWorker pid=55, ip=1.2.3.4) hello")).rank == 1);
  CHECK(analyzer.add(at(0.3, "(RayTrainWorker pid=77, ip=1.2.3.4) again")).rank == 0);
}

TEST_CASE("MPICH/Hydra and Intel MPI mpiexec -l: [0] text") {
  for (const char* form : {"mpich", "intelmpi"}) {
    const auto line = tagged("[1] Epoch 2/3", form);
    CHECK(line.rank == 1);
    CHECK(line.payload == "Epoch 2/3");
  }
  CHECK_FALSE(tagged("[x] Epoch", "mpich").rank);
  CHECK_FALSE(tagged("[] a", "mpich").rank);
  CHECK_FALSE(parse_tagged_line("[0] loading").rank);  // off by default: a plausible log line
}

TEST_CASE("srun --label and Open MPI's and horovodrun's forms stay as they were") {
  CHECK(tagged("3: Epoch 1/2", "srun").rank == 3);
  CHECK(tagged("3: Epoch 1/2", "srun").payload == "Epoch 1/2");
  CHECK(tagged("[1,4]<stdout>:x", "openmpi").rank == 4);
  CHECK(tagged("[1,4]<stdout>:x", "torchrun").rank == 4);  // always recognised
  CHECK(parse_tagged_line("Mon Nov 22 10:00:00 2026[2]<stdout>:Epoch 1/2").rank == 2);
  CHECK_THROWS_AS(tag_options_named("slurm"), std::invalid_argument);
}

TEST_CASE("a user's tag pattern: one (?<rank>) group, anchored at the line's start") {
  TagOptions options;
  options.pattern = std::make_shared<const TagPattern>(R"(worker-(?<rank>\d+)\| )");
  auto line = parse_tagged_line("worker-7| Epoch 1/3", options);
  CHECK(line.rank == 7);
  CHECK(line.payload == "Epoch 1/3");
  CHECK_FALSE(parse_tagged_line("x worker-7| Epoch 1/3", options).rank);  // anchored
  // Groups before the rank are counted; classes and escapes are not groups.
  options.pattern =
      std::make_shared<const TagPattern>(R"((host|node)[(]\d+[)] (?:w)(?<rank>\d+): )");
  line = parse_tagged_line("node(3) w12: Epoch 2/3", options);
  CHECK(line.rank == 12);
  CHECK(line.payload == "Epoch 2/3");
  CHECK_THROWS_WITH_AS(TagPattern("w(\\d+): "), "no (?<rank>...) group for the rank",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(TagPattern("(?<rank>\\d+)(?<rank>\\d+)"),
                       "each named group once: (?<rank>...) appears more than once",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(TagPattern("(?<host>\\w+)(?<rank>\\d+)"),
                       "the only named group is (?<rank>...)", std::invalid_argument);
  CHECK_THROWS_AS(TagPattern("(?<rank>[0-9+"), std::invalid_argument);
  // Counted repetition is RE2's: bounded, and a pattern beyond the memory budget is refused.
  CHECK(TagPattern("w{2,3}(?<rank>\\d)").match("ww7 x")->first == 7);
  CHECK_THROWS_AS(TagPattern("((a{1000}){1000})(?<rank>\\d)"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(TagPattern("(?<rank>\\d)(?<=x)"),
                       "no lookbehind (?<= or (?<! (RE2 syntax has no lookaround)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(TagPattern("(?=w)(?<rank>\\d)"),
                       "not a valid regular expression (RE2 syntax): invalid perl operator: (?=",
                       std::invalid_argument);
  // RE2's own spelling of a named group is accepted too.
  CHECK(TagPattern("w(?P<rank>\\d+): ").match("w12: x")->first == 12);
  CHECK(TagPattern("\\{(?<rank>\\d+)\\} ").match("{4} x")->first == 4);
  // A long line is matched only in its first kTagPatternWindow bytes: no deep recursion.
  options.pattern = std::make_shared<const TagPattern>("(?<rank>\\d+)(.|\\n)*X");
  CHECK_FALSE(parse_tagged_line("1" + std::string(64 * 1024, 'a') + "X", options).rank);
}

TEST_CASE("a mixed stream of forms through the analyzer: ranks attributed, epochs measured") {
  TagOptions options = tag_options_named("torchrun");
  const auto at = [](double s, std::string text, Stream stream = Stream::Stdout) {
    return test::stamped(0, s, std::move(text), stream);
  };
  const auto analysis = analyze_run(
      {at(0.1, "[default1]:Epoch 1/2"), at(0.1, "[default0]:Epoch 1/2"),
       at(0.5, "[default0]:warning: something", Stream::Stderr), at(1.1, "[default0]:Epoch 2/2"),
       at(1.1, "[default1]:Epoch 2/2[1,0]<stdout>:"), at(2.1, "[default0]:4/4 - loss: 0.3"),
       at(2.2, "untagged line from the launcher")},
      0, options, {}, 2.5);
  CHECK(analysis.problems.empty());
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(1.0));
  CHECK(analysis.epochs[1].end_rule == "epoch_end_line");
  CHECK(analysis.lines[0].rank == 1);
  CHECK(analysis.lines[2].stream == "stderr");
  CHECK(analysis.lines[4].text == "Epoch 2/2");
  CHECK_FALSE(analysis.lines[6].rank);
}

TEST_CASE("line_tags and program per condition and per level, in the experiment file") {
  const auto plans = expand_matrix(parse_experiment(R"({"name": "x", "np": [2],
    "program": "/usr/bin/scalebench-train",
    "factors": {"framework": ["ours", {"name": "torch", "program": "/usr/bin/python3",
                                        "args": ["ddp.py"], "line_tags": "torchrun",
                                        "train_images": 50000}]},
    "conditions": [
      {"name": "hydra", "launcher": "command", "line_tags": "mpich",
       "command": ["mpiexec", "-l", "-n", "{np}", "{program}", "{args}"]},
      {"name": "custom", "launcher": "mpirun", "program": "/opt/other",
       "line_tags": {"pattern": "^w(?<rank>\\d+)> "}}
    ]})",
                                                    "exp.json"),
                                   {"/t", false});
  REQUIRE(plans.size() == 4);
  CHECK(plans[0].launch.argv[4] == "/usr/bin/scalebench-train");
  CHECK(plans[0].tags.rank_bracket_prefix);
  CHECK(plans[1].launch.argv[4] == "/usr/bin/python3");
  CHECK(plans[1].tags.torchrun_prefix);  // the level's form replaces the condition's
  CHECK(plans[1].train_images == 50000);
  CHECK_FALSE(plans[0].train_images);
  CHECK_FALSE(plans[1].tags.rank_bracket_prefix);
  CHECK(plans[2].launch.argv[4] == "/opt/other");
  REQUIRE(plans[2].tags.pattern);
  CHECK(plans[2].tags.pattern->text() == "^w(?<rank>\\d+)> ");
  CHECK(plans[3].launch.argv[4] == "/usr/bin/python3");  // the level's program wins

  CHECK(error_of(R"({"name": "x", "conditions": [{"name": "a", "launcher": "single",
    "line_tags": "slurm"}]})") ==
        "exp.json: field \"conditions[0].line_tags\": expected one of openmpi, srun, mpich, "
        "intelmpi, torchrun, ray or {\"pattern\": \"...(?<rank>\\\\d+)...\"}, got \"slurm\"");
  CHECK(error_of(R"({"name": "x", "conditions": [{"name": "a", "launcher": "single",
    "line_tags": {"pattern": "w(\\d+) "}}]})")
            .find("field \"conditions[0].line_tags.pattern\": expected a regular expression with "
                  "one (?<rank>...) group (no (?<rank>...) group for the rank)") !=
        std::string::npos);
}
