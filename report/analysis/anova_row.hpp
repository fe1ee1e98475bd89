// One row of an ANOVA table, the one type for every ANOVA the report shows: `stats`' table (all
// effect sizes) and the two-way ANOVA under a factor report's blocks (F, d.f., p and partial eta
// squared; the other effect sizes absent).
#pragma once

#include <optional>
#include <string>

namespace scalebench::report {

struct AnovaRow {
  std::string term;  // a factor name, "A:B", or "Residuals"
  double df = 0;
  double ss = 0;
  double ms = 0;
  std::optional<double> f = std::nullopt;  // absent for Residuals
  std::optional<double> p = std::nullopt;
  std::optional<double> eta_sq = std::nullopt;
  std::optional<double> partial_eta_sq = std::nullopt;
  std::optional<double> omega_sq = std::nullopt;
};

}  // namespace scalebench::report
