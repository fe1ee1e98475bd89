#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <limits>

#include "orchestrator/experiment.hpp"
#include "test_support.hpp"

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
                                                         "synthetic", "--epochs", "3",
                                                         "--verbose"});
  CHECK(plans[2].np == 2);
  CHECK(plans[2].launch.argv ==
        std::vector<std::string>{"mpirun", "-np", "2", "--tag-output", "--oversubscribe",
                                 "--bind-to", "none", "/opt/sb/scalebench-train", "--dataset",
                                 "synthetic", "--epochs", "3", "--verbose"});
  CHECK(plans[3].launch.argv ==
        std::vector<std::string>{"run-it", "-n", "4", "/opt/sb/scalebench-train", "--dataset",
                                 "synthetic", "--epochs", "3", "--verbose"});
  CHECK(plans[1].launch.timeout == std::chrono::milliseconds(30000));
  // Only the default every run gets: Python's output line by line.
  CHECK(plans[1].launch.env == std::map<std::string, std::string>{{"PYTHONUNBUFFERED", "1"}});
}

TEST_CASE("running as root adds Open MPI's opt-in for mpirun only") {
  const auto plans = expand_matrix(parse_experiment(kValid, "exp.json"), {"t", true});
  CHECK_FALSE(plans[0].launch.env.contains("OMPI_ALLOW_RUN_AS_ROOT"));
  CHECK(plans[1].launch.env.at("OMPI_ALLOW_RUN_AS_ROOT") == "1");
  CHECK(plans[1].launch.env.at("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM") == "1");
}

TEST_CASE("srun gets --label and the rank-colon tag form") {
  const auto plans = expand_matrix(
      parse_experiment(R"({"name":"s","conditions":[{"name":"srun","launcher":"srun","np":[2]}]})",
                       "e"),
      {"t", false});
  REQUIRE(plans.size() == 1);
  CHECK(plans[0].launch.argv == std::vector<std::string>{"srun", "-n", "2", "--label", "t"});
  CHECK(plans[0].tags.rank_colon_prefix);
}

TEST_CASE("torchrun: one node, its working output form, each worker through the tag wrapper") {
  ExpandOptions options{"t", false};
  options.tag_wrapper = "/opt/sb/scalebench-tag";
  options.torchrun_python = "/usr/bin/python3";
  const auto plans = expand_matrix(
      parse_experiment(R"({"name":"t","program":"train.py","conditions":[{"name":"ddp",
        "launcher":"torchrun","np":[2],"launcher_args":["--max_restarts","0"],
        "trainer":{"epochs":2}}, {"name":"bin","launcher":"torchrun","np":[2],
        "program":"/bin/train","launcher_args":["--no_python"]}, {"name":"py",
        "launcher":"torchrun","np":[1],"program":"/usr/bin/python3","args":["t.py"]},
        {"name":"mod","launcher":"torchrun","np":[1],"program":"mypkg.train",
         "launcher_args":["-m","--max_restarts","0"],"env":{"PYTHON_EXEC":"/opt/py/bin/python"}},
        {"name":"rp","launcher":"torchrun","np":[1],"launcher_args":["--run_path"]}]})",
                       "e"),
      options);
  REQUIRE(plans.size() == 5);
  // A Python script: with torchrun's interpreter, as torchrun would run it.
  CHECK(plans[0].launch.argv == std::vector<std::string>{"torchrun",
                                                         "--standalone",
                                                         "--nnodes",
                                                         "1",
                                                         "--nproc_per_node",
                                                         "2",
                                                         "--redirects",
                                                         "2",
                                                         "--tee",
                                                         "2",
                                                         "--max_restarts",
                                                         "0",
                                                         "--no_python",
                                                         "/opt/sb/scalebench-tag",
                                                         "--python",
                                                         "/usr/bin/python3",
                                                         "--",
                                                         "train.py",
                                                         "--epochs",
                                                         "2"});
  // The user's --no_python: the program itself.
  CHECK(plans[1].launch.argv ==
        std::vector<std::string>{"torchrun", "--standalone", "--nnodes", "1", "--nproc_per_node",
                                 "2", "--redirects", "2", "--tee", "2", "--no_python",
                                 "/opt/sb/scalebench-tag", "--", "/bin/train"});
  // A Python interpreter as the program (the script in args): run as it is.
  CHECK(plans[2].launch.argv ==
        std::vector<std::string>{"torchrun", "--standalone", "--nnodes", "1", "--nproc_per_node",
                                 "1", "--redirects", "2", "--tee", "2", "--no_python",
                                 "/opt/sb/scalebench-tag", "--", "/usr/bin/python3", "t.py"});
  // -m: the wrapper runs the module with the run's PYTHON_EXEC (torchrun's own choice).
  CHECK(plans[3].launch.argv ==
        std::vector<std::string>{"torchrun", "--standalone", "--nnodes", "1", "--nproc_per_node",
                                 "1", "--redirects", "2", "--tee", "2", "--max_restarts", "0",
                                 "--no_python", "/opt/sb/scalebench-tag", "--python",
                                 "/opt/py/bin/python", "--", "-m", "mypkg.train"});
  // --run_path: a script, as without it (torchrun refuses it with --no_python).
  CHECK(plans[4].launch.argv ==
        std::vector<std::string>{"torchrun", "--standalone", "--nnodes", "1", "--nproc_per_node",
                                 "1", "--redirects", "2", "--tee", "2", "--no_python",
                                 "/opt/sb/scalebench-tag", "--python", "/usr/bin/python3", "--",
                                 "train.py"});
  CHECK(plans[0].tags.torchrun_prefix);
  CHECK(plans[0].launcher == Launcher::Torchrun);
  CHECK(launcher_name(plans[0].launcher) == "torchrun");
}

