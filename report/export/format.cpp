#include "report/export/format.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace scalebench::report {

std::string format_p_value(double p) {
  if (std::isnan(p)) return std::string(kNotAvailable);
  if (p <= 0) {
    // The true p is below the smallest positive double; say so instead of printing 0.
    return fmt::format("p<{:.2e}", std::numeric_limits<double>::denorm_min());
  }
  if (p >= 0.001) return fmt::format("p={:#.2g}", p);
  return fmt::format("p={:.2e}", p);
}

std::string format_measure(double value) {
  if (!std::isfinite(value)) return fmt::format("{}", value);
  if (value == 0) return "0.00";
  if (std::fabs(value) >= 1) return fmt::format("{:.2f}", value);
  return fmt::format("{:#.3g}", value);
}

std::string format_ratio(double value) { return fmt::format("{:.2f}", value); }

std::string format_percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100); }

std::string format_exact(double value) { return fmt::format("{}", value); }

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace scalebench::report
