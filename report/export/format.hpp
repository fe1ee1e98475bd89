// Number formatting shared by the exporters and the figure: one rule per kind of number, so the
// same value reads the same everywhere. Rules and reasons: docs/report.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace scalebench::report {

// What the Markdown table prints for an absent value (as the paper prints it).
inline constexpr std::string_view kNotAvailable = "N.A.";

// "p=0.43", "p=0.0012", "p=3.20e-12": two significant digits down to 0.001, below that scientific
// notation with three; never clipped. A p that underflowed to 0 prints "p<4.94e-324".
std::string format_p_value(double p);
// Seconds and other measured magnitudes: two decimals from 1 up, three significant digits below.
std::string format_measure(double value);
// Speed-up: two decimals ("1.93").
std::string format_ratio(double value);
// Scaling efficiency as a percentage with one decimal ("96.5%").
std::string format_percent(double fraction);
// Shortest text that reads back to the same double ("0.1", "29.77", "1e-300"); "nan"/"inf" as such.
std::string format_exact(double value);

// One CSV field (RFC 4180): quoted when it holds a comma, quote or line break, quotes doubled.
std::string csv_field(std::string_view text);

}  // namespace scalebench::report