TEST_CASE("malformed files: one clear error naming file, field and expectation") {
  CHECK(error_of("{").find("exp.json:1:2: not valid JSON") == 0);
  CHECK(error_of("{\n  \"name\": \"x\",\n  oops\n}").find("exp.json:3:3: not valid JSON") == 0);
  CHECK(error_of("[]") == "exp.json: field \"(top level)\": expected an object, got []");
  CHECK(error_of(R"({"conditions": []})") == "exp.json: field \"name\": missing (required)");
  CHECK(error_of(R"({"name": "x", "conditions": []})") ==
        "exp.json: field \"conditions\": expected a non-empty array of conditions, got []");
  CHECK(
      error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"mpirun","np":[1,"two"]}]})") ==
      "exp.json: field \"conditions[0].np[1]\": expected a positive integer (at most 1000000), got "
      "\"two\"");
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"mpirun","np":[0]}]})") ==
        "exp.json: field \"conditions[0].np[0]\": expected a positive integer (at most 1000000), "
        "got 0");
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"mpirun"}]})") ==
        "exp.json: field \"conditions[0].np\": missing (required)");
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"mpi"}]})") ==
        "exp.json: field \"conditions[0].launcher\": expected one of \"single\", \"mpirun\", "
        "\"srun\", \"torchrun\", \"command\", got \"mpi\"");
  CHECK(
      error_of(R"({"name":"x","repetitons":3,"conditions":[{"name":"a","launcher":"single"}]})")
          .find("exp.json: field \"repetitons\": unknown field (did you mean \"repetitions\"?)") ==
      0);
  CHECK(
      error_of(
          R"({"name":"x","conditions":[{"name":"a","launcher":"single"},{"name":"a","launcher":"single"}]})") ==
      "exp.json: field \"conditions[1].name\": expected a condition name not used before, got "
      "\"a\"");
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"single","np":[2]}]})")
            .find("conditions[0].np\": expected [1] or nothing") != std::string::npos);
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"command","np":[1]}]})") ==
        "exp.json: field \"conditions[0].command\": missing (required)");
  // An empty program in "command" ran nothing in every cell: refused with the element named.
  // So is a blank "program", at every level.
  CHECK(error_of(R"({"name":"x","program":" ","conditions":[{"name":"a","launcher":"single"}]})")
            .find("exp.json: field \"program\": expected the program to run") == 0);
  CHECK(error_of(R"({"name":"x","conditions":[{"name":"a","launcher":"single","program":"\t"}]})")
            .find("field \"conditions[0].program\": expected the program to run") !=
        std::string::npos);
  for (const char* empty : {R"([""])", R"(["  ", "{args}"])"})
    CHECK(error_of(std::string(
                       R"({"name":"x","conditions":[{"name":"a","launcher":"command","np":[1],)") +
                   R"("command":)" + empty + "}]}")
              .find("exp.json: field \"conditions[0].command[0]\": expected the program to run") ==
          0);
  CHECK(
      error_of(
          R"({"name":"x","trainer":{"epochs":[1]},"conditions":[{"name":"a","launcher":"single"}]})") ==
      "exp.json: field \"trainer.epochs\": expected a string, number or boolean, got [1]");
}

