// What report.cpp and factor_report.cpp share inside report/analysis (not a public interface).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace scalebench::report::detail {

inline constexpr std::string_view kSingleLauncher = "single";

inline std::string join(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// Position of `value` in `order`, or order.size() when absent (after the known ones).
inline std::size_t rank_of(const std::vector<std::string>& order, const std::string& value) {
  return static_cast<std::size_t>(std::find(order.begin(), order.end(), value) - order.begin());
}

}  // namespace scalebench::report::detail
