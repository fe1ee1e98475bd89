#include <doctest/doctest.h>

#include "orchestrator/experiment.hpp"

using namespace scalebench::orchestrator;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_experiment(text, "exp.json");
  } catch (const ExperimentError& error) {
    return error.what();
  }
  return "";
}

const char* kValid = R"({
  "name": "demo",
  "repetitions": 2,
  "timeout_seconds": 30,
  "np": [1, 2],
  "trainer": {"epochs": 3, "dataset": "synthetic", "verbose": true, "quiet": false},
  "conditions": [
    {"name": "single", "launcher": "single"},
    {"name": "mpirun", "launcher": "mpirun", "oversubscribe": true, "launcher_args": ["--bind-to", "none"]},
    {"name": "custom", "launcher": "command", "np": [4], "command": ["run-it", "-n", "{np}", "{program}", "{args}"]}
  ]
})";

}  // namespace

TEST_CASE("a valid experiment expands to conditions x np x repetitions, interleaved") {
  const auto experiment = parse_experiment(kValid, "exp.json");
  CHECK(experiment.name == "demo");
  const auto plans = expand_matrix(experiment, {"/opt/sb/scalebench-train", false});
  // per repetition: single(1) + mpirun(1,2) + custom(4) = 4 runs
  REQUIRE(plans.size() == 8);
  CHECK(plans[0].condition == "single");
  CHECK(plans[0].repetition == 1);
  CHECK(plans[4].condition == "single");
  CHECK(plans[4].repetition == 2);
  CHECK(plans[0].launch.argv == std::vector<std::string>{"/opt/sb/scalebench-train", "--dataset",
                                                         "synthetic", "--epochs", "3", "--verbose"});
  CHECK(plans[2].np == 2);
  CHECK(plans[2].launch.argv ==
        std::vector<std::string>{"mpirun", "-np", "2", "--tag-output", "--oversubscribe", "--bind-to",
                                 "none", "/opt/sb/scalebench-train", "--dataset", "synthetic",
                                 "--epochs", "3", "--verbose"});
  CHECK(plans[3].launch.argv ==
        std::vector<std::string>{"run-it", "-n", "4", "/opt/sb/scalebench-train", "--dataset",
                                 "synthetic", "--epochs", "3", "--verbose"});
  CHECK(plans[1].launch.timeout == std::chrono::milliseconds(30000));
  CHECK(plans[1].launch.env.empty());
}

TEST_CASE("running as root adds Open MPI's opt-in for mpirun only") {
  const auto plans = expand_matrix(parse_experiment(kValid, "exp.json"), {"t", true});
  CHECK(plans[0].launch.env.empty());
  CHECK(plans[1].launch.env.at("OMPI_ALLOW_RUN_AS_ROOT") == "1");
  CHECK(plans[1].launch.env.at("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM") == "1");
}

TEST_CASE("srun gets --label and the rank-colon tag form") {
  const auto plans = expand_matrix(
      parse_experiment(R"({"name":"s","conditions":[{"name":"srun","launcher":"srun","np":[2]}]})", "e"),
      {"t", false});
  REQUIRE(plans.size() == 1);
  CHECK(plans[0].launch.argv == std::vector<std::string>{"srun", "-n", "2", "--label", "t"});
  CHECK(plans[0].tags.rank_colon_prefix);
}

TEST_CASE("malformed files: one clear error naming file, field and expectation") {
  CHECK(error_of("{") .find("exp.json:1:2: not valid JSON") == 0);
  CHECK(error_of("{\n  \"name\": \"x\",\n  oops\n}").find("exp.json:3:3: not valid JSON") == 0);
  CHECK(error_of("[]") == "exp.json: field \"(top level)\": expected an object, got []");
  CHECK(error_of(R"({"conditions": []})") == "exp.json: field \"name\": missing (required)");
  CHECK(error_of(R"({"name": "x", "conditions": []})") ==
        "exp.json: field \"conditions\": expected a non-empty array of conditions, got []");
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"mpirun","np":[1,"two"]}]})") ==
        "exp.json: field \"conditions[0].np[1]\": expected a positive integer, got \"two\"");
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"mpirun","np":[0]}]})") ==
        "exp.json: field \"conditions[0].np[0]\": expected a positive integer, got 0");
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"mpirun"}]})") ==
        "exp.json: field \"conditions[0].np\": missing (required)");
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"mpi"}]})") ==
        "exp.json: field \"conditions[0].launcher\": expected one of \"single\", \"mpirun\", "
        "\"srun\", \"command\", got \"mpi\"");
  CHECK(error_of(R"({"name":"x","repetitons":3,"conditions":[{"name":"a","launcher":"single"}]})")
            .find("exp.json: field \"repetitons\": unknown field (did you mean \"repetitions\"?)") == 0);
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"single"},{"name":"a","launcher":"single"}]})") ==
        "exp.json: field \"conditions[1].name\": expected a condition name not used before, got \"a\"");
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"single","np":[2]}]})")
            .find("conditions[0].np\": expected [1] or nothing") != std::string::npos);
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"command","np":[1]}]})") ==
        "exp.json: field \"conditions[0].command\": missing (required)");
  CHECK(error_of(R"({"name":"x","timeout_seconds":-1,"conditions":[{"name":"a","launcher":"single"}]})") ==
        "exp.json: field \"timeout_seconds\": expected a positive number, got -1");
  CHECK(error_of(R"({"name":"x","trainer":{"epochs":[1]},"conditions":[{"name":"a","launcher":"single"}]})") ==
        "exp.json: field \"trainer.epochs\": expected a string, number or boolean, got [1]");
}

TEST_CASE("a missing file is an error naming it") {
  CHECK_THROWS_WITH_AS(load_experiment("/nonexistent/exp.json"),
                       "/nonexistent/exp.json: cannot open the experiment file", ExperimentError);
}

TEST_CASE("shell_join quotes what a shell would split") {
  CHECK(shell_join({"mpirun", "-np", "2", "a b", "it's", ""}) == "mpirun -np 2 'a b' 'it'\\''s' ''");
}
