#include "report/export/column_format.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "report/error.hpp"
#include "report/export/exporters.hpp"
#include "util/text.hpp"

namespace scalebench::report {
namespace {

int magnitude(double value) { return static_cast<int>(std::floor(std::log10(std::fabs(value)))); }

// The default rule of each column: significant figures of its smallest value and the bounds of
// its decimals (docs/report.md, "Decimals").
struct ColumnRule {
  std::string_view key;
  int figures;
  int min_decimals;
  int max_decimals;
  int max_figures;  // images/s: at most this many significant figures
  double scale;
};

constexpr ColumnRule kRules[] = {
    {"epoch_time", 3, 0, 4, 0, 1},        {"sd", 3, 0, 4, 0, 1},
    {"images_per_second", 3, 0, 2, 4, 1}, {"speedup", 3, 2, 2, 0, 1},
    {"efficiency", 3, 1, 1, 0, 100},      {"test_accuracy", 3, 1, 1, 0, 100},
};

// The values a column shows (its intervals' bounds take their decimals, not set them).
std::vector<double> column_values(const std::vector<const ReportRow*>& rows, std::string_view key) {
  std::vector<double> values;
  const auto add = [&](const std::optional<double>& v) {
    if (v) values.push_back(*v);
  };
  for (const auto* row : rows) {
    if (!row) continue;
    if (key == "epoch_time") add(row->mean_epoch_seconds);
    if (key == "sd") add(row->sd_epoch_seconds);
    if (key == "images_per_second") add(row->images_per_second);
    if (key == "speedup") add(row->speedup_vs_base);
    if (key == "efficiency") add(row->scaling_efficiency);
    if (key == "test_accuracy") add(row->mean_test_accuracy);
  }
  return values;
}

std::string known_columns() { return fmt::format("{}", fmt::join(decimal_columns(), ", ")); }

}  // namespace

const std::vector<std::string>& decimal_columns() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto& rule : kRules) out.emplace_back(rule.key);
    return out;
  }();
  return keys;
}

int decimals_for(double value, int figures) {
  constexpr int kMaxDecimals = 20;
  if (!std::isfinite(value) || value == 0) return std::clamp(figures - 1, 0, kMaxDecimals);
  const int order = magnitude(value);
  int decimals = std::clamp(figures - 1 - order, 0, kMaxDecimals);
  // Rounding may carry into the next power of ten: 9.996 at 3 figures is 10.0, not 10.00.
  const double rounded = std::fabs(std::stod(fmt::format("{:.{}f}", value, decimals)));
  if (rounded > 0 && magnitude(rounded) > order)
    decimals = std::clamp(figures - 1 - magnitude(rounded), 0, kMaxDecimals);
  return decimals;
}

int column_decimals(const std::vector<double>& values, int figures, int min_decimals,
                    int max_decimals) {
  std::optional<double> smallest;
  for (const double v : values)
    if (std::isfinite(v) && v != 0 && (!smallest || std::fabs(v) < *smallest))
      smallest = std::fabs(v);
  const int decimals = smallest ? decimals_for(*smallest, figures) : figures - 1;
  return std::clamp(decimals, min_decimals, max_decimals);
}

std::string column_number(double value, const ColumnFormat& format, std::string_view group,
                          std::optional<double> reference) {
  value *= format.scale;
  const int decimals = std::max(0, format.decimals);
  if (!std::isfinite(value)) return fmt::format("{}", value);
  const double ref = reference ? *reference * format.scale : value;
  if (format.max_figures > 0 && std::isfinite(ref) && ref != 0) {
    // Round at the place of the reference's last significant figure.
    const int place = magnitude(ref) - (format.max_figures - 1);
    if (place > 0) {  // only digits before the point become zeros
      const double unit = std::pow(10.0, place);
      value = std::round(value / unit) * unit;
    }
  }
  auto text = fmt::format("{:.{}f}", value, decimals);
  if (text.starts_with('-') && text.find_first_not_of("-0.") == std::string::npos)
    text.erase(0, 1);  // "-0.00": the value rounded to zero
  const std::size_t sign = text.starts_with('-') ? 1 : 0;
  const std::size_t point = std::min(text.find('.'), text.size());
  if (point - sign < 5) return text;
  std::string out = text.substr(0, sign);
  for (std::size_t i = sign; i < point; ++i) {
    if (i > sign && (point - i) % 3 == 0) out += group;
    out += text[i];
  }
  return out + text.substr(point);
}

