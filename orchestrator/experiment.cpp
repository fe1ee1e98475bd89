#include "orchestrator/experiment.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "util/text.hpp"

namespace scalebench::orchestrator {
namespace {

using nlohmann::json;

// Text from the file as it may appear inside a one-line message: printable ASCII, anything else
// escaped, at most `limit` characters.
std::string printable(std::string_view text, std::size_t limit = 40) {
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= limit) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

// One step of a field path: `.key` when the key is a plain word, else `["key"]` escaped.
std::string path_step(std::string_view parent, std::string_view key) {
  const bool plain = !key.empty() && key.size() <= 40 &&
                     key.find_first_not_of(
                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789_-") == std::string_view::npos;
  if (plain) return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
  return fmt::format("{}[\"{}\"]", parent, printable(key));
}

// A path for a message: long ones (64 levels) keep their start and end.
std::string shown_path(const std::string& path) {
  if (path.empty()) return "(top level)";
  if (path.size() <= 160) return path;
  return path.substr(0, 60) + "..." + path.substr(path.size() - 97);
}

std::string position_of(const std::string& text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n')
      ++line, column = 1;
    else
      ++column;
  }
  return fmt::format("{}:{}", line, column);
}

// Where the brackets first nest deeper than kMaxJsonDepth (the text up to there is valid JSON,
// so brackets inside strings are the only ones to skip).
std::size_t depth_exceeded_at(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return text.size();
}

// Builds the document through nlohmann's SAX interface, whose parser is iterative: the depth
// limit is enforced before a deeper level exists (the DOM's own destructor and dump recurse),
// a repeated key is refused where nlohmann would keep the last one silently, and every error
// names the path being read.
class DocumentBuilder final : public nlohmann::json_sax<json> {
 public:
  DocumentBuilder(const std::string& text, const std::filesystem::path& file)
      : text_(text), file_(file) {}

  json take() { return std::move(root_); }

