#include "orchestrator/experiment.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "orchestrator/command_template.hpp"
#include "orchestrator/experiment_reader.hpp"
#include "orchestrator/json_document.hpp"
#include "util/label_keys.hpp"
#include "util/text.hpp"

namespace scalebench::orchestrator {
namespace {

using nlohmann::json;

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 100) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
          c == ' ' || c == '='))
      return false;
  return true;
}

Launcher parse_launcher(const ExperimentReader& reader) {
  const auto name = reader.string();
  if (name == "single") return Launcher::Single;
  if (name == "mpirun") return Launcher::Mpirun;
  if (name == "srun") return Launcher::Srun;
  if (name == "torchrun") return Launcher::Torchrun;
  if (name == "command") return Launcher::Command;
  reader.fail("one of \"single\", \"mpirun\", \"srun\", \"torchrun\", \"command\"");
}

// A program to run: empty or blank runs nothing, in every cell.
constexpr std::string_view kProgramExpected =
    "the program to run (a path or a name on PATH), not an empty or blank string";
bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos;
}

// A "command" argv template, its placeholders checked.
std::vector<std::string> command_template(const ExperimentReader& command) {
  auto parts = command.strings();
  if (parts.empty()) command.fail("a non-empty array of strings");
  // The first element is the program run: an empty one (or blank) runs nothing, in every cell.
  if (is_blank(parts.front())) command.at(0).fail(kProgramExpected);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& part = parts[i];
    if (part == "{args}") continue;
    scan_template(
        part, [](std::string_view) {},
        [&](std::string_view name) {
          if (name == "args")
            command.at(i).fail("{args} as a whole element (it becomes the trainer arguments)");
          if (!is_command_placeholder(name))
            command.at(i).fail(fmt::format(
                "only the placeholders {{np}}, {{program}}, {{repetition}}, {{condition}} and a "
                "whole-element {{args}}, not {{{}}} (write {{{{ and }}}} for literal braces)",
                printable(name)));
        });
  }
  return parts;
}

Condition parse_condition(const ExperimentReader& reader,
                          const std::optional<std::vector<int>>& default_np) {
  reader.require_object({"name", "launcher", "np", "trainer", "args", "launcher_args", "command",
                         "env", "oversubscribe", "train_images", "train_images_per_rank", "program",
                         "line_tags", "stdout", "line_forms"});
  reader.require_key("name");
  reader.require_key("launcher");
  Condition condition;
  condition.name = reader.at("name").non_empty_string();
  if (!valid_name(condition.name))
    reader.at("name").fail("a name of letters, digits, spaces and _-.= (at most 100)");
  condition.launcher = parse_launcher(reader.at("launcher"));
  if (reader.has("np"))
    condition.np = reader.at("np").np_values();
  else if (condition.launcher == Launcher::Single)
    condition.np = {1};
  else if (default_np)
    condition.np = *default_np;
  else
    reader.require_key("np");
  if (condition.launcher == Launcher::Single && condition.np != std::vector<int>{1})
    reader.at("np").fail("[1] or nothing for launcher \"single\" (one plain process)");
  condition.trainer = reader.trainer_args();
  if (reader.has("launcher_args"))
    condition.launcher_args = reader.at("launcher_args").literal_strings();
  if (reader.has("env")) condition.env = reader.at("env").environment();
  if (reader.has("oversubscribe")) condition.oversubscribe = reader.at("oversubscribe").boolean();
  condition.train_images = reader.images_per_epoch();
  if (reader.has("line_tags")) condition.line_tags = reader.at("line_tags").line_tags();
  if (reader.has("line_forms")) condition.line_forms = reader.at("line_forms").line_forms();
  if (reader.has("stdout")) condition.stdout_pty = reader.at("stdout").stdout_pty();
  if (reader.has("program")) {
    condition.program = reader.at("program").literal_string();
    if (is_blank(*condition.program)) reader.at("program").fail(kProgramExpected);
  }
  if (condition.launcher == Launcher::Command) {
    reader.require_key("command");
    condition.command = command_template(reader.at("command"));
  } else if (reader.has("command")) {
    reader.at("command").fail("no \"command\" unless launcher is \"command\"");
  }
  return condition;
}

