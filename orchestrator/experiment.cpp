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
#include "orchestrator/json_document.hpp"
#include "util/text.hpp"

namespace scalebench::orchestrator {
namespace {

using nlohmann::json;

// True when `text` holds a placeholder that is expanded in "command" (or {args}).
bool has_known_placeholder(std::string_view text) {
  bool found = false;
  scan_template(
      text, [](std::string_view) {},
      [&](std::string_view name) { found |= is_command_placeholder(name) || name == "args"; });
  return found;
}

// Walks the JSON tree, remembering where it is, so that every error names its field.
class Reader {
 public:
  Reader(const std::filesystem::path& file, const json& value, std::string where)
      : file_(file), value_(value), where_(std::move(where)) {}

  [[noreturn]] void fail(std::string_view expected) const {
    throw ExperimentError(fmt::format("{}: field \"{}\": expected {}, got {}", file_.string(),
                                      shown_path(where_), expected, describe(value_)));
  }
  // For a problem with a key rather than its value.
  [[noreturn]] void fail_key(const std::string& key, std::string_view expected) const {
    throw ExperimentError(fmt::format("{}: field \"{}\": expected {}, got the key \"{}\"",
                                      file_.string(), shown_path(path_step(where_, key)), expected,
                                      printable(key)));
  }

  bool has(const std::string& key) const { return value_.contains(key); }
  Reader at(const std::string& key) const {
    return Reader(file_, value_.at(key), path_step(where_, key));
  }
  Reader at(std::size_t index) const {
    return Reader(file_, value_.at(index), fmt::format("{}[{}]", where_, index));
  }
  const json& value() const { return value_; }
  const std::string& path() const { return where_; }

  void require_object(const std::vector<std::string>& known_keys) const {
    if (!value_.is_object()) fail("an object");
    for (const auto& [key, unused] : value_.items()) {
      if (std::find(known_keys.begin(), known_keys.end(), key) != known_keys.end()) continue;
      const auto suggestion =
          key.size() <= 100 ? util::closest_match(key, known_keys) : std::nullopt;
      throw ExperimentError(
          fmt::format("{}: field \"{}\": unknown field{}; known fields here: {}", file_.string(),
                      shown_path(path_step(where_, key)),
                      suggestion ? fmt::format(" (did you mean \"{}\"?)", *suggestion) : "",
                      fmt::join(known_keys, ", ")));
    }
  }
  void require_key(const std::string& key) const {
    if (!has(key))
      throw ExperimentError(fmt::format("{}: field \"{}\": missing (required)", file_.string(),
                                        shown_path(path_step(where_, key))));
  }

