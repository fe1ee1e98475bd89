#include "stats/effect_size.hpp"

namespace scalebench::stats {

// Formulas as in Olejnik & Algina (2003), "Generalized eta and omega squared statistics",
// Psychological Methods 8(4):434-447, Table 1 (fixed factors, no covariates).

double eta_squared(double ss_term, double ss_total) { return ss_term / ss_total; }

double partial_eta_squared(double ss_term, double ss_residual) {
  return ss_term / (ss_term + ss_residual);
}

double omega_squared(double ss_term, double df_term, double ms_residual, double ss_total) {
  return (ss_term - df_term * ms_residual) / (ss_total + ms_residual);
}

EffectSizes effect_sizes(const OneWayAnova& anova) {
  const double ss_total = anova.ss_between + anova.ss_within;
  return {eta_squared(anova.ss_between, ss_total),
          partial_eta_squared(anova.ss_between, anova.ss_within),
          omega_squared(anova.ss_between, anova.df_between, anova.ms_within, ss_total)};
}

}  // namespace scalebench::stats
