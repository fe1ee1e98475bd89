// `scalebench stats` rendered: the result (report/analysis/stats_result.hpp) and the interaction
// contrast as an R-like text report, or as one JSON document in the documented key order (a
// stable contract, docs/statistics.md).
#pragma once

#include <string>
#include <vector>

#include "report/analysis/statistics.hpp"
#include "report/analysis/stats_result.hpp"

namespace scalebench::report {

// A plain text table: the first column left-aligned, the others right-aligned, two spaces
// between columns, no trailing blanks (the stats report's and compare's tables).
std::string aligned(const std::vector<std::string>& header,
                    const std::vector<std::vector<std::string>>& rows);

// An R-like text report: what was tested, the tables, the warnings.
std::string render_stats_text(const StatsReport& report);
std::string render_contrast_text(const ContrastReport& report);
// {"source": ..., "anova": [...], "tukey": [...], ...} through report/export/json.hpp: each number
// in the shortest form that reads back as the same double, NaN/inf as null; with `contrast`, its
// "interaction_contrast" object last, written into the same document.
std::string render_stats_json(const StatsReport& report, const ContrastReport* contrast = nullptr);

}  // namespace scalebench::report
