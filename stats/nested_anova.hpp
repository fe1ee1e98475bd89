// The nested (hierarchical) analysis of epoch times: epochs within runs within groups, the group
// effect tested against the run-to-run variation. A linear mixed model with the group as fixed
// effect and the run as random intercept, fitted by REML, with Satterthwaite degrees of freedom:
// the numbers of R's lmerTest::lmer(y ~ group + (1 | run)) and its anova() (type I = III for one
// factor), contest() and, for a balanced design, of aov(y ~ group + Error(run)).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "stats/error.hpp"
#include "stats/ratio_interval.hpp"
#include "stats/tukey.hpp"

namespace scalebench::stats {

// groups[i][j][e]: epoch e of run j of group i.
using NestedData = std::vector<std::vector<std::vector<double>>>;

// A linear combination of the group means with its Satterthwaite t test.
struct NestedEstimate {
  double estimate = 0;
  double se = 0;
  double df = 0;  // Satterthwaite (Satterthwaite 1946; Kuznetsova et al. 2017, lmerTest)
  double t = 0;
  double p = 1;  // two-sided
};

struct NestedAnova {
  std::size_t observations = 0;  // epochs
  std::size_t runs = 0;
  double run_variance = 0;    // REML estimate of the run-to-run variance (sigma_run^2)
  double epoch_variance = 0;  // REML estimate of the epoch-to-epoch variance within a run
  bool singular = false;      // run_variance estimated as 0 (on the boundary)
  std::vector<double> means;  // the model's group means (GLS: weighted means of run means)
  std::vector<NestedEstimate> mean_estimates;  // each group mean with its se and d.f.
  // The F test of equal group means, d.f. (k - 1, Satterthwaite); absent with one group.
  std::optional<double> f, df_num, df_den, p;

  // What contrasts need: the runs' sizes per group and the fitted variance parameters
  // theta = sigma_run / sigma_epoch and sigma = sigma_epoch, with their asymptotic covariance
  // 2 x inverse Hessian of the REML deviance (lmerTest's vcov_varpar).
  std::vector<std::vector<double>> run_sizes;
  double theta = 0;
  double sigma = 0;
  std::array<std::array<double, 2>, 2> varpar_covariance{};
};

// Fits the model. Throws StatsError for an empty group or run, a non-finite value, no run-to-run
// replication (every group has one run: the run variance is not identifiable), or no variation
// of epochs within runs (then analyse one mean per run instead).
NestedAnova nested_anova(const NestedData& groups);

// sum_i weights[i] x mean_i with its Satterthwaite d.f. (lmerTest::contest1D). Throws StatsError
// when weights has the wrong length or is all zero.
NestedEstimate nested_contrast(const NestedAnova& fit, const std::vector<double>& weights);

// The ratio of two group means, means[numerator] / means[denominator] (a speed-up of epoch
// times), with its interval on the log scale: the delta method's contrast
// weights[numerator] = 1 / mean, weights[denominator] = -1 / mean through nested_contrast, so the
// standard error and the one Satterthwaite d.f. come from the fitted model (lmerTest::contest1D
// of that contrast; adding the two means' d.f. as Welch does counts the shared variance
// parameters twice). p tests ratio = 1 with the same t. Throws StatsError for a mean <= 0, equal
// indices, an index out of range or a confidence outside (0, 1).
RatioInterval nested_ratio_interval(const NestedAnova& fit, std::size_t numerator,
                                    std::size_t denominator, double confidence = 0.95);

// Pairs of group means with Tukey's studentized range on each pair's Satterthwaite d.f. (as
// emmeans with lmer.df = "satterthwaite" and adjust = "tukey"): q = sqrt(2) |t|, p = P(Q > q),
// interval diff -/+ qtukey(confidence, k, df) / sqrt(2) x se. All pairs in R's order, or with
// `base` only the k - 1 pairs against it, oriented as tukey_vs_base.
std::vector<TukeyPair> nested_tukey(const NestedAnova& fit, double confidence = 0.95,
                                    std::optional<std::size_t> base = std::nullopt);

}  // namespace scalebench::stats
