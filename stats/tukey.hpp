// Tukey HSD (Tukey-Kramer for unequal group sizes) and the studentized range distribution.
#pragma once

#include <cstddef>
#include <vector>

namespace scalebench::stats {

// Studentized range distribution with k groups and df degrees of freedom (df may be +inf).
// cdf: P(Q <= q); survival: P(Q > q), computed in the upper tail directly.
double studentized_range_cdf(double q, double k, double df);
double studentized_range_survival(double q, double k, double df);
double studentized_range_quantile(double probability, double k, double df);

struct TukeyPair {
  std::size_t a = 0;   // group index
  std::size_t b = 0;   // group index, a < b for all-pairs
  double diff = 0;     // mean(b) - mean(a), as R's TukeyHSD reports "b-a"
  double lower = 0;    // simultaneous confidence interval for diff
  double upper = 0;
  double q = 0;        // |diff| / sqrt(ms_within / 2 * (1/n_a + 1/n_b))
  double p_adjusted = 1;
};

// All k(k-1)/2 pairs, in R's order: (0,1), (0,2), ..., (1,2), ...
std::vector<TukeyPair> tukey_hsd(const std::vector<std::vector<double>>& groups,
                                 double confidence = 0.95);

}  // namespace scalebench::stats
