// Reads tests/data/stats/factorial_reference.txt, written by
// scripts/reference/factorial_reference.R.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference_file.hpp"
#include "test_support.hpp"

namespace scalebench::test {

struct FactorialRecord {
  std::string name;  // case name
  std::string kind;  // "obs", "total", "type1".."type3", "effect1".."effect3", "lmdata", "lm"
  std::vector<std::string> words;  // the rest of the line
};

inline const std::vector<FactorialRecord>& factorial_reference() {
  static const std::vector<FactorialRecord> records = [] {
    std::vector<FactorialRecord> out;
    for (const auto& words :
         read_reference_lines("factorial_reference.txt", "scripts/reference/factorial_reference.R"))
      out.push_back(
          {words.at(0), words.at(1), std::vector<std::string>(words.begin() + 2, words.end())});
    return out;
  }();
  return records;
}

inline std::vector<FactorialRecord> factorial_records(const std::string& name,
                                                      const std::string& kind) {
  std::vector<FactorialRecord> out;
  for (const auto& r : factorial_reference()) {
    if (r.name == name && r.kind == kind) out.push_back(r);
  }
  return out;
}

// One case's observations: response and the level labels of its two factors, as R saw them.
struct FactorialData {
  std::vector<double> response;
  std::vector<std::vector<std::string>> factors{2};
  std::vector<std::string> names;  // the factors' names, from the case's Type I table
};

inline FactorialData factorial_data(const std::string& name) {
  FactorialData d;
  for (const auto& r : factorial_records(name, "obs")) {
    d.response.push_back(std::stod(r.words.at(0)));
    d.factors[0].push_back(r.words.at(1));
    d.factors[1].push_back(r.words.at(2));
  }
  const auto rows = factorial_records(name, "type1");
  d.names = {rows.at(0).words.at(0), rows.at(1).words.at(0)};
  if (d.response.empty()) throw std::runtime_error("no observations for case " + name);
  return d;
}

}  // namespace scalebench::test
