// Effect sizes for ANOVA terms: eta squared, partial eta squared and omega squared.
#pragma once

#include "stats/anova.hpp"

namespace scalebench::stats {

// Share of the total variation a term accounts for: SS_term / SS_total, where SS_total is the
// corrected total sum of squares of the response, sum (y - mean y)^2 (not the sum of an ANOVA
// table's rows, which differs from it for Type II/III SS in unbalanced designs). NaN when SS_total
// = 0.
double eta_squared(double ss_term, double ss_total);

// SS_term / (SS_term + SS_residual): the term's share once the other terms' variation is set aside.
// Equals eta squared in a one-way design. NaN when both are 0.
double partial_eta_squared(double ss_term, double ss_residual);

// (SS_term - df_term MS_residual) / (SS_total + MS_residual), a less biased estimate of the term's
// share of the population variance for fixed factors. Reported as computed: it is negative when the
// term's F is below 1 (some software shows 0 then). NaN when the denominator is 0.
double omega_squared(double ss_term, double df_term, double ms_residual, double ss_total);

struct EffectSizes {
  double eta_sq = 0;
  double partial_eta_sq = 0;
  double omega_sq = 0;
};

// The three for a one-way ANOVA (SS_total = SS_between + SS_within; partial eta^2 = eta^2).
EffectSizes effect_sizes(const OneWayAnova& anova);

}  // namespace scalebench::stats
