#include "orchestrator/experiment.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "orchestrator/suggest.hpp"

namespace scalebench::orchestrator {
namespace {

using nlohmann::json;

// Walks the JSON tree, remembering where it is, so that every error names its field.
class Reader {
 public:
  Reader(const std::filesystem::path& file, const json& value, std::string where)
      : file_(file), value_(value), where_(std::move(where)) {}

  [[noreturn]] void fail(std::string_view expected) const {
    throw ExperimentError(fmt::format("{}: field \"{}\": expected {}, got {}", file_.string(),
                                      where_.empty() ? "(top level)" : where_, expected,
                                      describe(value_)));
  }

  bool has(const std::string& key) const { return value_.contains(key); }
  Reader at(const std::string& key) const {
    return Reader(file_, value_.at(key), where_.empty() ? key : where_ + "." + key);
  }
  Reader at(std::size_t index) const {
    return Reader(file_, value_.at(index), fmt::format("{}[{}]", where_, index));
  }
  const json& value() const { return value_; }

  void require_object(const std::vector<std::string>& known_keys) const {
    if (!value_.is_object()) fail("an object");
    for (const auto& [key, unused] : value_.items()) {
      if (std::find(known_keys.begin(), known_keys.end(), key) != known_keys.end()) continue;
      const auto suggestion = closest_match(key, known_keys);
      const auto field = where_.empty() ? key : where_ + "." + key;
      throw ExperimentError(fmt::format(
          "{}: field \"{}\": unknown field{}; known fields here: {}", file_.string(), field,
          suggestion ? fmt::format(" (did you mean \"{}\"?)", *suggestion) : "",
          fmt::join(known_keys, ", ")));
    }
  }
  void require_key(const std::string& key) const {
    if (!has(key))
      throw ExperimentError(fmt::format("{}: field \"{}\": missing (required)", file_.string(),
                                        where_.empty() ? key : where_ + "." + key));
  }

  std::string string() const {
    if (!value_.is_string()) fail("a string");
    return value_.get<std::string>();
  }
  std::string non_empty_string() const {
    auto text = string();
    if (text.empty()) fail("a non-empty string");
    return text;
  }
  int positive_int() const {
    if (!value_.is_number_integer() || value_.get<long long>() < 1 ||
        value_.get<long long>() > 1'000'000)
      fail("a positive integer");
    return value_.get<int>();
  }
  double positive_number() const {
    if (!value_.is_number() || !(value_.get<double>() > 0)) fail("a positive number");
    return value_.get<double>();
  }
  bool boolean() const {
    if (!value_.is_boolean()) fail("true or false");
    return value_.get<bool>();
  }
  std::vector<std::string> strings() const {
    if (!value_.is_array()) fail("an array of strings");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < value_.size(); ++i) out.push_back(at(i).string());
    return out;
  }
  std::vector<int> positive_ints() const {
    if (!value_.is_array() || value_.empty()) fail("a non-empty array of positive integers");
    std::vector<int> out;
    for (std::size_t i = 0; i < value_.size(); ++i) out.push_back(at(i).positive_int());
    return out;
  }
  std::map<std::string, std::string> string_map() const {
    if (!value_.is_object()) fail("an object of strings");
    std::map<std::string, std::string> out;
    for (const auto& [key, unused] : value_.items()) out[key] = at(key).string();
    return out;
  }
  // {"epochs": 3, "dataset": "x", "verbose": true} -> --dataset x --epochs 3 --verbose
  std::vector<std::string> option_args() const {
    if (!value_.is_object()) fail("an object of trainer options");
    std::vector<std::string> out;
    for (const auto& [key, item] : value_.items()) {
      if (item.is_boolean()) {
        if (item.get<bool>()) out.push_back("--" + key);
        continue;
      }
      out.push_back("--" + key);
      if (item.is_string()) out.push_back(item.get<std::string>());
      else if (item.is_number()) out.push_back(item.dump());
      else at(key).fail("a string, number or boolean");
    }
    return out;
  }

 private:
  static std::string describe(const json& value) {
    std::string text = value.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
  }
  const std::filesystem::path& file_;
  const json& value_;
  std::string where_;
};

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 100) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
          c == ' ' || c == '='))
      return false;
  return true;
}