ColumnFormats column_formats(const std::vector<const ReportRow*>& rows,
                             const ExporterOptions& options) {
  ColumnFormats formats;
  for (const auto& rule : kRules) {
    ColumnFormat format;
    format.scale = rule.scale;
    std::vector<double> values = column_values(rows, rule.key);
    for (auto& v : values) v *= rule.scale;
    if (const auto set = options.decimals.find(std::string(rule.key));
        set != options.decimals.end()) {
      format.decimals = set->second;  // exactly N: no significant-figure limit either
    } else if (options.digits) {
      format.decimals = column_decimals(values, *options.digits, 0, kMaxColumnDecimals);
      if (rule.max_figures > 0) format.max_figures = std::max(*options.digits, rule.max_figures);
    } else {
      format.decimals = column_decimals(values, rule.figures, rule.min_decimals, rule.max_decimals);
      format.max_figures = rule.max_figures;
    }
    formats.emplace(rule.key, format);
  }
  return formats;
}

const ColumnFormat& format_of(const ColumnFormats& formats, std::string_view key) {
  static const ColumnFormat kDefault;
  const auto found = formats.find(key);
  return found == formats.end() ? kDefault : found->second;
}

std::map<std::string, int> parse_decimals(const std::vector<std::string>& arguments) {
  std::map<std::string, int> out;
  for (const auto& argument : arguments) {
    const auto equals = argument.find('=');
    if (equals == std::string::npos)
      throw ReportError(
          fmt::format("--decimals '{}': expected COLUMN=N, e.g. epoch_time=2 (columns: {})",
                      argument, known_columns()));
    const auto column = argument.substr(0, equals);
    const auto number = argument.substr(equals + 1);
    const auto& known = decimal_columns();
    if (column == "tukey" || column == "letters")
      throw ReportError(
          fmt::format("--decimals '{}': the column {} has no decimals to set (p-values print two "
                      "significant figures, letters are text); columns with decimals: {}",
                      argument, column, known_columns()));
    if (std::find(known.begin(), known.end(), column) == known.end()) {
      const auto close = util::closest_match(column, known);
      throw ReportError(
          fmt::format("--decimals '{}': unknown column '{}'{}; columns with "
                      "decimals: {}",
                      argument, column, close ? fmt::format(" (did you mean {}?)", *close) : "",
                      known_columns()));
    }
    int n = -1;
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), n);
    if (error != std::errc{} || end != number.data() + number.size() || number.empty() || n < 0 ||
        n > kMaxColumnDecimals)
      throw ReportError(fmt::format(
          "--decimals '{}': N must be a whole number of decimals from 0 to {}, not '{}'", argument,
          kMaxColumnDecimals, number));
    if (!out.emplace(column, n).second)
      throw ReportError(
          fmt::format("--decimals '{}': the column {} is given twice", argument, column));
  }
  return out;
}

void check_number_options(const ExporterOptions& options) {
  if (options.digits && (*options.digits < 1 || *options.digits > 15))
    throw ReportError(
        fmt::format("--digits {}: expected 1 to 15 significant figures", *options.digits));
  const auto& known = decimal_columns();
  for (const auto& [column, n] : options.decimals) {
    if (std::find(known.begin(), known.end(), column) == known.end())
      throw ReportError(fmt::format("--decimals: unknown column '{}'; columns with decimals: {}",
                                    column, known_columns()));
    if (n < 0 || n > kMaxColumnDecimals)
      throw ReportError(fmt::format("--decimals {}={}: expected 0 to {} decimals", column, n,
                                    kMaxColumnDecimals));
  }
}

}  // namespace scalebench::report