  // Every string may end up in an argv, an environment or the database: none may hold a NUL.
  std::string string() const {
    if (!value_.is_string()) fail("a string");
    const auto& text = value_.get_ref<const std::string&>();
    if (text.find('\0') != std::string::npos) fail("a string without NUL characters");
    return text;
  }
  std::string non_empty_string() const {
    auto text = string();
    if (text.empty()) fail("a non-empty string");
    return text;
  }
  // A string passed as it is, where a placeholder would be a mistake (they work in "command").
  std::string literal_string() const {
    auto text = string();
    if (has_known_placeholder(text))
      fail(
          "no placeholder: {np}, {program}, {repetition}, {condition} and {args} are expanded "
          "only in \"command\"");
    return text;
  }
  int int_in_range(long long max) const {
    const bool ok =
        value_.is_number_unsigned()
            ? value_.get<unsigned long long>() >= 1 &&
                  value_.get<unsigned long long>() <= static_cast<unsigned long long>(max)
            : value_.is_number_integer() && value_.get<long long>() >= 1 &&
                  value_.get<long long>() <= max;
    if (!ok) fail(fmt::format("a positive integer (at most {})", max));
    return static_cast<int>(value_.get<long long>());
  }
  // "line_tags": a form's name, or {"pattern": "regex with (?<rank>...)"}.
  TagOptions line_tags() const {
    if (value_.is_string()) {
      try {
        return tag_options_named(string());
      } catch (const std::invalid_argument&) {
        fail(fmt::format("one of {} or {{\"pattern\": \"...(?<rank>\\\\d+)...\"}}",
                         fmt::join(kLineTagNames, ", ")));
      }
    }
    if (!value_.is_object()) fail("a tag form's name or an object with \"pattern\"");
    require_object({"pattern"});
    require_key("pattern");
    const auto pattern = at("pattern").non_empty_string();
    if (pattern.size() > 1000) at("pattern").fail("a pattern of at most 1000 characters");
    TagOptions options;
    try {
      options.pattern = std::make_shared<const TagPattern>(pattern);
    } catch (const std::invalid_argument& error) {
      at("pattern").fail(
          fmt::format("a regular expression with one (?<rank>...) group ({})", error.what()));
    }
    return options;
  }
  // "line_forms": a preset's name, or {"preset", "epoch_start", "epoch_base", "epoch_end",
  // "total_epochs", "metrics": {"loss": ...}} (orchestrator/line_forms.hpp).
  std::shared_ptr<const LineForms> line_forms() const {
    const auto names = fmt::format("{}", fmt::join(kLineFormNames, ", "));
    if (value_.is_string()) {
      try {
        return line_forms_named(string());
      } catch (const std::invalid_argument&) {
        fail(fmt::format("one of {} or an object of patterns", names));
      }
    }
    if (!value_.is_object()) fail(fmt::format("one of {} or an object of patterns", names));
    require_object({"preset", "epoch_start", "epoch_base", "epoch_end", "total_epochs", "metrics"});
    std::shared_ptr<const LineForms> base;
    if (has("preset")) base = at("preset").line_forms();
    LineFormPatterns patterns;
    if (has("epoch_start")) patterns.epoch_start = at("epoch_start").non_empty_string();
    if (has("epoch_end")) patterns.epoch_end = at("epoch_end").non_empty_string();
    if (has("epoch_base")) {
      const auto& v = at("epoch_base").value();
      if (!v.is_number_integer() || (v.get<long long>() != 0 && v.get<long long>() != 1))
        at("epoch_base").fail("0 or 1 (the number the program gives its first epoch)");
      patterns.epoch_base = static_cast<int>(v.get<long long>());
    }
    if (has("total_epochs")) patterns.total_epochs = at("total_epochs").int_in_range(1'000'000);
    if (has("metrics")) {
      const auto metrics = at("metrics");
      if (!metrics.value().is_object()) metrics.fail("an object of metric patterns");
      metrics.require_object({kMetricNames[0].data(), kMetricNames[1].data(),
                              kMetricNames[2].data(), kMetricNames[3].data()});
      for (const auto& [name, value] : metrics.value().items())
        patterns.metrics.emplace_back(name, metrics.at(name).non_empty_string());
    }
    try {
      return line_forms_from_patterns(base.get(), patterns);
    } catch (const LineFormError& error) {
      // The field's own path in the file when it is there (a preset's field is not).
      if (!error.field.empty() && has(error.field[0])) {
        const Reader field = at(error.field[0]);
        if (error.field.size() > 1 && field.has(error.field[1]))
          field.at(error.field[1]).fail(error.what());
        field.fail(error.what());
      }
      fail(error.what());
    }
  }
  // "stdout": "pipe" (the default) or "pty".
  bool stdout_pty() const {
    if (!value_.is_string() || (string() != "pipe" && string() != "pty"))
      fail("\"pipe\" or \"pty\" (a pseudo-terminal: programs line-buffer as on a terminal)");
    return string() == "pty";
  }
  // "train_images" or "train_images_per_rank" of this object, at most one of them.
  std::optional<ImagesPerEpoch> images_per_epoch() const {
    if (has("train_images") && has("train_images_per_rank"))
      at("train_images_per_rank")
          .fail("either \"train_images\" (all ranks) or \"train_images_per_rank\", not both");
    if (has("train_images")) return ImagesPerEpoch{at("train_images").train_images(), false};
    if (has("train_images_per_rank"))
      return ImagesPerEpoch{at("train_images_per_rank").train_images(), true};
    return std::nullopt;
  }
  long long train_images() const {
    const bool ok =
        value_.is_number_unsigned() && value_.get<unsigned long long>() >= 1 &&
        value_.get<unsigned long long>() <= static_cast<unsigned long long>(kMaxTrainImages);
    if (!ok) fail("a positive integer number of images per epoch (all ranks; at most 10^15)");
    return value_.get<long long>();
  }
  double timeout_seconds() const {
    // The parser admits only finite numbers; the range keeps now() + timeout far from the
    // clock's limit and every positive value at least one millisecond.
    if (!value_.is_number() || !(value_.get<double>() >= kMinTimeoutSeconds) ||
        !(value_.get<double>() <= kMaxTimeoutSeconds))
      fail(fmt::format("a number of seconds from {} to {} (30 days)", kMinTimeoutSeconds,
                       kMaxTimeoutSeconds));
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
  // A level's "args": literal strings, but one element may be exactly "{args}", the place of the
  // arguments the experiment and condition give (the level's args then go around them).
  std::vector<std::string> level_args(bool& has_slot) const {
    if (!value_.is_array()) fail("an array of strings");
    std::vector<std::string> out;
    has_slot = false;
    for (std::size_t i = 0; i < value_.size(); ++i) {
      if (value_[i].is_string() && value_[i].get<std::string>() == "{args}") {
        if (has_slot) at(i).fail("one \"{args}\" at most");
        has_slot = true;
        out.emplace_back("{args}");
        continue;
      }
      out.push_back(at(i).literal_string());
    }
    return out;
  }
  std::vector<std::string> literal_strings() const {
    if (!value_.is_array()) fail("an array of strings");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < value_.size(); ++i) out.push_back(at(i).literal_string());
    return out;
  }
  std::vector<int> np_values() const {
    if (!value_.is_array() || value_.empty()) fail("a non-empty array of positive integers");
    std::vector<int> out;
    for (std::size_t i = 0; i < value_.size(); ++i) out.push_back(at(i).int_in_range(kMaxNp));
    if (std::set<int>(out.begin(), out.end()).size() != out.size()) fail("distinct np values");
    return out;
  }
  // Names a POSIX shell could export ([A-Za-z_][A-Za-z0-9_]*): anything else (empty, '=', NUL)
  // cannot be passed to a process's environment as asked.
  std::map<std::string, std::string> environment() const {
    if (!value_.is_object()) fail("an object of strings");
    std::map<std::string, std::string> out;
    for (const auto& [key, unused] : value_.items()) {
      const bool portable =
          !key.empty() && (std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_') &&
          key.find_first_not_of(
              "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
              std::string::npos;
      if (!portable)
        fail_key(key,
                 "an environment variable name of letters, digits and _, not starting "
                 "with a digit");
      out[key] = at(key).string();
    }
    return out;
  }
  // {"epochs": 3, "dataset": "x", "verbose": true} -> --dataset x --epochs 3 --verbose
  std::vector<TrainerArgs::Option> options() const {
    if (!value_.is_object()) fail("an object of trainer options");
    std::vector<TrainerArgs::Option> out;
    for (const auto& [key, item] : value_.items()) {
      const bool name_ok =
          !key.empty() && key[0] != '-' &&
          key.find_first_not_of(
              "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") ==
              std::string::npos;
      if (!name_ok)
        fail_key(key, "an option name of letters, digits and _-. (not starting with -)");
      TrainerArgs::Option option{key, {}};
      if (item.is_boolean()) {
        if (item.get<bool>()) option.argv.push_back("--" + key);
      } else if (item.is_string()) {
        option.argv = {"--" + key, at(key).literal_string()};
      } else if (item.is_number()) {
        option.argv = {"--" + key, item.dump()};
      } else {
        at(key).fail("a string, number or boolean");
      }
      out.push_back(std::move(option));
    }
    return out;
  }
  // The "trainer" and "args" fields of the object being read.
  TrainerArgs trainer_args() const {
    TrainerArgs out;
    if (has("trainer")) out.options = at("trainer").options();
    if (has("args")) out.raw = at("args").literal_strings();
    return out;
  }

 private:
  static std::string describe(const json& value) {
    // ASCII-only dump, so that cutting it cannot split a UTF-8 sequence.
    std::string text = value.dump(-1, ' ', true, json::error_handler_t::replace);
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
  if (name == "torchrun") return Launcher::Torchrun;
  if (name == "command") return Launcher::Command;
  reader.fail("one of \"single\", \"mpirun\", \"srun\", \"torchrun\", \"command\"");
}

// A "command" argv template, its placeholders checked.
std::vector<std::string> command_template(const Reader& command) {
  auto parts = command.strings();
  if (parts.empty()) command.fail("a non-empty array of strings");
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

Condition parse_condition(const Reader& reader, const std::optional<std::vector<int>>& default_np) {
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
    if (condition.program->empty()) reader.at("program").fail("a non-empty string");
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
FactorLevel parse_level(const Reader& reader, const std::string& factor) {
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
      if (level.program->empty()) reader.at("program").fail("a non-empty string");
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

std::vector<Factor> parse_factors(const Reader& reader) {
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

std::vector<Exclusion> parse_exclude(const Reader& reader, const std::vector<Factor>& factors,
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
      const auto one = [&](const Reader& item) {
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

  const Reader root(path, document, "");
  root.require_object({"name", "description", "repetitions", "timeout_seconds", "program",
                       "trainer", "args", "np", "conditions", "factors", "exclude", "order", "seed",
                       "train_images", "train_images_per_rank", "stdout", "warmup_epochs",
                       "line_forms"});
  root.require_key("name");
  root.require_key("conditions");

  Experiment experiment;
  experiment.source_path = path;
  experiment.spec_json = document.dump();
  experiment.name = root.at("name").non_empty_string();
  if (!valid_name(experiment.name))
    root.at("name").fail("a name of letters, digits, spaces and _-.= (at most 100)");
  if (root.has("description")) experiment.description = root.at("description").string();
  if (root.has("repetitions"))
    experiment.repetitions = root.at("repetitions").int_in_range(kMaxRepetitions);
  if (root.has("timeout_seconds"))
    experiment.timeout_seconds = root.at("timeout_seconds").timeout_seconds();
  if (root.has("program")) {
    experiment.program = root.at("program").literal_string();
    if (experiment.program->empty()) root.at("program").fail("a non-empty string");
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
  return experiment;
}

}  // namespace scalebench::orchestrator
