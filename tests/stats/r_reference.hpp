// Reads tests/data/stats/r_reference.txt, written by scripts/reference/stats_reference.R.
#pragma once

#include <cstddef>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace scalebench::test {

struct RRecord {
  std::string name;                 // case name, or "ptukey" / "ptukey_k2_check"
  std::string kind;                 // "data", "anova", "tukey", "qtukey"; empty for ptukey rows
  std::vector<double> numbers;      // the rest of the line
};

inline const std::vector<RRecord>& r_reference() {
  static const std::vector<RRecord> records = [] {
    const auto path = data_dir() / "stats" / "r_reference.txt";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path.string() + " (run scripts/reference/stats_reference.R)");
    std::vector<RRecord> out;
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream words(line);
      RRecord r;
      words >> r.name;
      if (r.name.rfind("ptukey", 0) != 0) words >> r.kind;
      std::string word;
      while (words >> word) r.numbers.push_back(std::stod(word));
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
