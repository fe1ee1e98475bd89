#include "report/analysis/report_assembly.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "report/data/setup.hpp"
#include "util/text.hpp"

namespace scalebench::report {
namespace {

ReportOptions options_of(const RunSet& set, const std::optional<std::string>& base,
                         const std::string& unit, const std::string& pairwise) {
  ReportOptions options;
  options.unit = unit;
  options.pairwise = pairwise;
  options.base_label = base;
  options.condition_order = set.condition_order;
  options.level_order = set.level_order;
  options.labels = set.labels;
  options.repetition_rule = set.repetition_rule;
  return options;
}

// The allreduce benchmark runs of the instances, per level of `factor`: the bus bandwidth at the
// largest message and averaged over sizes, beside the epoch times (the interconnect study).
void add_bandwidth(const std::vector<AllreduceRun>& allreduce_runs, const std::string& factor,
                   FactorReport& report) {
  struct RunBandwidth {
    long long bytes = 0;
    double busbw = 0, time_us = 0, average = 0;
  };
  std::map<std::tuple<std::size_t, std::string, std::string, int>, std::vector<RunBandwidth>>
      groups;
  for (const auto& run : allreduce_runs) {
    const auto& rows = run.rows;
    const auto level = std::find_if(run.levels.begin(), run.levels.end(),
                                    [&](const auto& pair) { return pair.first == factor; });
    if (level == run.levels.end()) continue;
    const auto block = static_cast<std::size_t>(
        std::find(report.levels.begin(), report.levels.end(), level->second) -
        report.levels.begin());
    const auto largest = *std::max_element(
        rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
    double sum = 0;
    for (const auto& row : rows) sum += row.busbw_gbs;
    groups[{block, run.condition, run.launcher, run.np}].push_back(
        {largest.bytes, largest.busbw_gbs, largest.time_us,
         sum / static_cast<double>(rows.size())});
  }
  for (const auto& [key, runs] : groups) {
    const auto& [block, condition, launcher, np] = key;
    FactorReport::Bandwidth row;
    row.level = block < report.levels.size() ? report.levels[block] : std::string();
    row.condition = condition;
    row.launcher = launcher;
    row.np = np;
    row.bytes = runs.front().bytes;
    for (const auto& run : runs) {
      if (run.bytes != row.bytes) continue;  // a run of another size range is not averaged in
      row.busbw_gbs += run.busbw;
      row.time_us += run.time_us;
      row.avg_busbw_gbs += run.average;
      ++row.runs;
    }
    row.busbw_gbs /= static_cast<double>(row.runs);
    row.time_us /= static_cast<double>(row.runs);
    row.avg_busbw_gbs /= static_cast<double>(row.runs);
    report.bandwidth.push_back(row);
  }
}

}  // namespace

namespace {

// A table of part of a study says which part.
std::string subset_note(const RunSet& set) {
  return fmt::format("A subset: only the runs with {} ({} left out).", set.filter.describe(),
                     util::count_of(static_cast<long long>(set.filtered_out), "run"));
}

}  // namespace

ReportTable report_of(const RunSet& set, const std::optional<std::string>& base,
                      const std::string& unit, const std::string& pairwise) {
  auto table = build_report(set.experiment, set.runs, options_of(set, base, unit, pairwise));
  table.notes.insert(table.notes.begin(), set.notes.begin(), set.notes.end());
  if (!set.filter.empty()) table.notes.insert(table.notes.begin(), subset_note(set));
  table.notes.insert(table.notes.end(), set.failures.begin(), set.failures.end());
  table.provenance = set.provenance;
  table.setup = study_setup(set);
  return table;
}

FactorReport factor_report_of(const RunSet& set, const std::string& factor,
                              const std::optional<std::string>& base, const std::string& unit,
                              const std::string& pairwise) {
  auto report =
      build_factor_report(set.experiment, set.runs, factor, options_of(set, base, unit, pairwise));
  add_bandwidth(set.allreduce_runs, factor, report);
  report.notes.insert(report.notes.begin(), set.notes.begin(), set.notes.end());
  if (!set.filter.empty()) report.notes.insert(report.notes.begin(), subset_note(set));
  report.notes.insert(report.notes.end(), set.failures.begin(), set.failures.end());
  report.provenance = set.provenance;
  return report;
}

std::optional<std::string> base_without_factor(const std::optional<std::string>& base,
                                               const std::string& factor) {
  if (!base) return base;
  std::string out;
  std::size_t start = 0;
  while (start < base->size()) {
    auto end = base->find(' ', start);
    if (end == std::string::npos) end = base->size();
    const auto word = base->substr(start, end - start);
    if (word.rfind(factor + "=", 0) != 0) out += (out.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out;
}

}  // namespace scalebench::report