TEST_CASE("a missing file is an error naming it") {
  CHECK_THROWS_WITH_AS(load_experiment("/nonexistent/exp.json"),
                       "/nonexistent/exp.json: cannot open the experiment file: No such file or "
                       "directory",
                       ExperimentError);
}

TEST_CASE("shell_join quotes what a shell would split") {
  CHECK(shell_join({"mpirun", "-np", "2", "a b", "it's", ""}) ==
        "mpirun -np 2 'a b' 'it'\\''s' ''");
}

// Issue 16, item 4: hostile experiment files. Each gives one ExperimentError line naming the
// file, the field and what was expected; none crashes, hangs or allocates without bound.
namespace {

// The error of a file whose single condition is `condition` (JSON text) and whose top level
// adds `top` (JSON members with a trailing comma, or nothing).
std::string error_with(const std::string& top, const std::string& condition) {
  return error_of("{" + top + R"("name":"x","conditions":[)" + condition + "]}");
}

const char* kSingle = R"({"name":"a","launcher":"single"})";

void check_one_line(const std::string& message) {
  CHECK_FALSE(message.empty());
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.size() < 600);
}

}  // namespace

TEST_CASE("numbers out of range are an error with their position, even in an unknown field") {
  CHECK(error_with(R"("timeout_seconds": 1e400,)", kSingle) ==
        "exp.json:1:21: field \"timeout_seconds\": expected a number within the range of a "
        "double, got 1e400");
  CHECK(error_of("{\"name\":\"x\",\n \"whatever\": {\"deep\": [-1e999]}}") ==
        "exp.json:2:24: field \"whatever.deep[0]\": expected a number within the range of a "
        "double, got -1e999");
  // NaN and Infinity are not JSON.
  CHECK(error_with(R"("timeout_seconds": NaN,)", kSingle).find("exp.json:1:21: not valid JSON") ==
        0);
  CHECK(error_with(R"("timeout_seconds": Infinity,)", kSingle).find("not valid JSON") !=
        std::string::npos);
}

