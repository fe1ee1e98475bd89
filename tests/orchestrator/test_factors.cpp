// Factors in the experiment file (issue 11): parsing, the full factorial with exclusions, the
// run order and its seed, and the errors that name file, field and expectation.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "orchestrator/experiment.hpp"

using namespace scalebench::orchestrator;

namespace {

// Two models x (single + mpirun np 1, 2) x 2 repetitions: 12 runs.
constexpr const char* kTable2 = R"({
  "name": "t2", "repetitions": 2,
  "trainer": {"model": "mlp", "epochs": 2},
  "np": [1, 2],
  "factors": {"model": ["vgg16", "inception_v3"]},
  "conditions": [{"name": "single", "launcher": "single"},
                 {"name": "hvd", "launcher": "mpirun"}]
})";

std::string level_of(const RunPlan& plan, const std::string& factor) {
  for (const auto& [name, level] : plan.levels)
    if (name == factor) return level;
  return "<none>";
}

std::string error_of(const std::string& json, std::optional<std::uint64_t> seed = std::nullopt) {
  try {
    ExpandOptions options{"t", false};
    options.seed = seed;
    expand_matrix(parse_experiment(json, "exp.json"), options);
  } catch (const ExperimentError& error) {
    return error.what();
  }
  return "<no error>";
}

// The canonical text of a plan, to compare orders.
std::string cell_text(const RunPlan& plan) {
  std::string out = plan.condition;
  for (const auto& [factor, level] : plan.levels) out += " " + factor + "=" + level;
  return out + " np=" + std::to_string(plan.np) + " rep=" + std::to_string(plan.repetition);
}

}  // namespace

TEST_CASE("a factor crosses every condition and np value: the full factorial, interleaved") {
  const auto experiment = parse_experiment(kTable2, "exp.json");
  REQUIRE(experiment.factors.size() == 1);
  CHECK(experiment.factors[0].name == "model");
  REQUIRE(experiment.factors[0].levels.size() == 2);
  CHECK(experiment.factors[0].levels[0].name == "vgg16");

  const auto plans = expand_matrix(experiment, {"t", false});
  REQUIRE(plans.size() == 12);  // 2 models x (1 + 2) cells x 2 repetitions
  // Repetition 1 first; within it conditions, then levels, then np.
  const std::vector<std::string> first = {
      "single model=vgg16 np=1 rep=1",     "single model=inception_v3 np=1 rep=1",
      "hvd model=vgg16 np=1 rep=1",        "hvd model=vgg16 np=2 rep=1",
      "hvd model=inception_v3 np=1 rep=1", "hvd model=inception_v3 np=2 rep=1"};
  for (std::size_t i = 0; i < first.size(); ++i) CHECK(cell_text(plans[i]) == first[i]);
  CHECK(cell_text(plans[6]) == "single model=vgg16 np=1 rep=2");
  // The level's trainer option replaces the experiment's --model mlp in place.
  const auto& argv = plans[1].launch.argv;
  CHECK(std::count(argv.begin(), argv.end(), "--model") == 1);
  const auto model = std::find(argv.begin(), argv.end(), "--model");
  REQUIRE(model + 1 < argv.end());
  CHECK(*(model + 1) == "inception_v3");
}

TEST_CASE("a level object sets env, launcher_args, args and the program: a number is a level") {
  const auto plans = expand_matrix(parse_experiment(R"({
    "name": "x", "np": [2],
    "factors": {
      "transport": [
        {"name": "shm", "launcher_args": ["--mca", "btl", "self,vader"]},
        {"name": "tcp", "launcher_args": ["--mca", "btl", "self,tcp"], "env": {"OMPI_MCA_btl_tcp_if_include": "lo"}}
      ],
      "batch_size": [32, 64],
      "program": [{"name": "ours"}, {"name": "torch", "program": "/usr/bin/python3", "args": ["ddp.py"]}]
    },
    "conditions": [{"name": "mpi", "launcher": "mpirun", "env": {"A": "1"}}]
  })",
                                                    "exp.json"),
                                   {"/opt/train", false});
  REQUIRE(plans.size() == 8);
  // Factors in name order: batch_size, program, transport (a JSON object's keys, sorted).
  CHECK(plans[0].levels ==
        FactorLevels{{"batch_size", "32"}, {"program", "ours"}, {"transport", "shm"}});
  CHECK(plans[0].launch.argv == std::vector<std::string>{"mpirun", "-np", "2", "--tag-output",
                                                         "--mca", "btl", "self,vader", "/opt/train",
                                                         "--batch_size", "32"});
  const auto& tcp = plans[1];
  CHECK(level_of(tcp, "transport") == "tcp");
  CHECK(tcp.launch.env == std::map<std::string, std::string>{{"A", "1"},
                                                             {"OMPI_MCA_btl_tcp_if_include", "lo"},
                                                             {"PYTHONUNBUFFERED", "1"}});
  const auto& torch = plans[3];
  CHECK(level_of(torch, "program") == "torch");
  CHECK(torch.launch.argv == std::vector<std::string>{"mpirun", "-np", "2", "--tag-output", "--mca",
                                                      "btl", "self,tcp", "/usr/bin/python3",
                                                      "--batch_size", "32", "ddp.py"});
}