  bool null() override { return put(json(nullptr)); }
  bool boolean(bool value) override { return put(json(value)); }
  bool number_integer(number_integer_t value) override { return put(json(value)); }
  bool number_unsigned(number_unsigned_t value) override { return put(json(value)); }
  // nlohmann reports a non-finite double (1e400) through parse_error, never here.
  bool number_float(number_float_t value, const string_t&) override { return put(json(value)); }
  bool string(string_t& value) override { return put(json(std::move(value))); }
  bool binary(binary_t& value) override { return put(json::binary(std::move(value))); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& key) override {
    Frame& top = frames_.back();
    if (top.value->contains(key))
      throw ExperimentError(
          fmt::format("{}: field \"{}\": expected each key once in an object, got \"{}\" twice",
                      file_.string(), shown_path(path_step(top.path, key)), printable(key)));
    top.key = std::move(key);
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::json::exception& error) override {
    if (error.id == 406) {  // number overflow: a literal outside the range of a double
      const std::size_t start = position > last_token.size() ? position - last_token.size() : 0;
      throw ExperimentError(
          fmt::format("{}:{}: field \"{}\": expected a number within the range of a double, got {}",
                      file_.string(), position_of(text_, start), shown_path(next_path()),
                      printable(last_token)));
    }
    std::string what = error.what();
    if (const auto at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    throw ExperimentError(fmt::format("{}:{}: not valid JSON: {}", file_.string(),
                                      position_of(text_, position == 0 ? 0 : position - 1),
                                      printable(what, 200)));
  }

 private:
  struct Frame {
    json* value;
    std::string path;
    std::string key;  // the key whose value comes next, in an object
  };

  // The path of the value about to be read.
  std::string next_path() const {
    if (frames_.empty()) return "";
    const Frame& top = frames_.back();
    if (top.value->is_object()) return path_step(top.path, top.key);
    return fmt::format("{}[{}]", top.path, top.value->size());
  }
  json* insert(json&& value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& top = *frames_.back().value;
    if (top.is_object()) return &(top[frames_.back().key] = std::move(value));
    top.push_back(std::move(value));
    return &top.back();
  }
  bool put(json&& value) {
    insert(std::move(value));
    return true;
  }
  bool open(json&& container) {
    auto path = next_path();
    if (frames_.size() >= static_cast<std::size_t>(kMaxJsonDepth))
      throw ExperimentError(fmt::format(
          "{}:{}: field \"{}\": expected at most {} levels of nested arrays and objects",
          file_.string(), position_of(text_, depth_exceeded_at(text_)), shown_path(path),
          kMaxJsonDepth));
    // A child is complete before its parent grows again, so the pointer stays valid.
    frames_.push_back({insert(std::move(container)), std::move(path), {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }

  const std::string& text_;
  const std::filesystem::path& file_;
  json root_;
  std::vector<Frame> frames_;
};

// Placeholders of "command" elements: `{name}` with name of [a-z_]; `{{` and `}}` stand for
// literal braces. Substitution is one pass from left to right: substituted text is never scanned
// again, so a value containing `{program}` cannot recurse.
template <class Literal, class Named>
void scan_template(std::string_view text, Literal&& literal, Named&& named) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal(text.substr(i, 1));
      i += 2;
      continue;
    }
    if (c == '{') {
      std::size_t j = i + 1;
      while (j < text.size() &&
             (std::islower(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        ++j;
      if (j > i + 1 && j < text.size() && text[j] == '}') {
        named(text.substr(i + 1, j - i - 1));
        i = j + 1;
        continue;
      }
    }
    std::size_t next = text.find_first_of("{}", i + 1);
    if (next == std::string_view::npos) next = text.size();
    literal(text.substr(i, next - i));
    i = next;
  }
}

constexpr std::string_view kCommandPlaceholders[] = {"np", "program", "repetition", "condition"};

bool is_command_placeholder(std::string_view name) {
  return std::find(std::begin(kCommandPlaceholders), std::end(kCommandPlaceholders), name) !=
         std::end(kCommandPlaceholders);
}

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
  std::vector<std::string> option_args() const {
    if (!value_.is_object()) fail("an object of trainer options");
    std::vector<std::string> out;
    for (const auto& [key, item] : value_.items()) {
      const bool name_ok =
          !key.empty() && key[0] != '-' &&
          key.find_first_not_of(
              "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") ==
              std::string::npos;
      if (!name_ok)
        fail_key(key, "an option name of letters, digits and _-. (not starting with -)");
      if (item.is_boolean()) {
        if (item.get<bool>()) out.push_back("--" + key);
        continue;
      }
      if (item.is_string()) {
        out.push_back("--" + key);
        out.push_back(at(key).literal_string());
      } else if (item.is_number()) {
        out.push_back("--" + key);
        out.push_back(item.dump());
      } else {
        at(key).fail("a string, number or boolean");
      }
    }
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
  if (reader.has("trainer")) condition.trainer_args = reader.at("trainer").option_args();
  if (reader.has("args")) {
    auto args = reader.at("args").literal_strings();
    condition.trainer_args.insert(condition.trainer_args.end(), args.begin(), args.end());
  }
  if (reader.has("launcher_args"))
    condition.launcher_args = reader.at("launcher_args").literal_strings();
  if (reader.has("env")) condition.env = reader.at("env").environment();
  if (reader.has("oversubscribe")) condition.oversubscribe = reader.at("oversubscribe").boolean();
  if (condition.launcher == Launcher::Command) {
    reader.require_key("command");
    const auto command = reader.at("command");
    condition.command = command.strings();
    if (condition.command.empty()) command.fail("a non-empty array of strings");
    for (std::size_t i = 0; i < condition.command.size(); ++i) {
      const auto& part = condition.command[i];
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
  } else if (reader.has("command")) {
    reader.at("command").fail("no \"command\" unless launcher is \"command\"");
  }
  return condition;
}

}  // namespace

std::string_view launcher_name(Launcher launcher) {
  switch (launcher) {
    case Launcher::Single:
      return "single";
    case Launcher::Mpirun:
      return "mpirun";
    case Launcher::Srun:
      return "srun";
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
  DocumentBuilder builder(text, path);
  json::sax_parse(text, &builder);
  const json document = builder.take();

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
  if (root.has("repetitions"))
    experiment.repetitions = root.at("repetitions").int_in_range(kMaxRepetitions);
  if (root.has("timeout_seconds"))
    experiment.timeout_seconds = root.at("timeout_seconds").timeout_seconds();
  if (root.has("program")) {
    experiment.program = root.at("program").literal_string();
    if (experiment.program->empty()) root.at("program").fail("a non-empty string");
  }
  if (root.has("trainer")) experiment.trainer_args = root.at("trainer").option_args();
  if (root.has("args")) {
    auto args = root.at("args").literal_strings();
    experiment.trainer_args.insert(experiment.trainer_args.end(), args.begin(), args.end());
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
  return experiment;
}

namespace {

// Bytes a string costs in an argv or environment held in memory (its text and its object).
double cost(std::string_view text) {
  return static_cast<double>(text.size() + sizeof(std::string));
}

// An upper bound of one run's argv and env for a condition, computed from sizes alone: a
// template repeating {args} or {program} must be refused before it is built, not after.
double run_bytes(const Experiment& experiment, const Condition& condition,
                 const std::string& program) {
  double trainer = cost(program);
  for (const auto& arg : experiment.trainer_args) trainer += cost(arg);
  for (const auto& arg : condition.trainer_args) trainer += cost(arg);
  double total = 0;
  for (const auto& [key, value] : condition.env) total += cost(key) + cost(value);
  const double digits = 20;  // the widest np or repetition
  switch (condition.launcher) {
    case Launcher::Single:
      return total + trainer;
    case Launcher::Mpirun:
    case Launcher::Srun:
      total += trainer + 5 * cost("--oversubscribe") + 2 * cost("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM");
      for (const auto& arg : condition.launcher_args) total += cost(arg);
      return total;
    case Launcher::Command:
      for (const auto& part : condition.command) {
        if (part == "{args}") {
          total += trainer - cost(program);
          continue;
        }
        double size = static_cast<double>(sizeof(std::string));
        scan_template(
            part, [&](std::string_view text) { size += static_cast<double>(text.size()); },
            [&](std::string_view name) {
              if (name == "program")
                size += static_cast<double>(program.size());
              else if (name == "condition")
                size += static_cast<double>(condition.name.size());
              else
                size += digits;
            });
        total += size;
      }
      return total;
  }
  return total;
}

// One "command" element with its placeholders replaced in a single pass.
std::string expand_part(std::string_view part, int np, const std::string& program, int repetition,
                        const std::string& condition) {
  std::string out;
  scan_template(
      part, [&](std::string_view text) { out += text; },
      [&](std::string_view name) {
        if (name == "np")
          out += std::to_string(np);
        else if (name == "program")
          out += program;
        else if (name == "repetition")
          out += std::to_string(repetition);
        else if (name == "condition")
          out += condition;
        else
          out += fmt::format("{{{}}}", name);  // refused by parse_experiment
      });
  return out;
}

// The limits, from counts and sizes, before any plan exists.
void check_matrix_size(const Experiment& experiment, const std::string& program,
                       const ExpandOptions& options) {
  const auto file = experiment.source_path.string();
  if (experiment.timeout_seconds && !(*experiment.timeout_seconds >= kMinTimeoutSeconds &&
                                      *experiment.timeout_seconds <= kMaxTimeoutSeconds))
    throw ExperimentError(
        fmt::format("{}: field \"timeout_seconds\": expected a number of seconds from {} to {} (30 "
                    "days), got {}",
                    file, kMinTimeoutSeconds, kMaxTimeoutSeconds, *experiment.timeout_seconds));
  std::size_t cells = 0;
  for (const auto& condition : experiment.conditions) cells += condition.np.size();
  const auto repetitions = static_cast<std::size_t>(std::max(experiment.repetitions, 0));
  if (cells != 0 && repetitions > options.max_runs / cells)
    throw ExperimentError(fmt::format(
        "{}: field \"repetitions\": expected at most {} runs in the matrix (repetitions x the np "
        "values of all conditions), got {} x {} = {}; raise the limit with --max-runs N if you "
        "mean it",
        file, options.max_runs, repetitions, cells,
        static_cast<double>(repetitions) * static_cast<double>(cells)));
  double matrix = 0;
  for (std::size_t i = 0; i < experiment.conditions.size(); ++i) {
    const auto& condition = experiment.conditions[i];
    const double one_run = run_bytes(experiment, condition, program);
    if (one_run > static_cast<double>(kMaxRunArgumentBytes))
      throw ExperimentError(fmt::format(
          "{}: field \"conditions[{}]\": expected the argv and env of one run to hold at most {} "
          "bytes (1 MiB), got about {:.0f}",
          file, i, kMaxRunArgumentBytes, one_run));
    matrix += one_run * static_cast<double>(condition.np.size()) * static_cast<double>(repetitions);
  }
  if (matrix > static_cast<double>(kMaxMatrixArgumentBytes))
    throw ExperimentError(fmt::format(
        "{}: field \"repetitions\": expected the argv and env of all runs to hold at most {} bytes "
        "(256 MiB), got about {:.0f}; fewer repetitions or shorter arguments",
        file, kMaxMatrixArgumentBytes, matrix));
}

}  // namespace

std::vector<RunPlan> expand_matrix(const Experiment& experiment, const ExpandOptions& options) {
  const std::string program = experiment.program.value_or(options.default_program);
  check_matrix_size(experiment, program, options);
  std::vector<RunPlan> plans;
  for (int repetition = 1; repetition <= experiment.repetitions; ++repetition) {
    for (const auto& condition : experiment.conditions) {
      for (int np : condition.np) {
        std::vector<std::string> trainer{program};
        trainer.insert(trainer.end(), experiment.trainer_args.begin(),
                       experiment.trainer_args.end());
        trainer.insert(trainer.end(), condition.trainer_args.begin(), condition.trainer_args.end());

        RunPlan plan;
        plan.condition = condition.name;
        plan.launcher = condition.launcher;
        plan.np = np;
        plan.repetition = repetition;
        plan.launch.env = condition.env;
        // In range (check_matrix_size), so the product and the cast are exact enough and defined.
        if (experiment.timeout_seconds)
          plan.launch.timeout =
              std::chrono::milliseconds(std::llround(*experiment.timeout_seconds * 1000.0));
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
              // Open MPI refuses root unless both variables are set (mpirun(1),
              // "--allow-run-as-root").
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
              if (part == "{args}")
                argv.insert(argv.end(), trainer.begin() + 1, trainer.end());
              else
                argv.push_back(expand_part(part, np, program, repetition, condition.name));
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
      if (c == '\'')
        out += "'\\''";
      else
        out += c;
    }
    out += '\'';
  }
  return out;
}

}  // namespace scalebench::orchestrator