TEST_CASE("timeout_seconds lies between 1 ms and 30 days, so it can never overflow the clock") {
  const std::string expected = "expected a number of seconds from 0.001 to 2592000 (30 days), got ";
  CHECK(error_with(R"("timeout_seconds": 0,)", kSingle) ==
        "exp.json: field \"timeout_seconds\": " + expected + "0");
  CHECK(error_with(R"("timeout_seconds": -1,)", kSingle) ==
        "exp.json: field \"timeout_seconds\": " + expected + "-1");
  CHECK(error_with(R"("timeout_seconds": 1e-300,)", kSingle).find(expected) != std::string::npos);
  // 9.3e9 s overflowed steady_clock::now() + timeout and killed every healthy run as "timeout".
  CHECK(error_with(R"("timeout_seconds": 9.3e9,)", kSingle).find(expected) != std::string::npos);
  CHECK(error_with(R"("timeout_seconds": 1e308,)", kSingle).find(expected) != std::string::npos);
  CHECK(error_with(R"("timeout_seconds": "60",)", kSingle).find(expected) != std::string::npos);
  // The largest timeout converts exactly.
  const auto plans =
      expand_matrix(parse_experiment(R"({"name":"x","timeout_seconds":2592000,"conditions":[)" +
                                         std::string(kSingle) + "]}",
                                     "exp.json"),
                    {});
  REQUIRE(plans.size() == 1);
  CHECK(plans[0].launch.timeout == std::chrono::milliseconds(2'592'000'000LL));
  // An Experiment built in code is checked by expand_matrix too.
  auto experiment =
      parse_experiment(R"({"name":"x","conditions":[)" + std::string(kSingle) + "]}", "exp.json");
  experiment.timeout_seconds = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(expand_matrix(experiment, {}), ExperimentError);
}

TEST_CASE("repetitions and np have documented limits") {
  CHECK(
      error_with(R"("repetitions": 100001,)", kSingle) ==
      "exp.json: field \"repetitions\": expected a positive integer (at most 100000), got 100001");
  CHECK(error_with(R"("repetitions": 18446744073709551615,)", kSingle)
            .find("expected a positive integer (at most 100000)") != std::string::npos);
  CHECK(error_with(R"("repetitions": 2.5,)", kSingle).find("expected a positive integer") !=
        std::string::npos);
  CHECK(error_with("", R"({"name":"a","launcher":"mpirun","np":[1000001]})") ==
        "exp.json: field \"conditions[0].np[0]\": expected a positive integer (at most 1000000), "
        "got 1000001");
}

TEST_CASE("JSON nested deeper than 64 levels is refused before it is parsed further") {
  // 100 000 levels segfaulted (recursion).
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  const auto message = error_of(deep);
  CHECK(message.find("exp.json:1:65: field \"") == 0);
  CHECK(message.find("expected at most 64 levels of nested arrays and objects") !=
        std::string::npos);
  check_one_line(message);
  std::string objects = R"({"name":"x","a":)";
  for (int i = 0; i < 70; ++i) objects += R"({"k":)";
  objects += "1" + std::string(71, '}');
  CHECK(error_of(objects).find("levels of nested") != std::string::npos);
  // 64 levels are fine as far as nesting goes (the field is unknown, but that is another error).
  const std::string ok = R"({"name":"x","a":)" + std::string(63, '[') + std::string(63, ']') + "}";
  CHECK(error_of(ok).find("unknown field") != std::string::npos);
  // Brackets inside strings do not count.
  CHECK(error_of(R"({"name":"x","description":")" + std::string(1000, '[') + R"(","conditions":[)" +
                 kSingle + "]}") == "");
}

TEST_CASE("a duplicate key is refused, named with its path") {
  CHECK(error_of(R"({"name":"x","name":"y","conditions":[{"name":"a","launcher":"single"}]})") ==
        "exp.json: field \"name\": expected each key once in an object, got \"name\" twice");
  CHECK(error_with("", R"({"name":"a","launcher":"single","env":{"A":"1","A":"2"}})") ==
        "exp.json: field \"conditions[0].env.A\": expected each key once in an object, got \"A\" "
        "twice");
  // The same key in two different objects is fine.
  CHECK(error_with("", R"({"name":"a","launcher":"single","env":{"A":"1"},"trainer":{"A":1}})") ==
        "");
}

TEST_CASE("env keys must be portable names and values free of NUL") {
  const std::string expected =
      "expected an environment variable name of letters, digits and _, "
      "not starting with a digit, got the key ";
  // "" passed validation, created the database, then aborted.
  CHECK(error_with("", R"({"name":"a","launcher":"single","env":{"":"x"}})") ==
        "exp.json: field \"conditions[0].env[\"\"]\": " + expected + "\"\"");
  CHECK(error_with("", R"({"name":"a","launcher":"single","env":{"A=B":"x"}})") ==
        "exp.json: field \"conditions[0].env[\"A=B\"]\": " + expected + "\"A=B\"");
  CHECK(error_with("", R"({"name":"a","launcher":"single","env":{"A\u0000B":"x"}})") ==
        "exp.json: field \"conditions[0].env[\"A\\x00B\"]\": " + expected + "\"A\\x00B\"");
  CHECK(error_with("", R"({"name":"a","launcher":"single","env":{"1A":"x"}})").find(expected) !=
        std::string::npos);
  CHECK(error_with("", R"({"name":"a","launcher":"single","env":{"A B":"x"}})").find(expected) !=
        std::string::npos);
  CHECK(error_with("", R"({"name":"a","launcher":"single","env":{"A":"x\u0000y"}})") ==
        "exp.json: field \"conditions[0].env.A\": expected a string without NUL characters, got "
        "\"x\\u0000y\"");
  CHECK(error_with("", R"({"name":"a","launcher":"single","env":{"_A1":"x=y"}})") == "");
}

TEST_CASE("a NUL in anything that reaches an argv is refused") {
  const std::string nul = "expected a string without NUL characters";
  CHECK(error_with(R"("program":"a\u0000b",)", kSingle).find("field \"program\": " + nul) !=
        std::string::npos);
  CHECK(error_with(R"("args":["a\u0000"],)", kSingle).find("field \"args[0]\": " + nul) !=
        std::string::npos);
  CHECK(error_with(R"("trainer":{"model":"a\u0000"},)", kSingle)
            .find("field \"trainer.model\": " + nul) != std::string::npos);
  CHECK(error_with(R"("trainer":{"mo\u0000del":1},)", kSingle)
            .find("expected an option name of letters") != std::string::npos);
  CHECK(error_with("", R"({"name":"a","launcher":"mpirun","np":[1],"launcher_args":["\u0000"]})")
            .find("field \"conditions[0].launcher_args[0]\": " + nul) != std::string::npos);
  CHECK(error_with("", R"({"name":"a","launcher":"command","np":[1],"command":["x\u0000"]})")
            .find("field \"conditions[0].command[0]\": " + nul) != std::string::npos);
  CHECK(error_with(R"("trainer":{"":1},)", kSingle).find("expected an option name") !=
        std::string::npos);
}

TEST_CASE("placeholders: one pass, known names only, and only in command") {
  // {program} inside program looped forever, even with --dry-run.
  const auto experiment = parse_experiment(
      R"({"name":"x","conditions":[{"name":"a","launcher":"command","np":[2],)"
      R"("command":["{program}","{np}{np}","{{np}}","a}b{c","{condition}-{repetition}"]}]})",
      "exp.json");
  auto plans = expand_matrix(experiment, {"/bin/{program}{np}", false});
  REQUIRE(plans.size() == 1);
  CHECK(plans[0].launch.argv ==
        std::vector<std::string>{"/bin/{program}{np}", "22", "{np}", "a}b{c", "a-1"});
  CHECK(error_with("", R"({"name":"a","launcher":"command","np":[1],"command":["{nproc}"]})") ==
        "exp.json: field \"conditions[0].command[0]\": expected only the placeholders {np}, "
        "{program}, {repetition}, {condition} and a whole-element {args}, not {nproc} (write {{ "
        "and }} for literal braces), got \"{nproc}\"");
  CHECK(error_with("", R"({"name":"a","launcher":"command","np":[1],"command":["x={args}"]})")
            .find("expected {args} as a whole element") != std::string::npos);
  const std::string only_command = "are expanded only in \\\"command\\\"";
  CHECK(
      error_with(
          "",
          R"({"name":"a","launcher":"mpirun","np":[1],"launcher_args":["--map-by","ppr:{np}:node"]})") ==
      "exp.json: field \"conditions[0].launcher_args[1]\": expected no placeholder: {np}, "
      "{program}, {repetition}, {condition} and {args} are expanded only in \"command\", got "
      "\"ppr:{np}:node\"");
  CHECK(error_with(R"("program":"/x/{program}",)", kSingle)
            .find("field \"program\": expected no placeholder") != std::string::npos);
  CHECK(error_with(R"("args":["{repetition}"],)", kSingle)
            .find("field \"args[0]\": expected no placeholder") != std::string::npos);
  // Braces that are no placeholder stay as they are outside "command".
  CHECK(
      error_with(
          "", R"({"name":"a","launcher":"mpirun","np":[1],"launcher_args":["${HOME}","{x y}"]})") ==
      "");
}

TEST_CASE("the matrix size is limited before any plan is built, with an override") {
  // 1e6 repetitions x 100 np values ran out of memory.
  std::string np = "[1";
  for (int i = 2; i <= 100; ++i) np += "," + std::to_string(i);
  np += "]";
  const auto experiment = parse_experiment(
      R"({"name":"x","repetitions":100000,"conditions":[{"name":"a","launcher":"mpirun","np":)" +
          np + "}]}",
      "exp.json");
  CHECK_THROWS_WITH_AS(
      expand_matrix(experiment, {}),
      "exp.json: field \"repetitions\": expected at most 10000 runs in the matrix (repetitions x "
      "the np values of all conditions and factor levels), got 100000 x 100 = 10000000; raise the "
      "limit with "
      "--max-runs N if you mean it",
      ExperimentError);
  ExpandOptions options;
  options.max_runs = 100;
  auto small = experiment;
  small.repetitions = 1;
  CHECK(expand_matrix(small, options).size() == 100);
  small.repetitions = 2;
  CHECK_THROWS_AS(expand_matrix(small, options), ExperimentError);
  options.max_runs = 200;
  CHECK(expand_matrix(small, options).size() == 200);
}

TEST_CASE("argument vectors that would multiply without bound are refused from their sizes") {
  // 20 000 {args} elements x 20 000 trainer arguments = 4e8 strings from a 500 KB file.
  std::string args = "[\"a\"", command = "[\"x\"";
  for (int i = 0; i < 20'000; ++i) args += ",\"a\"", command += ",\"{args}\"";
  args += "]", command += "]";
  const auto experiment = parse_experiment(
      R"({"name":"x","args":)" + args +
          R"(,"conditions":[{"name":"a","launcher":"command","np":[1],"command":)" + command +
          "}]}",
      "exp.json");
  try {
    expand_matrix(experiment, {});
    FAIL("expected an ExperimentError");
  } catch (const ExperimentError& error) {
    CHECK(std::string(error.what())
              .find("exp.json: field \"conditions[0]\": expected the argv and "
                    "env of one run to hold at most 1048576 bytes") == 0);
  }
  // 1000 runs of 0.5 MiB each.
  const auto wide =
      parse_experiment(R"({"name":"x","repetitions":1000,"args":[")" + std::string(500'000, 'a') +
                           R"("],"conditions":[)" + kSingle + "]}",
                       "exp.json");
  CHECK_THROWS_WITH_AS(expand_matrix(wide, {}),
                       doctest::Contains("expected the argv and env of all runs to hold at most"),
                       ExperimentError);
}

