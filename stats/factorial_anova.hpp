// Two-way (and one-way) ANOVA with interaction for balanced and unbalanced designs, with Type I,
// II and III sums of squares, through the linear-model core (stats/linear_model.hpp).
#pragma once

#include <string>
#include <vector>

#include "stats/error.hpp"

namespace scalebench::stats {

// Which sums of squares: I sequential (R's aov/anova, terms in the order A, B, A:B), II each term
// adjusted for every term that does not contain it (car::Anova type 2, the default), III each term
// adjusted for all others with sum-to-zero coding (car::Anova type 3 under contr.sum).
// In a balanced design the three agree.
enum class SsType { I = 1, II = 2, III = 3 };

struct AnovaTerm {
  std::string term;  // a factor name, "A:B" for the interaction, or "Residuals"
  double df = 0;
  double ss = 0;
  double ms = 0;
  double f = 0;  // NaN for Residuals; +inf when MS_residual is 0 and ms > 0; NaN when both are 0
                 // (an SS below (n eps)^2 SS_total is rounding noise and reported as 0)
  double p = 0;  // P(F > f), complement of the F distribution (no underflow); NaN for Residuals
  double eta_sq = 0;  // ss / SS_total (corrected total SS of the response); NaN for Residuals
  double partial_eta_sq = 0;  // ss / (ss + SS_residual); NaN for Residuals
  double omega_sq = 0;        // (ss - df MS_residual) / (SS_total + MS_residual); NaN for Residuals
};

struct FactorialAnova {
  SsType type = SsType::II;
  std::vector<AnovaTerm> terms;  // A, [B, [A:B]], then "Residuals" last
  double ss_total = 0;           // sum (y - mean y)^2; equals the sum of the rows for Type I
};

// ANOVA of `response` on 1 or 2 factors. `factors[f][i]` is the level label of observation i on
// factor f; levels are ordered by first appearance (R sorts them; sums of squares do not depend on
// the order). With two factors and `interaction`, the model is A + B + A:B and every cell (pair of
// levels) needs an observation; without it, A + B. One factor gives one_way_anova's result.
// Throws StatsError for: a factor with fewer than two levels, an empty cell (EmptyCellError, the
// cell named in the message),
// otherwise confounded factors, no residual degrees of freedom, mismatched lengths, a non-finite
// response, or other than 1 or 2 factors.
FactorialAnova factorial_anova(const std::vector<double>& response,
                               const std::vector<std::vector<std::string>>& factors,
                               const std::vector<std::string>& factor_names,
                               SsType type = SsType::II, bool interaction = true);

}  // namespace scalebench::stats
