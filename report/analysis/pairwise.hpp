// One inference per table (docs/statistics.md, "Pooled or per-row"): the report's intervals are
// per row (each group's own variance), so its p-values and letters must not pool the variances
// where they differ: there, Games-Howell (and Welch's F) replace Tukey (and the one-way F), and
// no row can have a small p beside an interval that covers the base.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace scalebench::report {

// Pooling is kept while the largest group variance is at most this many times the smallest: the
// usual bound within which the pooled F and Tukey hold their level (Howell, Statistical Methods
// for Psychology, 8th ed., 12.4; "variance ratio no more than 4").
inline constexpr double kMaxPooledVarianceRatio = 4;

// The largest sample variance over the smallest, among groups with two observations or more;
// absent with fewer than two such groups; infinite when the smallest is 0 and the largest not.
std::optional<double> variance_ratio(const std::vector<std::vector<double>>& groups);

struct PairwiseChoice {
  bool games_howell = false;        // p-values, letters and F unpooled
  std::optional<double> ratio;      // variance_ratio
  std::optional<std::string> note;  // what was chosen and why, when the variances differ
};

// Games-Howell when the ratio exceeds kMaxPooledVarianceRatio, every group has two observations
// or more (Games-Howell needs each group's variance) and there are at most `max_groups` (all
// pairs are computed); otherwise Tukey, with a note when the variances differ and Games-Howell
// could not be used. `unit` names the observations in the note ("run", "epoch").
PairwiseChoice choose_pairwise(const std::vector<std::vector<double>>& groups,
                               const std::string& unit, std::size_t max_groups);

}  // namespace scalebench::report