TEST_CASE("hostile texts: empty, oversized, invalid UTF-8, huge tokens give one short line") {
  CHECK(error_of("") == "exp.json: the file is empty; expected a JSON object");
  CHECK(error_of(" \n\t") == "exp.json: the file is empty; expected a JSON object");
  CHECK(error_of(std::string(kMaxExperimentFileBytes + 1, ' ')) ==
        "exp.json: larger than the limit of 4194304 bytes (4 MiB) for an experiment file");
  for (const std::string& text :
       {std::string("{\"name\":\"\xff\"}"), "\"" + std::string(1'000'000, 'a'),
        std::string("{\"\x01\":1}"), "{\"" + std::string(100'000, 'k') + "\":1}",
        std::string("{\"na\xc3\xa9me\":1}"), std::string("\xef\xbb\xbf{}")}) {
    const auto message = error_of(text);
    check_one_line(message);
    for (unsigned char c : message) CHECK((c >= 0x20 && c < 0x7f));
  }
}

TEST_CASE(
    "only a regular file of at most 4 MiB is read: directories, FIFOs and devices are refused") {
  scalebench::test::TempDir dir;
  // A directory was "not valid JSON".
  CHECK_THROWS_WITH_AS(
      load_experiment(dir.path()),
      (dir.path().string() + ": is a directory; expected an experiment file").c_str(),
      ExperimentError);
  // A FIFO blocked for ever waiting for a writer; /dev/zero was read without limit.
  const auto fifo = dir / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::filesystem::path& path :
       {fifo, std::filesystem::path("/dev/zero"), std::filesystem::path("/dev/null")})
    CHECK_THROWS_WITH_AS(load_experiment(path),
                         (path.string() + ": is not a regular file (a FIFO, socket or device); "
                                          "expected an experiment file")
                             .c_str(),
                         ExperimentError);
  const auto empty = dir / "empty.json";
  std::ofstream(empty).close();
  CHECK_THROWS_WITH_AS(load_experiment(empty),
                       (empty.string() + ": the file is empty; expected a JSON object").c_str(),
                       ExperimentError);
  const auto big = dir / "big.json";
  std::ofstream(big) << std::string(kMaxExperimentFileBytes + 1, ' ');
  CHECK_THROWS_WITH_AS(load_experiment(big),
                       (big.string() + ": larger than the limit of 4194304 bytes (4 MiB) for an "
                                       "experiment file")
                           .c_str(),
                       ExperimentError);
  const auto good = dir / "good.json";
  std::ofstream(good) << kValid;
  CHECK(load_experiment(good).conditions.size() == 3);
}

