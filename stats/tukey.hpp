// Tukey HSD (Tukey-Kramer for unequal group sizes) and the studentized range distribution.
#pragma once

#include <cstddef>
#include <vector>

#include "stats/error.hpp"

namespace scalebench::stats {

// Studentized range distribution with k >= 2 groups (real k allowed) and df > 0 degrees of freedom
// (df may be +inf). Throws StatsError for k < 2 or df <= 0; a NaN q gives NaN.
// cdf: P(Q <= q); survival: P(Q > q), computed in the upper tail directly (accurate to ~1e-12
// relative down to p ~ 1e-300; never 1 - cdf).
double studentized_range_cdf(double q, double k, double df);
double studentized_range_survival(double q, double k, double df);
// log P(Q > q), finite even where P(Q > q) underflows a double.
double studentized_range_log_survival(double q, double k, double df);
// q with P(Q <= q) = probability (R's qtukey); 0 at 0 and +inf at 1.
double studentized_range_quantile(double probability, double k, double df);
// q with P(Q > q) = alpha, solved on log(survival): accurate for tiny alpha such as 1e-100.
double studentized_range_upper_quantile(double alpha, double k, double df);

struct TukeyPair {
  std::size_t a = 0;  // group index
  std::size_t b = 0;  // group index, a < b for all-pairs
  double diff = 0;    // mean(b) - mean(a), as R's TukeyHSD reports "b-a"
  double lower = 0;   // simultaneous confidence interval for diff
  double upper = 0;
  double q = 0;  // |diff| / sqrt(ms_within / 2 * (1/n_a + 1/n_b))
  double p_adjusted = 1;
};

// All k(k-1)/2 pairs, in R's order: (0,1), (0,2), ..., (1,2), ... R's TukeyHSD on a one-way aov:
// lower/upper = diff -/+ qtukey(confidence, k, N-k) * se, p_adjusted = P(Q > q) with
// se = sqrt(ms_within / 2 * (1/n_a + 1/n_b)). Throws StatsError where one_way_anova does, or for a
// confidence outside (0, 1). With ms_within == 0: q = +inf, p = 0 and lower == upper == diff for
// unequal means; q and p are NaN for equal means.
std::vector<TukeyPair> tukey_hsd(const std::vector<std::vector<double>>& groups,
                                 double confidence = 0.95);

// The same family from group means and sizes with the error term of a fitted model (e.g. the
// residual mean square and d.f. of a two-way ANOVA, as R's TukeyHSD uses for each factor).
// Throws StatsError for fewer than two groups, sizes < 1, ms_within < 0 or df_within <= 0.
std::vector<TukeyPair> tukey_hsd_from_means(const std::vector<double>& means,
                                            const std::vector<double>& sizes, double ms_within,
                                            double df_within, double confidence = 0.95);

// The k - 1 pairs of every group against group base_index from the all-pairs Tukey-Kramer family of
// tukey_hsd with all k groups: q, p_adjusted and the interval's critical value are those of the
// all-pairs table (bit-identical to its rows), so they are conservative for k - 1 comparisons (a
// many-to-one test such as Dunnett's would be less so). Only these k - 1 pairs are computed (each p
// is a quadrature): use this, not tukey_hsd, where only the pairs against a base are shown. Each
// pair is oriented against the base: a = base_index, b = the other group (in group order), diff =
// mean(b) - mean(a) (so a > b for groups before the base; R's row "base-other" is negated). Throws
// StatsError where tukey_hsd does, or for base_index >= k.
std::vector<TukeyPair> tukey_vs_base(const std::vector<std::vector<double>>& groups,
                                     std::size_t base_index, double confidence = 0.95);

}  // namespace scalebench::stats
