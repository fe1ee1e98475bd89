// Reads tests/data/stats/oneway_family_reference.txt, written by
// scripts/reference/oneway_family_reference.R: lines "<case> <kind> <numbers...>".
#pragma once

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference_file.hpp"
#include "stats/summary_statistics.hpp"
#include "test_support.hpp"

namespace scalebench::test::oneway {

struct Record {
  std::string name;
  std::string kind;
  std::vector<double> numbers;
};

inline const std::vector<Record>& reference() {
  static const std::vector<Record> records = [] {
    std::vector<Record> out;
    for (const auto& words : read_reference_lines("oneway_family_reference.txt",
                                                  "scripts/reference/oneway_family_reference.R"))
      out.push_back({words.at(0), words.at(1), to_numbers(words.begin() + 2, words.end())});
    return out;
  }();
  return records;
}

inline std::vector<std::vector<double>> records(const std::string& name, const std::string& kind) {
  std::vector<std::vector<double>> out;
  for (const auto& r : reference()) {
    if (r.name == name && r.kind == kind) out.push_back(r.numbers);
  }
  if (out.empty())
    throw std::runtime_error("no '" + kind + "' rows for case '" + name +
                             "' in the reference file");
  return out;
}

// The one row of a kind that has one row per case.
inline std::vector<double> record(const std::string& name, const std::string& kind) {
  return records(name, kind).at(0);
}

// The groups of a case, as R saw them (the group index is the first number of a "data" row).
inline std::vector<std::vector<double>> groups(const std::string& name) {
  std::vector<std::vector<double>> out;
  for (const auto& row : records(name, "data")) out.emplace_back(row.begin() + 1, row.end());
  return out;
}

inline std::vector<stats::GroupSummary> summaries(const std::string& name) {
  std::vector<stats::GroupSummary> out;
  for (const auto& row : records(name, "summary")) out.push_back({"", row[1], row[2], row[3]});
  return out;
}

inline double relative_error(double got, double want) {
  return std::abs(got - want) / std::abs(want);
}

}  // namespace scalebench::test::oneway
