// For the per-column decimals' tests: the decimals of every number in a cell's text (a value and
// its interval's bounds; thousands grouped by U+202F, "&#8239;" or "\,"), so that a test can say
// that every cell of a column has the same.
#pragma once

#include <regex>
#include <set>
#include <string>
#include <vector>

namespace scalebench::test {

// The number of decimals of each number in `text` ("1.270 [1.200, 1.340]": 3, 3, 3).
inline std::vector<int> decimals_of_numbers(const std::string& text) {
  static const std::regex number(
      R"(-?[0-9]+(?:(?:\xE2\x80\xAF|&#8239;|\\,)[0-9]{3})*(?:\.([0-9]+))?)");
  std::vector<int> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number);
       it != std::sregex_iterator(); ++it)
    out.push_back(static_cast<int>((*it)[1].length()));
  return out;
}

// The distinct decimals of the numbers in `cells` (one element: the column is consistent).
inline std::set<int> decimals_in_column(const std::vector<std::string>& cells) {
  std::set<int> out;
  for (const auto& cell : cells)
    for (const int d : decimals_of_numbers(cell)) out.insert(d);
  return out;
}

}  // namespace scalebench::test
