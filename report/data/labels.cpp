#include "report/data/labels.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "report/error.hpp"
#include "util/text.hpp"

namespace scalebench::report {

std::string Labels::of(std::string_view key, std::string_view fallback) const {
  const auto found = text.find(key);
  return found == text.end() ? std::string(fallback) : found->second;
}

std::string Labels::level(std::string_view factor, std::string_view level) const {
  const auto qualified = fmt::format("{}={}", factor, level);
  if (has(qualified)) return of(qualified, level);
  return of(level, level);
}

std::string Labels::level_with_factor(std::string_view factor, std::string_view level) const {
  if (has(fmt::format("{}={}", factor, level)) || has(level)) return this->level(factor, level);
  return fmt::format("{} = {}", this->factor(factor), level);
}

void add_label_argument(Labels& labels, std::string_view argument) {
  const auto equals = argument.find('=');
  // A level key has its own '=' ("model=vgg16=VGG-16"): the text follows the last one.
  const auto split = argument.rfind('=');
  if (equals == std::string_view::npos || split == 0 || split + 1 == argument.size())
    throw ReportError(fmt::format(
        "--label '{}': expected KEY=TEXT (a condition, factor, factor=level, np or column, "
        "then its text), e.g. --label hvd=Horovod",
        argument));
  if (const auto bad = util::first_invalid_utf8(argument))
    throw ReportError(fmt::format(
        "--label '{}': not valid UTF-8 at byte {} (0x{:02x}); labels are UTF-8 text",
        util::escape_controls(argument), *bad, static_cast<unsigned char>(argument[*bad])));
  for (const char c : argument)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      throw ReportError(fmt::format("--label '{}': a control character is not allowed", argument));
  labels.text[std::string(argument.substr(0, split))] = std::string(argument.substr(split + 1));
}

Labels labels_of_spec(const std::string& spec_json) {
  Labels labels;
  const auto spec = nlohmann::json::parse(spec_json, nullptr, false);
  if (!spec.is_object() || !spec.contains("labels") || !spec["labels"].is_object()) return labels;
  for (const auto& [key, value] : spec["labels"].items())
    if (value.is_string()) labels.text[key] = value.get<std::string>();
  return labels;
}

}  // namespace scalebench::report