TEST_CASE("exclude leaves out the matching cells, by factor, condition, np or lists of them") {
  const auto count = [](const std::string& exclude) {
    std::string json = kTable2;
    json.insert(json.rfind('}'), ", \"exclude\": " + exclude);
    return expand_matrix(parse_experiment(json, "exp.json"), {"t", false}).size();
  };
  CHECK(count(R"([{"model": "vgg16", "np": 2}])") == 10);
  CHECK(count(R"([{"condition": "single"}])") == 8);
  CHECK(count(R"([{"condition": "single", "model": "inception_v3"}])") == 10);
  CHECK(count(R"([{"np": [1, 2], "launcher": "mpirun", "model": "vgg16"}])") == 8);
  CHECK(count(R"([{"model": "vgg16"}, {"np": 2}])") == 4);

  std::string json = kTable2;
  json.insert(json.rfind('}'), R"(, "exclude": [{"model": "vgg16", "np": 2}])");
  for (const auto& plan : expand_matrix(parse_experiment(json, "exp.json"), {"t", false}))
    CHECK_FALSE((level_of(plan, "model") == "vgg16" && plan.np == 2));
}

TEST_CASE("a randomized order shuffles within each repetition, the same for the same seed") {
  std::string json = kTable2;
  json.insert(json.rfind('}'), R"(, "order": "randomized", "seed": 7)");
  const auto experiment = parse_experiment(json, "exp.json");
  CHECK(experiment.order == RunOrder::Randomized);
  CHECK(experiment.seed == 7u);
  const auto interleaved = expand_matrix(parse_experiment(kTable2, "exp.json"), {"t", false});
  const auto a = expand_matrix(experiment, {"t", false});
  const auto b = expand_matrix(experiment, {"t", false});
  REQUIRE(a.size() == interleaved.size());
  std::vector<std::string> ta, tb, ti;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ta.push_back(cell_text(a[i]));
    tb.push_back(cell_text(b[i]));
    ti.push_back(cell_text(interleaved[i]));
    // Each repetition keeps its block: runs 1-6 are repetition 1.
    CHECK(a[i].repetition == static_cast<int>(i / 6 + 1));
  }
  CHECK(ta == tb);
  CHECK(ta != ti);
  CHECK(std::multiset<std::string>(ta.begin(), ta.end()) ==
        std::multiset<std::string>(ti.begin(), ti.end()));
  // The exact order for seed 7 is fixed across platforms (own Fisher-Yates on mt19937_64): a
  // change here changes the order that every stored seed stands for.
  CHECK(ta[0] == "hvd model=inception_v3 np=2 rep=1");
  CHECK(ta[1] == "single model=inception_v3 np=1 rep=1");
  CHECK(ta[5] == "hvd model=vgg16 np=2 rep=1");
  CHECK(ta[6] == "single model=inception_v3 np=1 rep=2");
  CHECK(ta[11] == "single model=vgg16 np=1 rep=2");
  std::string other = kTable2;
  other.insert(other.rfind('}'), R"(, "order": "randomized", "seed": 8)");
  const auto c = expand_matrix(parse_experiment(other, "exp.json"), {"t", false});
  std::vector<std::string> tc;
  for (const auto& plan : c) tc.push_back(cell_text(plan));
  CHECK(tc != ta);

  // Without a seed in the file the caller's drawn seed is used, and order_seed reports it.
  std::string unseeded = kTable2;
  unseeded.insert(unseeded.rfind('}'), R"(, "order": "randomized")");
  const auto drawn = parse_experiment(unseeded, "exp.json");
  CHECK(order_seed(drawn, 7) == 7u);
  CHECK(order_seed(experiment, 99) == 7u);
  CHECK_FALSE(order_seed(parse_experiment(kTable2, "exp.json"), 7));
  ExpandOptions with_seed{"t", false};
  with_seed.seed = 7;
  const auto d = expand_matrix(drawn, with_seed);
  for (std::size_t i = 0; i < d.size(); ++i) CHECK(cell_text(d[i]) == ta[i]);
  CHECK(error_of(unseeded).find("needs a \"seed\"") != std::string::npos);
}