std::string lower_case(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_reserved_factor_name(std::string_view name) {
  // SQLite compares column names without case: "NP" would collide with np in a view.
  for (const auto reserved : kReservedFactorNames)
    if (lower_case(reserved) == lower_case(name)) return true;
  return false;
}

bool valid_factor_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 &&
         (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
         name.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
             std::string::npos;
}

// A level: a string or number (shorthand: the trainer option named after the factor), or an
// object naming what the level changes.
FactorLevel parse_level(const ExperimentReader& reader, const std::string& factor) {
  FactorLevel level;
  const auto& value = reader.value();
  if (value.is_string() || value.is_number()) {
    level.name = value.is_string() ? reader.non_empty_string() : value.dump();
    if (value.is_string()) reader.literal_string();
    level.trainer.options.push_back({factor, {"--" + factor, level.name}});
  } else if (value.is_object()) {
    reader.require_object({"name", "trainer", "args", "launcher_args", "env", "program", "launcher",
                           "command", "train_images", "train_images_per_rank", "line_tags",
                           "stdout", "args_replace", "line_forms"});
    reader.require_key("name");
    level.name = reader.at("name").non_empty_string();
    if (reader.has("trainer")) level.trainer.options = reader.at("trainer").options();
    if (reader.has("args")) level.trainer.raw = reader.at("args").level_args(level.args_around);
    if (reader.has("args_replace")) {
      const auto flag = reader.at("args_replace");
      if (!flag.value().is_boolean()) flag.fail("true or false");
      level.args_replace = flag.value().get<bool>();
      if (level.args_replace && level.args_around)
        flag.fail("no \"args_replace\" with an \"{args}\" slot in \"args\" (replace or wrap)");
    }
    if (reader.has("launcher_args"))
      level.launcher_args = reader.at("launcher_args").literal_strings();
    if (reader.has("env")) level.env = reader.at("env").environment();
    if (reader.has("program")) {
      level.program = reader.at("program").literal_string();
      if (is_blank(*level.program)) reader.at("program").fail(kProgramExpected);
    }
    if (reader.has("launcher")) level.launcher = parse_launcher(reader.at("launcher"));
    level.train_images = reader.images_per_epoch();
    if (reader.has("line_tags")) level.line_tags = reader.at("line_tags").line_tags();
    if (reader.has("line_forms")) level.line_forms = reader.at("line_forms").line_forms();
    if (reader.has("stdout")) level.stdout_pty = reader.at("stdout").stdout_pty();
    if (reader.has("command")) {
      if (level.launcher && *level.launcher != Launcher::Command)
        reader.at("command").fail("no \"command\" unless launcher is \"command\"");
      level.command = command_template(reader.at("command"));
    }
  } else {
    reader.fail(
        "a level: a string or number (sets the trainer option of the factor's name), or an "
        "object with \"name\" and what the level sets");
  }
  if (!valid_name(level.name))
    (value.is_object() ? reader.at("name") : reader)
        .fail("a level name of letters, digits, spaces and _-.= (at most 100)");
  return level;
}

std::vector<Factor> parse_factors(const ExperimentReader& reader) {
  if (!reader.value().is_object() || reader.value().empty())
    reader.fail("an object of factors, each a non-empty array of levels");
  std::vector<Factor> factors;
  // Settings one run can take only once: two factors setting them would contradict each other.
  std::map<std::string, std::string> sets_single;  // "program" -> factor
  for (const auto& [name, unused] : reader.value().items()) {
    if (!valid_factor_name(name))
      reader.fail_key(name,
                      "a factor name of letters, digits and _, not starting with a digit (at most "
                      "64)");
    if (is_reserved_factor_name(name))
      reader.fail_key(name,
                      "a factor name that is not a column of every run (condition, launcher and "
                      "np are built in: use conditions and \"np\" for them)");
    // SQLite compares column names without case: "Model" and "model" would be one column of
    // the epoch_levels view, and its answers wrong.
    for (const auto& earlier : factors)
      if (lower_case(earlier.name) == lower_case(name))
        reader.fail_key(
            name, fmt::format("a factor name that differs from \"{}\" (field \"{}\") "
                              "in more than case (SQLite column names ignore case)",
                              earlier.name, shown_path(path_step(reader.path(), earlier.name))));
    const auto levels = reader.at(name);
    if (!levels.value().is_array() || levels.value().empty())
      levels.fail("a non-empty array of levels");
    Factor factor{name, {}};
    std::set<std::string> seen;
    for (std::size_t i = 0; i < levels.value().size(); ++i) {
      auto level = parse_level(levels.at(i), name);
      if (!seen.insert(level.name).second)
        levels.at(i).fail(fmt::format("a level name not used before in factor \"{}\"", name));
      const auto claim = [&](const char* setting, bool set) {
        if (!set) return;
        const auto [it, inserted] = sets_single.try_emplace(setting, name);
        if (!inserted && it->second != name)
          levels.at(i).fail(
              fmt::format("no \"{}\": factor \"{}\" sets it already, and one run has one {}",
                          setting, it->second, setting));
      };
      claim("program", level.program.has_value());
      claim("launcher", level.launcher.has_value());
      claim("command", !level.command.empty());
      factor.levels.push_back(std::move(level));
    }
    factors.push_back(std::move(factor));
  }
  // The same environment variable set by levels of two factors: one would silently win.
  std::map<std::string, std::string> env_owner;
  for (const auto& factor : factors)
    for (const auto& level : factor.levels)
      for (const auto& [key, unused] : level.env) {
        const auto [it, inserted] = env_owner.try_emplace(key, factor.name);
        if (!inserted && it->second != factor.name)
          reader.at(factor.name)
              .fail(fmt::format("levels that do not set {} (factor \"{}\" sets it already)", key,
                                it->second));
      }
  return factors;
}

std::vector<Exclusion> parse_exclude(const ExperimentReader& reader,
                                     const std::vector<Factor>& factors,
                                     const std::vector<Condition>& conditions) {
  if (!reader.value().is_array()) reader.fail("an array of objects");
  std::vector<std::string> keys = {"condition", "launcher", "np"};
  for (const auto& factor : factors) keys.push_back(factor.name);
  std::vector<Exclusion> out;
  for (std::size_t i = 0; i < reader.value().size(); ++i) {
    const auto entry = reader.at(i);
    if (!entry.value().is_object() || entry.value().empty())
      entry.fail("a non-empty object of condition, launcher, np or factor names and their values");
    entry.require_object(keys);
    Exclusion exclusion;
    exclusion.where = fmt::format("exclude[{}]", i);
    for (const auto& [key, value] : entry.value().items()) {
      const auto field = entry.at(key);
      std::vector<std::string> known;
      if (key == "condition") {
        for (const auto& c : conditions) known.push_back(c.name);
      } else if (key == "launcher") {
        known = {"single", "mpirun", "srun", "torchrun", "command"};
      } else if (key == "np") {
        std::set<int> values;
        for (const auto& c : conditions) values.insert(c.np.begin(), c.np.end());
        for (int np : values) known.push_back(std::to_string(np));
      } else {
        for (const auto& factor : factors)
          if (factor.name == key)
            for (const auto& level : factor.levels) known.push_back(level.name);
      }
      const auto one = [&](const ExperimentReader& item) {
        const auto& v = item.value();
        std::string text;
        if (key == "np" && v.is_number_integer())
          text = v.dump();
        else if (v.is_string())
          text = item.string();
        else if (v.is_number())
          text = v.dump();
        else
          item.fail(key == "np" ? "an np value or an array of them"
                                : "a level name or an array of them");
        if (std::find(known.begin(), known.end(), text) == known.end())
          item.fail(fmt::format("one of {}", fmt::join(known, ", ")));
        return text;
      };
      if (value.is_array()) {
        if (value.empty()) field.fail("a non-empty array of values");
        for (std::size_t j = 0; j < value.size(); ++j)
          exclusion.match[key].push_back(one(field.at(j)));
      } else {
        exclusion.match[key].push_back(one(field));
      }
    }
    out.push_back(std::move(exclusion));
  }
  return out;
}

}  // namespace

