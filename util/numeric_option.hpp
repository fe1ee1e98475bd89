// The one strict reading of a number given on the command line (issue 23, item 6c): the whole
// text is the number (no trailing junk, no leading spaces or '+'), finite (no nan, inf, or
// 1e999), inside the option's range, and never wrapped (-5 is not 2^64 - 5). Header-only, so that
// every module can use it without a link dependency.
#pragma once

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace scalebench::util {

// Why a text is not an acceptable number; the message names the value and the range, and the
// caller adds the option's name.
class NumberError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A range of acceptable values; an open end excludes its bound.
struct NumberRange {
  double min = -std::numeric_limits<double>::max();
  double max = std::numeric_limits<double>::max();
  bool min_open = false;
  bool max_open = false;
};

namespace detail {

inline std::string shown_value(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 60)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02X", u);
      out += escaped;
    } else {
      out += c;
    }
  }
  return text.size() > 60 ? out + "..." : out;
}

inline std::string number_text(double value) {
  // The shortest of %.6g .. %.17g that reads back as the value.
  char buffer[40];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

inline std::string range_text(const NumberRange& range) {
  return std::string(range.min_open ? "(" : "[") + number_text(range.min) + ", " +
         number_text(range.max) + (range.max_open ? ")" : "]");
}

[[noreturn]] inline void refuse(std::string_view text, std::string_view expected) {
  throw NumberError("expected " + std::string(expected) + ", got \"" + shown_value(text) + "\"");
}

inline void check_range(std::string_view text, double value, const NumberRange& range,
                        std::string_view kind) {
  const bool low = range.min_open ? value <= range.min : value < range.min;
  const bool high = range.max_open ? value >= range.max : value > range.max;
  if (low || high) refuse(text, std::string(kind) + " in " + range_text(range));
}

}  // namespace detail

// A finite real number in `range`.
inline double parse_real(std::string_view text, const NumberRange& range = {}) {
  double value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (text.empty() || ptr != end || ec == std::errc::invalid_argument)
    detail::refuse(text, "a number in " + detail::range_text(range));
  if (ec == std::errc::result_out_of_range || !std::isfinite(value))
    detail::refuse(text, "a finite number in " + detail::range_text(range));
  detail::check_range(text, value, range, "a number");
  return value;
}

// A whole number in [min, max], written in decimal digits with an optional leading '-'.
inline long long parse_integer(std::string_view text, long long min, long long max) {
  long long value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ptr != end || ec == std::errc::invalid_argument)
    detail::refuse(text,
                   "a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  if (ec == std::errc::result_out_of_range || value < min || value > max)
    detail::refuse(text,
                   "a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return value;
}

// A whole number in [min, max] of an unsigned type (a seed): no sign at all.
inline std::uint64_t parse_unsigned(std::string_view text, std::uint64_t min, std::uint64_t max) {
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ptr != end || ec != std::errc() || value < min || value > max)
    detail::refuse(text,
                   "a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return value;
}

// A size in bytes: a whole number with an optional unit (B; K, KB, KiB; M, MB, MiB; G, GB, GiB;
// T, TB, TiB: all powers of 1024, as CLI11's AsSizeValue(false) read them; case ignored), in
// [min, max] bytes.
inline std::uint64_t parse_size(std::string_view text, std::uint64_t min, std::uint64_t max) {
  const auto expected = "a size in bytes in [" + std::to_string(min) + ", " + std::to_string(max) +
                        "] (a whole number, optionally with KiB, MiB, GiB or TiB)";
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) detail::refuse(text, expected);
  std::uint64_t number = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, number);
  if (ec != std::errc() || ptr != text.data() + digits) detail::refuse(text, expected);
  std::string unit;
  for (const char c : text.substr(digits))
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::uint64_t scale = 1;
  if (unit.empty() || unit == "b") {
    scale = 1;
  } else if (unit == "k" || unit == "kb" || unit == "kib") {
    scale = 1ULL << 10;
  } else if (unit == "m" || unit == "mb" || unit == "mib") {
    scale = 1ULL << 20;
  } else if (unit == "g" || unit == "gb" || unit == "gib") {
    scale = 1ULL << 30;
  } else if (unit == "t" || unit == "tb" || unit == "tib") {
    scale = 1ULL << 40;
  } else {
    detail::refuse(text, expected);
  }
  if (number > std::numeric_limits<std::uint64_t>::max() / scale) detail::refuse(text, expected);
  const std::uint64_t bytes = number * scale;
  if (bytes < min || bytes > max) detail::refuse(text, expected);
  return bytes;
}

}  // namespace scalebench::util
