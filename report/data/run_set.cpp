#include "report/data/run_set.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "report/error.hpp"

namespace scalebench::report {

std::vector<std::string> unit_names() { return {"run", "nested", "epoch"}; }

void check_unit(std::string_view unit) {
  const auto names = unit_names();
  if (std::find(names.begin(), names.end(), unit) == names.end())
    throw ReportError(
        fmt::format("unknown unit of analysis '{}'; the units: {}", unit, fmt::join(names, ", ")));
}

std::string group_label(std::string_view condition, std::string_view launcher, int np,
                        const FactorLevels& levels) {
  std::string label(condition);
  for (const auto& [factor, level] : levels) label += fmt::format(" {}={}", factor, level);
  if (launcher != "single") label += fmt::format(" np={}", np);
  return label;
}

std::vector<std::size_t> group_order_key(
    const std::vector<std::string>& condition_order,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& level_order,
    std::string_view condition, const FactorLevels& levels, std::string_view launcher, int np) {
  const auto rank = [](const std::vector<std::string>& order, std::string_view value) {
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), value) - order.begin());
  };
  std::vector<std::size_t> key = {rank(condition_order, condition)};
  for (const auto& [factor, level] : levels) {
    const auto known = std::find_if(level_order.begin(), level_order.end(),
                                    [&](const auto& entry) { return entry.first == factor; });
    key.push_back(known == level_order.end() ? 0 : rank(known->second, level));
  }
  key.push_back(launcher == "single" ? 0 : 1);
  key.push_back(static_cast<std::size_t>(np));
  return key;
}

TrainerHeader TrainerHeader::parse(std::string_view line) {
  TrainerHeader header;
  std::size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    std::size_t end = at;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    const auto word = line.substr(at, end - at);
    const auto eq = word.find('=');
    if (eq != std::string_view::npos)
      header.fields.emplace_back(std::string(word.substr(0, eq)), std::string(word.substr(eq + 1)));
    at = end;
  }
  return header;
}

std::optional<std::string> TrainerHeader::value(std::string_view key) const {
  for (const auto& [name, text] : fields)
    if (name == key) return text;
  return std::nullopt;
}

std::optional<double> TrainerHeader::number(std::string_view key) const {
  const auto text = value(key);
  if (!text) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(*text, &used);
    if (used == text->size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

double Run::mean_epoch_seconds() const {
  if (epochs.empty()) return 0;
  double sum = 0;
  for (const auto& epoch : epochs) sum += epoch.seconds;
  return sum / static_cast<double>(epochs.size());
}

std::optional<double> Run::images_per_second() const {
  if (!train_images || epochs.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& epoch : epochs) sum += epoch.seconds;
  if (!(sum > 0)) return std::nullopt;
  return static_cast<double>(*train_images) * static_cast<double>(epochs.size()) / sum;
}

std::optional<std::string> Run::level(std::string_view factor) const {
  if (factor == "condition") return condition;
  if (factor == "launcher") return launcher;
  if (factor == "np") return std::to_string(np);
  if (factor == "group") return group();
  for (const auto& [name, value] : levels)
    if (name == factor) return value;
  return std::nullopt;
}

std::vector<std::string> RunSet::factors() const {
  std::vector<std::string> names = {"condition", "launcher", "np"};
  for (const auto& run : runs)
    for (const auto& [factor, level] : run.levels)
      if (std::find(names.begin(), names.end(), factor) == names.end()) names.push_back(factor);
  return names;
}

std::vector<std::string> RunSet::level_order_of(std::string_view factor) const {
  if (factor == "condition") return condition_order;
  if (factor == "group") {  // the report's row order
    std::vector<std::pair<std::vector<std::size_t>, std::string>> groups;
    for (const auto& run : runs) {
      const auto label = run.group();
      if (std::any_of(groups.begin(), groups.end(),
                      [&](const auto& group) { return group.second == label; }))
        continue;
      groups.emplace_back(group_order_key(condition_order, level_order, run.condition, run.levels,
                                          run.launcher, run.np),
                          label);
    }
    std::stable_sort(groups.begin(), groups.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> order;
    for (auto& group : groups) order.push_back(std::move(group.second));
    return order;
  }
  if (factor == "np") {
    std::set<int> nps;
    for (const auto& run : runs) nps.insert(run.np);
    std::vector<std::string> order;
    for (const int np : nps) order.push_back(std::to_string(np));
    return order;
  }
  for (const auto& [name, levels] : level_order)
    if (name == factor) return levels;
  return {};
}

RunFilter RunFilter::parse(const std::vector<std::string>& only,
                           std::optional<std::string> condition) {
  RunFilter filter;
  for (const auto& text : only) {
    const auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0)
      throw InputError(
          fmt::format("--only {}: expected FACTOR=LEVEL, e.g. condition=mpirun", text));
    filter.only.emplace_back(text.substr(0, equals), text.substr(equals + 1));
  }
  filter.condition = std::move(condition);
  return filter;
}

std::string RunFilter::describe() const {
  std::vector<std::string> parts;
  if (condition) parts.push_back(fmt::format("condition={}", *condition));
  for (const auto& [factor, level] : only) parts.push_back(fmt::format("{}={}", factor, level));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::size_t apply_filter(RunSet& set, const RunFilter& filter) {
  const std::size_t before = set.runs.size();
  const auto known = set.factors();
  const auto levels_of = [&](const std::string& factor) {
    std::vector<std::string> levels;
    for (const auto& run : set.runs) {
      const auto value = run.level(factor);
      if (value && std::find(levels.begin(), levels.end(), *value) == levels.end())
        levels.push_back(*value);
    }
    return levels;
  };
  if (filter.condition) {
    auto conditions = levels_of("condition");
    std::sort(conditions.begin(), conditions.end());
    if (std::find(conditions.begin(), conditions.end(), *filter.condition) == conditions.end())
      throw InputError(fmt::format("--condition {}: no run of {} has it (conditions: {})",
                                   *filter.condition, set.experiment, fmt::join(conditions, ", ")));
    std::erase_if(set.runs, [&](const Run& run) { return run.condition != *filter.condition; });
  }
  for (const auto& [factor, level] : filter.only) {
    if (std::find(known.begin(), known.end(), factor) == known.end())
      throw InputError(
          fmt::format("--only {}={}: experiment \"{}\" has no factor {}; its factors: {}", factor,
                      level, set.experiment, factor, fmt::join(known, ", ")));
    const auto levels = levels_of(factor);
    if (std::find(levels.begin(), levels.end(), level) == levels.end())
      throw InputError(fmt::format("--only {}={}: {} has no level {}; its levels: {}", factor,
                                   level, factor, level, fmt::join(levels, ", ")));
    std::erase_if(set.runs, [&](const Run& run) { return run.level(factor) != level; });
  }
  set.filter = filter;
  return before - set.runs.size();
}

std::size_t drop_warmup_epochs(std::vector<Run>& runs, int warmup) {
  if (warmup <= 0) return 0;
  std::size_t short_runs = 0;
  for (auto& run : runs) {
    if (run.epochs.size() <= static_cast<std::size_t>(warmup)) {
      ++short_runs;
      continue;
    }
    std::erase_if(run.epochs, [&](const Epoch& epoch) { return epoch.number <= warmup; });
  }
  return short_runs;
}

}  // namespace scalebench::report
