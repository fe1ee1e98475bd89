// Games-Howell all-pairs comparisons: Tukey-Kramer without assuming equal variances.
#pragma once

#include <cstddef>
#include <vector>

#include "stats/error.hpp"
#include "stats/summary_statistics.hpp"

namespace scalebench::stats {

struct GamesHowellPair {
  std::size_t a = 0;  // group index
  std::size_t b = 0;  // group index, a < b
  double diff = 0;    // mean(b) - mean(a), as R's TukeyHSD reports "b-a"
  double se = 0;      // sqrt((var_a/n_a + var_b/n_b) / 2), on the studentized range's scale
  double df = 0;      // Welch-Satterthwaite degrees of freedom of this pair (not a whole number)
  double q = 0;       // |diff| / se
  double lower = 0;   // simultaneous interval: diff -/+ qtukey(confidence, k, df) * se
  double upper = 0;
  double p_adjusted = 1;  // P(Q_{k, df} > q), k the number of groups
};

// Games & Howell (1976) on all k(k-1)/2 pairs in R's order (0,1), (0,2), ..., (1,2), ...; the same
// numbers as rstatix::games_howell_test. Throws StatsError for fewer than two groups, a group with
// fewer than two observations, a pair whose groups both have zero variance (se = 0), a non-finite
// observation, or a confidence outside (0, 1). One zero-variance group is allowed: its pairs take
// the other group's variance and df = n_other - 1.
// Raw groups are shifted by their first observation first (differences are unchanged); `names`
// name the groups in errors.
std::vector<GamesHowellPair> games_howell(const std::vector<std::vector<double>>& groups,
                                          double confidence = 0.95,
                                          const std::vector<std::string>& names = {});
std::vector<GamesHowellPair> games_howell_from_summary(const std::vector<GroupSummary>& groups,
                                                       double confidence = 0.95);

}  // namespace scalebench::stats