Launcher parse_launcher(const Reader& reader) {
  const auto name = reader.string();
  if (name == "single") return Launcher::Single;
  if (name == "mpirun") return Launcher::Mpirun;
  if (name == "srun") return Launcher::Srun;
  if (name == "command") return Launcher::Command;
  reader.fail("one of \"single\", \"mpirun\", \"srun\", \"command\"");
}

Condition parse_condition(const Reader& reader, const std::optional<std::vector<int>>& default_np) {
  reader.require_object({"name", "launcher", "np", "trainer", "args", "launcher_args", "command",
                         "env", "oversubscribe"});
  reader.require_key("name");
  reader.require_key("launcher");
  Condition condition;
  condition.name = reader.at("name").non_empty_string();
  if (!valid_name(condition.name))
    reader.at("name").fail("a name of letters, digits, spaces and _-.= (at most 100)");
  condition.launcher = parse_launcher(reader.at("launcher"));
  if (reader.has("np")) condition.np = reader.at("np").positive_ints();
  else if (condition.launcher == Launcher::Single) condition.np = {1};
  else if (default_np) condition.np = *default_np;
  else reader.require_key("np");
  if (condition.launcher == Launcher::Single && condition.np != std::vector<int>{1})
    reader.at("np").fail("[1] or nothing for launcher \"single\" (one plain process)");
  if (std::set<int>(condition.np.begin(), condition.np.end()).size() != condition.np.size())
    reader.at("np").fail("distinct np values");
  if (reader.has("trainer")) condition.trainer_args = reader.at("trainer").option_args();
  if (reader.has("args")) {
    auto args = reader.at("args").strings();
    condition.trainer_args.insert(condition.trainer_args.end(), args.begin(), args.end());
  }
  if (reader.has("launcher_args")) condition.launcher_args = reader.at("launcher_args").strings();
  if (reader.has("env")) condition.env = reader.at("env").string_map();
  if (reader.has("oversubscribe")) condition.oversubscribe = reader.at("oversubscribe").boolean();
  if (condition.launcher == Launcher::Command) {
    reader.require_key("command");
    condition.command = reader.at("command").strings();
    if (condition.command.empty()) reader.at("command").fail("a non-empty array of strings");
  } else if (reader.has("command")) {
    reader.at("command").fail("no \"command\" unless launcher is \"command\"");
  }
  return condition;
}

std::string position_of(const std::string& text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, column = 1;
    else ++column;
  }
  return fmt::format("{}:{}", line, column);
}

}  // namespace

std::string_view launcher_name(Launcher launcher) {
  switch (launcher) {
    case Launcher::Single: return "single";
    case Launcher::Mpirun: return "mpirun";
    case Launcher::Srun: return "srun";
    case Launcher::Command: return "command";
  }
  return "?";
}

Experiment load_experiment(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ExperimentError(fmt::format("{}: cannot open the experiment file", path.string()));
  std::stringstream text;
  text << file.rdbuf();
  return parse_experiment(text.str(), path);
}

