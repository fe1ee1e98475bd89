#include "orchestrator/experiment_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "orchestrator/command_template.hpp"
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

// The value as an error message shows it, at most 40 characters.
std::string describe(const json& value) {
  // ASCII-only dump, so that cutting it cannot split a UTF-8 sequence.
  std::string text = value.dump(-1, ' ', true, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

}  // namespace

void ExperimentReader::fail(std::string_view expected) const {
  throw ExperimentError(fmt::format("{}: field \"{}\": expected {}, got {}", file_.string(),
                                    shown_path(where_), expected, describe(value_)));
}

void ExperimentReader::fail_key(const std::string& key, std::string_view expected) const {
  throw ExperimentError(fmt::format("{}: field \"{}\": expected {}, got the key \"{}\"",
                                    file_.string(), shown_path(path_step(where_, key)), expected,
                                    printable(key)));
}

void ExperimentReader::require_object(const std::vector<std::string>& known_keys) const {
  if (!value_.is_object()) fail("an object");
  for (const auto& [key, unused] : value_.items()) {
    if (std::find(known_keys.begin(), known_keys.end(), key) != known_keys.end()) continue;
    const auto suggestion = key.size() <= 100 ? util::closest_match(key, known_keys) : std::nullopt;
    throw ExperimentError(
        fmt::format("{}: field \"{}\": unknown field{}; known fields here: {}", file_.string(),
                    shown_path(path_step(where_, key)),
                    suggestion ? fmt::format(" (did you mean \"{}\"?)", *suggestion) : "",
                    fmt::join(known_keys, ", ")));
  }
}

void ExperimentReader::require_key(const std::string& key) const {
  if (!has(key))
    throw ExperimentError(fmt::format("{}: field \"{}\": missing (required)", file_.string(),
                                      shown_path(path_step(where_, key))));
}

std::string ExperimentReader::string() const {
  if (!value_.is_string()) fail("a string");
  const auto& text = value_.get_ref<const std::string&>();
  if (text.find('\0') != std::string::npos) fail("a string without NUL characters");
  return text;
}

std::string ExperimentReader::non_empty_string() const {
  auto text = string();
  if (text.empty()) fail("a non-empty string");
  return text;
}

std::string ExperimentReader::literal_string() const {
  auto text = string();
  if (has_known_placeholder(text))
    fail(
        "no placeholder: {np}, {program}, {repetition}, {condition} and {args} are expanded "
        "only in \"command\"");
  return text;
}

int ExperimentReader::int_in_range(long long max) const {
  const bool ok = value_.is_number_unsigned()
                      ? value_.get<unsigned long long>() >= 1 &&
                            value_.get<unsigned long long>() <= static_cast<unsigned long long>(max)
                      : value_.is_number_integer() && value_.get<long long>() >= 1 &&
                            value_.get<long long>() <= max;
  if (!ok) fail(fmt::format("a positive integer (at most {})", max));
  return static_cast<int>(value_.get<long long>());
}

TagOptions ExperimentReader::line_tags() const {
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

std::shared_ptr<const LineForms> ExperimentReader::line_forms() const {
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
    metrics.require_object(
        std::vector<std::string>(std::begin(kMetricNames), std::end(kMetricNames)));
    for (const auto& [name, value] : metrics.value().items())
      patterns.metrics.emplace_back(name, metrics.at(name).non_empty_string());
  }
  try {
    return line_forms_from_patterns(base.get(), patterns);
  } catch (const LineFormError& error) {
    // The field's own path in the file when it is there (a preset's field is not).
    if (!error.field.empty() && has(error.field[0])) {
      const ExperimentReader field = at(error.field[0]);
      if (error.field.size() > 1 && field.has(error.field[1]))
        field.at(error.field[1]).fail(error.what());
      field.fail(error.what());
    }
    fail(error.what());
  }
}

bool ExperimentReader::stdout_pty() const {
  if (!value_.is_string() || (string() != "pipe" && string() != "pty"))
    fail("\"pipe\" or \"pty\" (a pseudo-terminal: programs line-buffer as on a terminal)");
  return string() == "pty";
}

std::optional<ImagesPerEpoch> ExperimentReader::images_per_epoch() const {
  if (has("train_images") && has("train_images_per_rank"))
    at("train_images_per_rank")
        .fail("either \"train_images\" (all ranks) or \"train_images_per_rank\", not both");
  if (has("train_images")) return ImagesPerEpoch{at("train_images").train_images(), false};
  if (has("train_images_per_rank"))
    return ImagesPerEpoch{at("train_images_per_rank").train_images(), true};
  return std::nullopt;
}

long long ExperimentReader::train_images() const {
  const bool ok =
      value_.is_number_unsigned() && value_.get<unsigned long long>() >= 1 &&
      value_.get<unsigned long long>() <= static_cast<unsigned long long>(kMaxTrainImages);
  if (!ok) fail("a positive integer number of images per epoch (all ranks; at most 10^15)");
  return value_.get<long long>();
}

double ExperimentReader::timeout_seconds() const {
  // The parser admits only finite numbers; the range keeps now() + timeout far from the
  // clock's limit and every positive value at least one millisecond.
  if (!value_.is_number() || !(value_.get<double>() >= kMinTimeoutSeconds) ||
      !(value_.get<double>() <= kMaxTimeoutSeconds))
    fail(fmt::format("a number of seconds from {} to {} (30 days)", kMinTimeoutSeconds,
                     kMaxTimeoutSeconds));
  return value_.get<double>();
}

bool ExperimentReader::boolean() const {
  if (!value_.is_boolean()) fail("true or false");
  return value_.get<bool>();
}

std::vector<std::string> ExperimentReader::strings() const {
  if (!value_.is_array()) fail("an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < value_.size(); ++i) out.push_back(at(i).string());
  return out;
}

std::vector<std::string> ExperimentReader::level_args(bool& has_slot) const {
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

std::vector<std::string> ExperimentReader::literal_strings() const {
  if (!value_.is_array()) fail("an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < value_.size(); ++i) out.push_back(at(i).literal_string());
  return out;
}

std::vector<int> ExperimentReader::np_values() const {
  if (!value_.is_array() || value_.empty()) fail("a non-empty array of positive integers");
  std::vector<int> out;
  for (std::size_t i = 0; i < value_.size(); ++i) out.push_back(at(i).int_in_range(kMaxNp));
  if (std::set<int>(out.begin(), out.end()).size() != out.size()) fail("distinct np values");
  return out;
}

std::map<std::string, std::string> ExperimentReader::environment() const {
  if (!value_.is_object()) fail("an object of strings");
  std::map<std::string, std::string> out;
  for (const auto& [key, unused] : value_.items()) {
    const bool portable =
        !key.empty() && (std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_') &&
        key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
            std::string::npos;
    if (!portable)
      fail_key(key,
               "an environment variable name of letters, digits and _, not starting "
               "with a digit");
    out[key] = at(key).string();
  }
  return out;
}

std::vector<TrainerArgs::Option> ExperimentReader::options() const {
  if (!value_.is_object()) fail("an object of trainer options");
  std::vector<TrainerArgs::Option> out;
  for (const auto& [key, item] : value_.items()) {
    const bool name_ok = !key.empty() && key[0] != '-' &&
                         key.find_first_not_of(
                             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") ==
                             std::string::npos;
    if (!name_ok) fail_key(key, "an option name of letters, digits and _-. (not starting with -)");
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

TrainerArgs ExperimentReader::trainer_args() const {
  TrainerArgs out;
  if (has("trainer")) out.options = at("trainer").options();
  if (has("args")) out.raw = at("args").literal_strings();
  return out;
}

}  // namespace scalebench::orchestrator