TEST_CASE("the factor runs count toward the matrix limit before any plan is built") {
  std::string levels = "[";
  for (int i = 0; i < 200; ++i) levels += (i ? "," : "") + std::to_string(i);
  levels += "]";
  const std::string json = R"({"name":"x","factors":{"a":)" + levels + R"(,"b":)" + levels +
                           R"(},"conditions":[{"name":"s","launcher":"single"}]})";
  const auto message = error_of(json);
  CHECK(message.find("exp.json: field \"factors\": expected at most 10000 runs") == 0);
  CHECK(message.find("40000") != std::string::npos);
}

TEST_CASE("bad factors and exclusions are refused with file, field and expectation") {
  const auto with = [](const std::string& extra) {
    std::string json = kTable2;
    if (extra.find("\"factors\"") == 0) {
      const auto start = json.find("\"factors\"");
      json.erase(start, json.find('\n', start) - start + 1);
    }
    json.insert(json.rfind('}'), ", " + extra);
    return error_of(json);
  };
  CHECK(with(R"("factors": {"np": [1]})") ==
        "exp.json: field \"factors.np\": expected a factor name that is not a column of every run "
        "(condition, launcher and np are built in: use conditions and \"np\" for them), got the "
        "key \"np\"");
  CHECK(with(R"("factors": {"Status": ["a"]})").find("field \"factors.Status\"") !=
        std::string::npos);
  CHECK(with(R"("factors": {"9x": ["a"]})").find("expected a factor name of letters") !=
        std::string::npos);
  CHECK(with(R"("factors": {"model": []})") ==
        "exp.json: field \"factors.model\": expected a non-empty array of levels, got []");
  CHECK(with(R"("factors": {"model": ["a", "a"]})") ==
        "exp.json: field \"factors.model[1]\": expected a level name not used before in factor "
        "\"model\", got \"a\"");
  CHECK(with(R"("factors": {"model": [{"name": "a", "trainr": {}}]})")
            .find("field \"factors.model[0].trainr\": unknown field (did you mean \"trainer\"?)") !=
        std::string::npos);
  CHECK(with(R"("factors": {"model": [true]})").find("expected a level: a string or number") !=
        std::string::npos);
  CHECK(
      with(
          R"("factors": {"a": [{"name": "x", "program": "p"}], "b": [{"name": "y", "program": "q"}]})")
          .find("factor \"a\" sets it already") != std::string::npos);
  CHECK(
      with(
          R"("factors": {"a": [{"name": "x", "env": {"V": "1"}}], "b": [{"name": "y", "env": {"V": "2"}}]})")
          .find("levels that do not set V") != std::string::npos);
  // exclude: unknown names get a "did you mean", unknown levels the known ones.
  CHECK(with(R"("exclude": [{"modle": "vgg16"}])")
            .find("field \"exclude[0].modle\": unknown field (did you mean \"model\"?)") !=
        std::string::npos);
  CHECK(with(R"("exclude": [{"model": "vgg19"}])") ==
        "exp.json: field \"exclude[0].model\": expected one of vgg16, inception_v3, got \"vgg19\"");
  CHECK(with(R"("exclude": [{"np": 4}])") ==
        "exp.json: field \"exclude[0].np\": expected one of 1, 2, got 4");
  CHECK(with(R"("exclude": [{"condition": "single", "np": 2}])") ==
        "exp.json: field \"exclude[0]\": expected an exclusion that matches a cell of the matrix, "
        "but it matches none (a typo, or a combination that does not occur)");
  CHECK(with(R"("exclude": [{"np": [1, 2]}])") ==
        "exp.json: field \"exclude\": every cell of the matrix is excluded");
  CHECK(with(R"("order": "random")") ==
        "exp.json: field \"order\": expected \"interleaved\" or \"randomized\", got \"random\"");
  CHECK(with(R"("order": "randomized", "seed": -1)").find("expected an integer seed from 0") !=
        std::string::npos);
  CHECK(with(R"("seed": 3)") ==
        "exp.json: field \"seed\": expected no \"seed\" unless \"order\" is \"randomized\", got 3");
}