std::string_view run_order_name(RunOrder order) {
  return order == RunOrder::Randomized ? "randomized" : "interleaved";
}

std::optional<std::uint64_t> order_seed(const Experiment& experiment, std::uint64_t drawn) {
  if (experiment.order != RunOrder::Randomized) return std::nullopt;
  return experiment.seed.value_or(drawn & kMaxSeed);
}

std::string factors_json(const Experiment& experiment) {
  json out = json::array();
  for (const auto& factor : experiment.factors) {
    json levels = json::array();
    for (const auto& level : factor.levels) levels.push_back(level.name);
    out.push_back({{"name", factor.name}, {"levels", levels}});
  }
  return out.dump();
}

std::string_view launcher_name(Launcher launcher) {
  switch (launcher) {
    case Launcher::Single:
      return "single";
    case Launcher::Mpirun:
      return "mpirun";
    case Launcher::Srun:
      return "srun";
    case Launcher::Torchrun:
      return "torchrun";
    case Launcher::Command:
      return "command";
  }
  return "?";
}

Experiment load_experiment(const std::filesystem::path& path) {
  const auto name = path.string();
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat on the descriptor refuses
  // anything but a regular file before the first read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    throw ExperimentError(
        fmt::format("{}: cannot open the experiment file: {}", name, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0)
    throw ExperimentError(
        fmt::format("{}: cannot read the experiment file: {}", name, std::strerror(errno)));
  if (S_ISDIR(info.st_mode))
    throw ExperimentError(fmt::format("{}: is a directory; expected an experiment file", name));
  if (!S_ISREG(info.st_mode))
    throw ExperimentError(fmt::format(
        "{}: is not a regular file (a FIFO, socket or device); expected an experiment file", name));
  const auto too_big = [&] {
    return ExperimentError(
        fmt::format("{}: larger than the limit of {} bytes (4 MiB) for an "
                    "experiment file",
                    name, kMaxExperimentFileBytes));
  };
  if (static_cast<std::uintmax_t>(info.st_size) > kMaxExperimentFileBytes) throw too_big();
  // The limit holds while reading too: the file may grow after fstat.
  std::string text(kMaxExperimentFileBytes + 1, '\0');
  std::size_t size = 0;
  while (size < text.size()) {
    const auto got = ::read(fd, text.data() + size, text.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw ExperimentError(
          fmt::format("{}: cannot read the experiment file: {}", name, std::strerror(errno)));
    if (got == 0) break;
    size += static_cast<std::size_t>(got);
  }
  if (size > kMaxExperimentFileBytes) throw too_big();
  text.resize(size);
  return parse_experiment(text, path);
}

namespace {

// The names a "labels" key may give: every condition, launcher, factor and level (alone or as
// factor=level), "np", and the report's columns.
std::vector<std::string> label_keys(const Experiment& experiment) {
  std::vector<std::string> keys = {"np"};
  for (const auto column : util::kLabelColumns) keys.emplace_back(column);
  for (const auto launcher :
       {Launcher::Single, Launcher::Mpirun, Launcher::Srun, Launcher::Torchrun, Launcher::Command})
    keys.emplace_back(launcher_name(launcher));
  for (const auto& condition : experiment.conditions) keys.push_back(condition.name);
  for (const auto& factor : experiment.factors) {
    keys.push_back(factor.name);
    for (const auto& level : factor.levels) {
      keys.push_back(level.name);
      keys.push_back(factor.name + "=" + level.name);
    }
  }
  return keys;
}

constexpr std::size_t kMaxLabelBytes = 200;

std::map<std::string, std::string> parse_labels(const ExperimentReader& labels,
                                                const Experiment& experiment) {
  if (!labels.value().is_object()) labels.fail("an object of \"name\": \"text\" pairs");
  const auto keys = label_keys(experiment);
  std::map<std::string, std::string> out;
  for (const auto& [key, unused] : labels.value().items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      const auto near = key.size() <= 100 ? util::closest_match(key, keys) : std::nullopt;
      labels.fail_key(key, fmt::format("a condition, launcher, factor, factor=level, level, np or "
                                       "column ({}){}",
                                       fmt::join(util::kLabelColumns, ", "),
                                       near ? fmt::format("; did you mean \"{}\"?", *near) : ""));
    }
    const auto text = labels.at(key).non_empty_string();
    const bool control = std::any_of(text.begin(), text.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
    });
    if (control || text.size() > kMaxLabelBytes)
      labels.at(key).fail(
          fmt::format("a text of at most {} bytes without control characters", kMaxLabelBytes));
    out[key] = text;
  }
  return out;
}

