// The format of every committed reference file in tests/data/stats/: one record per line, words
// separated by spaces, '#' starts a comment line. Each file's own header gives the words meaning.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace scalebench::test {

// The lines of tests/data/stats/<file> as words; `script` (the generator) is named if it is
// missing.
inline std::vector<std::vector<std::string>> read_reference_lines(const std::string& file,
                                                                  const std::string& script) {
  const auto path = data_dir() / "stats" / file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string() + " (run " + script + ")");
  std::vector<std::vector<std::string>> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream stream(line);
    std::vector<std::string> words;
    for (std::string word; stream >> word;) words.push_back(word);
    lines.push_back(std::move(words));
  }
  return lines;
}

inline std::vector<double> to_numbers(std::vector<std::string>::const_iterator begin,
                                      std::vector<std::string>::const_iterator end) {
  std::vector<double> numbers;
  for (auto word = begin; word != end; ++word) numbers.push_back(std::stod(*word));
  return numbers;
}

}  // namespace scalebench::test
