// One-way analysis of variance.
#pragma once

#include <span>
#include <stdexcept>
#include <vector>

#include "stats/error.hpp"  // StatsError, declared here before it moved; still reachable via this header

namespace scalebench::stats {

struct OneWayAnova {
  double ss_between = 0;
  double ss_within = 0;
  double df_between = 0;  // k - 1
  double df_within = 0;   // N - k
  double ms_between = 0;
  double ms_within = 0;
  double f = 0;  // ms_between / ms_within; +inf when ms_within == 0 and ms_between > 0
  double p = 1;  // P(F > f) from the F distribution's complement (no underflow to 0)
};

// Fisher's one-way ANOVA over k >= 2 groups with N > k observations in total.
OneWayAnova one_way_anova(const std::vector<std::vector<double>>& groups);

// The rest of the table from its sums of squares, k groups and N observations: d.f., mean squares,
// F and p. With ms_within == 0: F = +inf and p = 0 when ms_between > 0, both NaN when it is 0 too.
OneWayAnova one_way_anova_from_sums(double ss_between, double ss_within, double k, double n);

}  // namespace scalebench::stats
