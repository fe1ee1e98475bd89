// stats::compact_letters against R's multcomp::cld on five one-way designs
// (scripts/reference/compact_letters.R writes tests/data/stats/compact_letters.txt): our Tukey
// p-values at 0.05 give the significance, the letters must be R's exactly.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "stats/descriptive.hpp"
#include "stats/letters.hpp"
#include "stats/tukey.hpp"
#include "test_support.hpp"

using namespace scalebench;

namespace {

struct Set {
  std::vector<std::string> levels;
  std::vector<std::vector<double>> groups;
  std::vector<std::string> letters;
};

std::map<std::string, Set> read_sets() {
  std::ifstream in(test::data_dir() / "stats" / "compact_letters.txt");
  std::map<std::string, Set> sets;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, kind, level;
    fields >> name >> kind >> level;
    auto& set = sets[name];
    if (kind == "data") {
      set.levels.push_back(level);
      set.groups.emplace_back();
      for (double v; fields >> v;) set.groups.back().push_back(v);
    } else {
      std::string letters;
      fields >> letters;
      set.letters.push_back(letters);
    }
  }
  return sets;
}

}  // namespace

TEST_CASE("compact letters equal multcomp::cld on five reference designs") {
  const auto sets = read_sets();
  REQUIRE(sets.size() == 5);
  for (const auto& [name, set] : sets) {
    INFO(name);
    const std::size_t k = set.groups.size();
    REQUIRE(set.letters.size() == k);
    std::vector<double> means;
    for (const auto& g : set.groups) means.push_back(stats::mean(g));
    std::vector<std::vector<bool>> significant(k, std::vector<bool>(k, false));
    for (const auto& pair : stats::tukey_hsd(set.groups))
      significant[pair.a][pair.b] = significant[pair.b][pair.a] = pair.p_adjusted < 0.05;
    CHECK(stats::compact_letters(means, significant) == set.letters);
  }
}

TEST_CASE("compact letters: nothing differs, everything differs, bad input") {
  const std::vector<double> means = {3, 1, 2};
  std::vector<std::vector<bool>> none(3, std::vector<bool>(3, false));
  CHECK(stats::compact_letters(means, none) == std::vector<std::string>{"a", "a", "a"});
  std::vector<std::vector<bool>> all(3, std::vector<bool>(3, true));
  // As R's insert_absorb (checked there with these means): letters are named in the order of
  // the first group that carries them, whatever the means.
  CHECK(stats::compact_letters(means, all) == std::vector<std::string>{"a", "b", "c"});
  CHECK_THROWS_AS(stats::compact_letters({1}, {{false}}), stats::StatsError);
  const std::vector<std::vector<bool>> wrong_size(2, std::vector<bool>(3, false));
  CHECK_THROWS_AS(stats::compact_letters(means, wrong_size), stats::StatsError);
}