TEST_CASE("a level that does not fit the condition it meets names the cell and the way out") {
  const auto message = error_of(R"({"name": "x", "np": [1],
    "factors": {"transport": [{"name": "shm", "launcher_args": ["--mca", "btl", "self,vader"]}]},
    "conditions": [{"name": "single", "launcher": "single"}]})");
  CHECK(message ==
        "exp.json: condition \"single\", transport \"shm\": launcher_args, but launcher \"single\" "
        "has no launcher to pass them to; leave the cell out with \"exclude\"");
  CHECK(error_of(R"({"name": "x", "np": [1],
    "factors": {"transport": [{"name": "shm", "launcher_args": ["--mca", "btl", "self,vader"]}]},
    "exclude": [{"condition": "single"}],
    "conditions": [{"name": "single", "launcher": "single"}, {"name": "m", "launcher": "mpirun"}]})") ==
        "<no error>");
  // A level switching the launcher: single -> mpirun is fine, command needs a template.
  CHECK(error_of(R"({"name": "x", "np": [2],
    "factors": {"via": [{"name": "cmd", "launcher": "command"}]},
    "conditions": [{"name": "m", "launcher": "mpirun"}]})")
            .find("launcher \"command\" without a \"command\" template") != std::string::npos);
  CHECK(error_of(R"({"name": "x", "np": [2],
    "factors": {"via": [{"name": "hydra", "command": ["mpiexec", "-n", "{np}", "{program}", "{args}"]}]},
    "conditions": [{"name": "m", "launcher": "mpirun"}]})")
            .find("a \"command\" from factor \"via\", but launcher \"mpirun\"") !=
        std::string::npos);
  const auto plans = expand_matrix(parse_experiment(R"({"name": "x", "np": [2],
    "factors": {"via": [{"name": "hydra", "launcher": "command",
                         "command": ["mpiexec", "-n", "{np}", "{program}", "{args}"]}]},
    "trainer": {"epochs": 1},
    "conditions": [{"name": "m", "launcher": "mpirun"}]})",
                                                    "exp.json"),
                                   {"/t", false});
  REQUIRE(plans.size() == 1);
  CHECK(plans[0].launcher == Launcher::Command);
  CHECK(plans[0].launch.argv ==
        std::vector<std::string>{"mpiexec", "-n", "2", "/t", "--epochs", "1"});
}

TEST_CASE("factors_json lists the factors and levels in order, for the instance record") {
  CHECK(factors_json(parse_experiment(kTable2, "exp.json")) ==
        R"([{"levels":["vgg16","inception_v3"],"name":"model"}])");
  CHECK(factors_json(parse_experiment(
            R"({"name":"x","conditions":[{"name":"s","launcher":"single"}]})", "exp.json")) ==
        "[]");
}

TEST_CASE("a level's args: appended, around the others with {args}, or replacing them") {
  const auto experiment = parse_experiment(R"({"name": "s", "trainer": {"epochs": 2},
    "args": ["--x", "1"],
    "factors": {"script": [
      {"name": "ours"},
      {"name": "wrapped", "program": "/usr/bin/python3", "args": ["-u", "run.py", "{args}", "--y"]},
      {"name": "alone", "program": "/usr/bin/python3", "args_replace": true,
       "args": ["alone.py", "--steps", "5"]}]},
    "conditions": [{"name": "a", "launcher": "single", "args": ["--c"]}]})",
                                           "exp.json");
  const auto plans = expand_matrix(experiment, {"/opt/t", false});
  REQUIRE(plans.size() == 3);
  const auto argv = [&](const char* level) {
    for (const auto& plan : plans)
      if (plan.levels.at(0).second == level) return plan.launch.argv;
    FAIL("no plan for " << level);
    return std::vector<std::string>{};
  };
  CHECK(argv("ours") == std::vector<std::string>{"/opt/t", "--epochs", "2", "--x", "1", "--c"});
  CHECK(argv("wrapped") == std::vector<std::string>{"/usr/bin/python3", "-u", "run.py", "--epochs",
                                                    "2", "--x", "1", "--c", "--y"});
  CHECK(argv("alone") == std::vector<std::string>{"/usr/bin/python3", "alone.py", "--steps", "5"});
  // Other placeholders stay refused, and one slot at most.
  const auto error = [](const std::string& args) {
    try {
      parse_experiment(R"({"name": "s", "factors": {"f": [{"name": "l", "args": )" + args +
                           R"(}]}, "conditions": [{"name": "a", "launcher": "single"}]})",
                       "exp.json");
    } catch (const ExperimentError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error(R"(["{np}"])").find("no placeholder") != std::string::npos);
  CHECK(error(R"(["{args}", "{args}"])").find("one \"{args}\" at most") != std::string::npos);
}
