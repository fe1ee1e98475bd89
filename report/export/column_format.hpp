// One number of decimals per column of a report table, picked from the column's values (or set by
// --digits / --decimals), so that every cell of a column has the same decimals and the column
// aligns; throughput to at most four significant figures with its thousands grouped. Shared by the
// Markdown, HTML and LaTeX exporters (CSV and JSON stay exact). Rule: docs/report.md, "Decimals".
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/analysis/report.hpp"

namespace scalebench::report {

struct ExporterOptions;

// U+202F NARROW NO-BREAK SPACE: the thousands separator of the Markdown tables (HTML writes it as
// "&#8239;", LaTeX as "\,").
inline constexpr std::string_view kNarrowSpace = "\u202F";

// The most decimals a column gets (--decimals' upper bound, --digits' cap).
inline constexpr int kMaxColumnDecimals = 10;

// How the numbers of one report column print.
struct ColumnFormat {
  int decimals = 2;     // every value and interval bound at this many decimals
  int max_figures = 0;  // > 0: a value with more significant figures is rounded to this many, the
                        // digits past them printed as zeros (images/s: 269849 as 269 800)
  double scale = 1;     // 100: a fraction printed as a percentage
};

// The keys of the columns whose decimals are picked per column, in the report's order (the
// TableColumns keys, util/label_keys.hpp): epoch_time, sd, images_per_second, speedup,
// efficiency, test_accuracy.
const std::vector<std::string>& decimal_columns();

// The decimals that give `value` `figures` significant figures, never fewer than 0: digits before
// the point are never rounded away (160938.08 at 3 figures is 160938); a rounding that carries
// into the next power of ten counts (9.996 at 3 figures is 10.0).
int decimals_for(double value, int figures);

// The rule: the decimals that give the smallest nonzero |value| of `values` `figures` significant
// figures, within [min_decimals, max_decimals]; with no nonzero finite value, figures - 1 within
// the same bounds.
int column_decimals(const std::vector<double>& values, int figures, int min_decimals,
                    int max_decimals);

// `value` (times format.scale) at the column's decimals: "1.930", "-0.13"; with max_figures,
// rounded to that many significant figures of `reference` (the value whose interval bound this
// is; absent: `value` itself), so a value and its bounds round alike. Integer parts of five
// digits or more are grouped by three with `group` ("160\,900"), as siunitx does; no "-0".
std::string column_number(double value, const ColumnFormat& format, std::string_view group,
                          std::optional<double> reference = std::nullopt);

using ColumnFormats = std::map<std::string, ColumnFormat, std::less<>>;

// The format of each column of decimal_columns() over `rows` (all the rows a column shows: a
// table's, or every block's of report --by), by the rule and `options` (docs/report.md):
// - times (epoch_time, sd): 3 significant figures for the column's smallest value, 0 to 4
//   decimals; images/s: the same with 0 to 2 decimals, and at most 4 significant figures;
//   speed-ups 2 decimals; efficiency and test accuracy (percent) 1 decimal;
// - options.digits N: N significant figures for the smallest value of every such column, 0 to 10
//   decimals (images/s: at most max(N, 4) significant figures);
// - options.decimals COLUMN=N: exactly N decimals in that column (images/s: no figure limit),
//   whatever --digits says.
ColumnFormats column_formats(const std::vector<const ReportRow*>& rows,
                             const ExporterOptions& options);
// The format of column `key` (a column without one: the default ColumnFormat).
const ColumnFormat& format_of(const ColumnFormats& formats, std::string_view key);

// --decimals COLUMN=N, each argument: a column of decimal_columns() and a whole number from 0 to
// kMaxColumnDecimals. Throws ReportError naming the argument: no '=', an unknown column (with the
// closest name and the known ones), a column without decimals (tukey, letters), a bad N, a column
// given twice.
std::map<std::string, int> parse_decimals(const std::vector<std::string>& arguments);
// Throws ReportError when options.digits is outside 1 to 15 or options.decimals holds a column not
// in decimal_columns() or an N outside 0 to kMaxColumnDecimals.
void check_number_options(const ExporterOptions& options);

}  // namespace scalebench::report