TEST_CASE(
    "a repeated np value in the experiment's default np is an error, not an exception from "
    "nlohmann") {
  // Found by the fuzz harness: the distinctness check looked up the condition's own "np", which
  // a condition using the default has not (json::out_of_range escaped).
  CHECK(error_with(R"("np":[1,1,2],)", R"({"name":"a","launcher":"mpirun"})") ==
        "exp.json: field \"np\": expected distinct np values, got [1,1,2]");
}

TEST_CASE("train_images_per_rank: images per epoch grow with np (weak scaling)") {
  const auto plans =
      expand_matrix(parse_experiment(R"({"name":"w","train_images_per_rank":256,"np":[1,2,4],
        "conditions":[{"name":"m","launcher":"mpirun"},
                      {"name":"fixed","launcher":"mpirun","train_images":1000}]})",
                                     "e"),
                    {"t", false});
  REQUIRE(plans.size() == 6);
  CHECK(plans[0].train_images == 256);
  CHECK(plans[1].train_images == 512);
  CHECK(plans[2].train_images == 1024);
  CHECK(plans[5].train_images == 1000);  // a condition's count over all ranks replaces it
  CHECK(error_of(R"({"name":"w","conditions":[{"name":"m","launcher":"mpirun","np":[2],
        "train_images":5,"train_images_per_rank":5}]})")
            .find("field \"conditions[0].train_images_per_rank\": expected either "
                  "\"train_images\" (all ranks) or \"train_images_per_rank\", not both") !=
        std::string::npos);
  const auto huge = parse_experiment(R"({"name":"w","train_images_per_rank":1000000000000000,
        "conditions":[{"name":"m","launcher":"mpirun","np":[8]}]})",
                                     "exp.json");
  CHECK_THROWS_WITH_AS(
      expand_matrix(huge, {"t", false}),
      doctest::Contains("train_images_per_rank 1000000000000000 x np 8 is more than"),
      ExperimentError);
}