Experiment parse_experiment(const std::string& text, const std::filesystem::path& path) {
  json document;
  try {
    document = json::parse(text);
  } catch (const json::parse_error& error) {
    std::string what = error.what();
    if (const auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    throw ExperimentError(fmt::format("{}:{}: not valid JSON: {}", path.string(),
                                      position_of(text, error.byte == 0 ? 0 : error.byte - 1),
                                      what));
  }
  const Reader root(path, document, "");
  root.require_object({"name", "description", "repetitions", "timeout_seconds", "program",
                       "trainer", "args", "np", "conditions"});
  root.require_key("name");
  root.require_key("conditions");

  Experiment experiment;
  experiment.source_path = path;
  experiment.spec_json = document.dump();
  experiment.name = root.at("name").non_empty_string();
  if (!valid_name(experiment.name))
    root.at("name").fail("a name of letters, digits, spaces and _-.= (at most 100)");
  if (root.has("description")) experiment.description = root.at("description").string();
  if (root.has("repetitions")) experiment.repetitions = root.at("repetitions").positive_int();
  if (root.has("timeout_seconds"))
    experiment.timeout_seconds = root.at("timeout_seconds").positive_number();
  if (root.has("program")) experiment.program = root.at("program").non_empty_string();
  if (root.has("trainer")) experiment.trainer_args = root.at("trainer").option_args();
  if (root.has("args")) {
    auto args = root.at("args").strings();
    experiment.trainer_args.insert(experiment.trainer_args.end(), args.begin(), args.end());
  }
  std::optional<std::vector<int>> default_np;
  if (root.has("np")) default_np = root.at("np").positive_ints();

  const auto conditions = root.at("conditions");
  if (!conditions.value().is_array() || conditions.value().empty())
    conditions.fail("a non-empty array of conditions");
  std::set<std::string> names;
  for (std::size_t i = 0; i < conditions.value().size(); ++i) {
    auto condition = parse_condition(conditions.at(i), default_np);
    if (!names.insert(condition.name).second)
      conditions.at(i).at("name").fail("a condition name not used before");
    experiment.conditions.push_back(std::move(condition));
  }
  return experiment;
}

std::vector<RunPlan> expand_matrix(const Experiment& experiment, const ExpandOptions& options) {
  const std::string program = experiment.program.value_or(options.default_program);
  std::vector<RunPlan> plans;
  for (int repetition = 1; repetition <= experiment.repetitions; ++repetition) {
    for (const auto& condition : experiment.conditions) {
      for (int np : condition.np) {
        std::vector<std::string> trainer{program};
        trainer.insert(trainer.end(), experiment.trainer_args.begin(), experiment.trainer_args.end());
        trainer.insert(trainer.end(), condition.trainer_args.begin(), condition.trainer_args.end());

        RunPlan plan;
        plan.condition = condition.name;
        plan.launcher = condition.launcher;
        plan.np = np;
        plan.repetition = repetition;
        plan.launch.env = condition.env;
        if (experiment.timeout_seconds)
          plan.launch.timeout = std::chrono::milliseconds(
              static_cast<long long>(*experiment.timeout_seconds * 1000.0));
        auto& argv = plan.launch.argv;
        switch (condition.launcher) {
          case Launcher::Single:
            argv = trainer;
            break;
          case Launcher::Mpirun:
            argv = {"mpirun", "-np", std::to_string(np), "--tag-output"};
            if (condition.oversubscribe) argv.push_back("--oversubscribe");
            argv.insert(argv.end(), condition.launcher_args.begin(), condition.launcher_args.end());
            argv.insert(argv.end(), trainer.begin(), trainer.end());
            if (options.running_as_root) {
              // Open MPI refuses root unless both variables are set (mpirun(1), "--allow-run-as-root").
              plan.launch.env.emplace("OMPI_ALLOW_RUN_AS_ROOT", "1");
              plan.launch.env.emplace("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
            }
            break;
          case Launcher::Srun:
            argv = {"srun", "-n", std::to_string(np), "--label"};
            argv.insert(argv.end(), condition.launcher_args.begin(), condition.launcher_args.end());
            argv.insert(argv.end(), trainer.begin(), trainer.end());
            plan.tags.rank_colon_prefix = true;
            break;
          case Launcher::Command:
            for (const auto& part : condition.command) {
              if (part == "{args}") {
                argv.insert(argv.end(), trainer.begin() + 1, trainer.end());
                continue;
              }
              std::string expanded = part;
              const std::pair<std::string, std::string> placeholders[] = {
                  {"{np}", std::to_string(np)},
                  {"{program}", program},
                  {"{repetition}", std::to_string(repetition)},
                  {"{condition}", condition.name}};
              for (const auto& [key, value] : placeholders)
                for (auto at = expanded.find(key); at != std::string::npos; at = expanded.find(key))
                  expanded.replace(at, key.size(), value);
              argv.push_back(expanded);
            }
            break;
        }
        plans.push_back(std::move(plan));
      }
    }
  }
  return plans;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789_-./=:,+@%") == std::string::npos;
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) {
      if (c == '\'') out += "'\\''";
      else out += c;
    }
    out += '\'';
  }
  return out;
}

}  // namespace scalebench::orchestrator
