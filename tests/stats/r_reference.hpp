// Reads tests/data/stats/r_reference.txt, written by scripts/reference/stats_reference.R.
#pragma once

#include <cstddef>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference_file.hpp"
#include "test_support.hpp"

namespace scalebench::test {

struct RRecord {
  std::string name;             // case name, or "ptukey" / "ptukey_k2_check"
  std::string kind;             // "data", "anova", "tukey", "qtukey"; empty for ptukey rows
  std::vector<double> numbers;  // the rest of the line
};

inline const std::vector<RRecord>& r_reference() {
  static const std::vector<RRecord> records = [] {
    std::vector<RRecord> out;
    for (const auto& words :
         read_reference_lines("r_reference.txt", "scripts/reference/stats_reference.R")) {
      RRecord r;
      r.name = words.at(0);
      const std::size_t first_number =
          r.name.rfind("ptukey", 0) == 0 ? 1 : 2;  // ptukey rows have no kind
      if (first_number == 2) r.kind = words.at(1);
      r.numbers = to_numbers(words.begin() + first_number, words.end());
      out.push_back(std::move(r));
    }
    return out;
  }();
  return records;
}

inline std::vector<RRecord> r_records(const std::string& name, const std::string& kind) {
  std::vector<RRecord> out;
  for (const auto& r : r_reference()) {
    if (r.name == name && r.kind == kind) out.push_back(r);
  }
  return out;
}

// The groups of one case, as R saw them (group index is the first number of a "data" row).
inline std::vector<std::vector<double>> r_groups(const std::string& name) {
  std::vector<std::vector<double>> groups;
  for (const auto& r : r_records(name, "data")) {
    groups.emplace_back(r.numbers.begin() + 1, r.numbers.end());
  }
  return groups;
}

}  // namespace scalebench::test