TEST_CASE("warmup_epochs: a whole number of epochs from 0, kept in the stored spec") {
  const auto experiment = parse_experiment(
      R"({"name":"w","warmup_epochs":2,"conditions":[{"name":"a","launcher":"single"}]})",
      "exp.json");
  CHECK(experiment.warmup_epochs == 2);
  CHECK(experiment.spec_json.find("\"warmup_epochs\":2") != std::string::npos);
  CHECK(parse_experiment(R"({"name":"w","conditions":[{"name":"a","launcher":"single"}]})",
                         "exp.json")
            .warmup_epochs == 0);
  for (const char* bad : {R"("warmup_epochs": -1,)", R"("warmup_epochs": 1.5,)",
                          R"("warmup_epochs": "1",)", R"("warmup_epochs": 100001,)"})
    CHECK(error_with(bad, kSingle)
              .find("field \"warmup_epochs\": expected a whole number of "
                    "epochs from 0 to 100000") != std::string::npos);
  // A typo gets "did you mean".
  CHECK(error_with(R"("warmup_epoch": 1,)", kSingle).find("warmup_epochs") != std::string::npos);
}

TEST_CASE("\"labels\" names conditions, launchers, factors, levels, np and columns, typos fail") {
  const std::string head = R"({"name": "l", "conditions": [{"name": "hvd", "launcher": "mpirun",
    "np": [1, 2]}], "factors": {"model": ["vgg16", "inception_v3"]}, "labels": )";
  const auto experiment =
      parse_experiment(head + R"J({"hvd": "Horovod", "model": "Model", "model=vgg16": "VGG-16",
        "inception_v3": "Inception V3", "np": "Processes", "mpirun": "Open MPI",
        "images_per_second": "Throughput (img/s)"}})J",
                       "exp.json");
  CHECK(experiment.labels.size() == 7);
  CHECK(experiment.labels.at("model=vgg16") == "VGG-16");
  CHECK(experiment.spec_json.find("\"labels\"") != std::string::npos);  // stored with the spec
  CHECK(
      error_of(head + R"({"hvdd": "Horovod"}})")
          .find(
              "field \"labels.hvdd\": expected a condition, launcher, factor, factor=level, level, "
              "np or column") != std::string::npos);
  CHECK(error_of(head + R"({"hvdd": "Horovod"}})").find("did you mean \"hvd\"?") !=
        std::string::npos);
  CHECK(error_of(head + R"({"model=resnet": "ResNet"}})").find("labels[\"model=resnet\"]") !=
        std::string::npos);
  CHECK(error_of(head + R"({"hvd": ""}})").find("a non-empty string") != std::string::npos);
  CHECK(error_of(head + R"({"hvd": 3}})").find("a string") != std::string::npos);
  CHECK(error_of(head + R"({"hvd": "a\nb"}})").find("without control characters") !=
        std::string::npos);
  CHECK(error_of(head + R"(["hvd"]})").find("an object of") != std::string::npos);
}