// "repetitions": {"min": 3, "max": 20, "precision": 0.02}.
stats::PrecisionRule parse_precision_rule(const ExperimentReader& field) {
  field.require_object({"min", "max", "precision"});
  for (const char* key : {"min", "max", "precision"}) field.require_key(key);
  stats::PrecisionRule rule;
  const auto whole = [](const ExperimentReader& value, long long low, long long high,
                        std::string_view expected) {
    const auto& v = value.value();
    if (!v.is_number_integer() || v.get<long long>() < low || v.get<long long>() > high)
      value.fail(expected);
    return static_cast<int>(v.get<long long>());
  };
  rule.min_runs = whole(field.at("min"), 2, kMaxRepetitions,
                        fmt::format("a whole number of runs from 2 to {}", kMaxRepetitions));
  rule.max_runs = whole(field.at("max"), rule.min_runs, kMaxRepetitions,
                        fmt::format("a whole number of runs from \"min\" ({}) to {}", rule.min_runs,
                                    kMaxRepetitions));
  const auto precision = field.at("precision");
  if (!precision.value().is_number() || !(precision.value().get<double>() > 0) ||
      !(precision.value().get<double>() < 1))
    precision.fail("a relative half-width above 0 and below 1 (0.02: +/-2 % of the mean)");
  rule.precision = precision.value().get<double>();
  return rule;
}

}  // namespace

