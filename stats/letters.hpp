// Compact letter display of all-pairs comparisons: groups that share a letter do not differ.
#pragma once

#include <string>
#include <vector>

#include "stats/error.hpp"

namespace scalebench::stats {

// Piepho's insert-absorb algorithm with sweeping (Piepho 2004, J. Comput. Graph. Stat. 13:456),
// ported step for step from R's multcomp::cld (insert_absorb and sweepLetters, multcomp 1.4), so
// that the letters are the same as R's, not only equivalent. `means` order the insertion (cld's
// lvl_order, ascending); the letters are then named in the order of the first group carrying
// them. `significant[i][j]` (symmetric, i != j) says whether groups i and j differ. Returns one
// string per group, in input order ("a", "ab", ...).
// Throws StatsError for fewer than two groups or a matrix of another size.
std::vector<std::string> compact_letters(const std::vector<double>& means,
                                         const std::vector<std::vector<bool>>& significant);

}  // namespace scalebench::stats