TEST_CASE("a program that is there but cannot be run is refused before the first run") {
  // It failed each of the matrix's cells, one after another, each after its launcher started.
  scalebench::test::TempDir dir;
  const auto script = dir / "train.sh";
  std::ofstream(script) << "#!/bin/sh\necho hi\n";
  std::filesystem::permissions(
      script, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const auto expand = [&](const std::string& conditions) {
    const auto experiment = parse_experiment(R"({"name": "x", "program": ")" + script.string() +
                                                 R"(", "conditions": [)" + conditions + "]}",
                                             (dir / "exp.json").string());
    return expand_matrix(experiment, {"/opt/t", false});
  };
  CHECK_THROWS_WITH_AS(
      expand(R"({"name": "a", "launcher": "mpirun", "np": [1, 2]})"),
      doctest::Contains(("field \"program\" (condition \"a\"): " + script.string() +
                         " is not executable; every run would fail (chmod +x it")
                            .c_str()),
      ExperimentError);
  CHECK_THROWS_WITH_AS(expand(R"({"name": "c", "launcher": "command", "np": [1], "command": [")" +
                              dir.path().string() + R"(", "{program}"]})"),
                       doctest::Contains(("field \"command\" (condition \"c\"): " +
                                          dir.path().string() + " is a directory")
                                             .c_str()),
                       ExperimentError);
  // torchrun runs a script through Python: no execute bit needed. Made executable: fine.
  CHECK_NOTHROW(expand(R"({"name": "t", "launcher": "torchrun", "np": [1]})"));
  std::filesystem::permissions(script, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  CHECK(expand(R"({"name": "a", "launcher": "single"})").size() == 1);
}