void set_precision(Experiment& experiment, double precision) {
  if (!(precision > 0 && precision < 1))
    throw ExperimentError(fmt::format(
        "--precision {}: expected a relative half-width above 0 and below 1", precision));
  if (!experiment.precision)
    throw ExperimentError(fmt::format(
        "{}: --precision needs \"repetitions\": {{\"min\": 3, \"max\": 20, \"precision\": "
        "...}} in the file; its \"repetitions\" is the integer {}",
        experiment.source_path.string(), experiment.repetitions));
  experiment.precision->precision = precision;
  auto spec = json::parse(experiment.spec_json);
  spec["repetitions"]["precision"] = precision;
  experiment.spec_json = spec.dump();
}

Experiment parse_experiment(const std::string& text, const std::filesystem::path& path) {
  if (text.size() > kMaxExperimentFileBytes)
    throw ExperimentError(
        fmt::format("{}: larger than the limit of {} bytes (4 MiB) for an "
                    "experiment file",
                    path.string(), kMaxExperimentFileBytes));
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ExperimentError(
        fmt::format("{}: the file is empty; expected a JSON object", path.string()));
  const json document = parse_json_document(text, path);

  const ExperimentReader root(path, document, "");
  root.require_object(
      {"name",    "description",   "repetitions", "timeout_seconds", "program",
       "trainer", "args",          "np",          "conditions",      "factors",
       "exclude", "order",         "seed",        "train_images",    "train_images_per_rank",
       "stdout",  "warmup_epochs", "line_forms",  "labels",          "precision"});
  root.require_key("name");
  root.require_key("conditions");

  Experiment experiment;
  experiment.source_path = path;
  experiment.spec_json = document.dump();
  experiment.name = root.at("name").non_empty_string();
  if (!valid_name(experiment.name))
    root.at("name").fail("a name of letters, digits, spaces and _-.= (at most 100)");
  if (root.has("description")) experiment.description = root.at("description").string();
  if (root.has("repetitions")) {
    if (root.at("repetitions").value().is_object()) {
      experiment.precision = parse_precision_rule(root.at("repetitions"));
      experiment.repetitions = experiment.precision->max_runs;
    } else {
      experiment.repetitions = root.at("repetitions").int_in_range(kMaxRepetitions);
    }
  }
  if (root.has("precision"))
    root.at("precision")
        .fail(experiment.precision
                  ? "no top-level \"precision\": it goes inside \"repetitions\""
                  : "\"repetitions\": {\"min\": 3, \"max\": 20, \"precision\": 0.02} for a "
                    "precision (an integer \"repetitions\" takes none)");
  if (root.has("timeout_seconds"))
    experiment.timeout_seconds = root.at("timeout_seconds").timeout_seconds();
  if (root.has("program")) {
    experiment.program = root.at("program").literal_string();
    if (is_blank(*experiment.program)) root.at("program").fail(kProgramExpected);
  }
  experiment.trainer = root.trainer_args();
  experiment.train_images = root.images_per_epoch();
  if (root.has("stdout")) experiment.stdout_pty = root.at("stdout").stdout_pty();
  if (root.has("line_forms")) experiment.line_forms = root.at("line_forms").line_forms();
  if (root.has("warmup_epochs")) {
    const auto warmup = root.at("warmup_epochs");
    const auto& value = warmup.value();
    if (!value.is_number_integer() || value.get<long long>() < 0 ||
        value.get<long long>() > kMaxWarmupEpochs)
      warmup.fail(fmt::format("a whole number of epochs from 0 to {}", kMaxWarmupEpochs));
    experiment.warmup_epochs = static_cast<int>(value.get<long long>());
  }
  std::optional<std::vector<int>> default_np;
  if (root.has("np")) default_np = root.at("np").np_values();

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
  if (root.has("factors")) experiment.factors = parse_factors(root.at("factors"));
  if (root.has("exclude"))
    experiment.exclude =
        parse_exclude(root.at("exclude"), experiment.factors, experiment.conditions);
  if (root.has("order")) {
    const auto order = root.at("order").string();
    if (order == "interleaved")
      experiment.order = RunOrder::Interleaved;
    else if (order == "randomized")
      experiment.order = RunOrder::Randomized;
    else
      root.at("order").fail("\"interleaved\" or \"randomized\"");
  }
  if (root.has("seed")) {
    const auto seed = root.at("seed");
    const auto& value = seed.value();
    const bool ok = (value.is_number_unsigned() && value.get<std::uint64_t>() <= kMaxSeed) ||
                    (value.is_number_integer() && value.get<long long>() == 0);
    if (!ok) seed.fail(fmt::format("an integer seed from 0 to {} (2^53 - 1)", kMaxSeed));
    if (experiment.order != RunOrder::Randomized)
      seed.fail("no \"seed\" unless \"order\" is \"randomized\"");
    experiment.seed = value.get<std::uint64_t>();
  }
  if (root.has("labels")) experiment.labels = parse_labels(root.at("labels"), experiment);
  return experiment;
}

}  // namespace scalebench::orchestrator
