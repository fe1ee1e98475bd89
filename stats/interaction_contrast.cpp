#include "stats/interaction_contrast.hpp"

#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "stats/descriptive.hpp"

namespace scalebench::stats {

InteractionContrast interaction_contrast(
    const std::array<std::array<std::vector<double>, 2>, 2>& cells, double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw StatsError("confidence must be in (0, 1), got " + std::to_string(confidence));
  double n_total = 0, ss_residual = 0, inverse_n = 0;
  std::array<std::array<double, 2>, 2> means{};
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      const auto& values = cells[a][b];
      if (values.empty())
        throw StatsError("interaction contrast: cell (" + std::to_string(a + 1) + ", " +
                         std::to_string(b + 1) +
                         ") has no observation; every cell of the 2 x 2 design needs one");
      for (double v : values)
        if (!std::isfinite(v)) throw StatsError("interaction contrast: a non-finite observation");
      means[a][b] = mean(values);
      for (double v : values) ss_residual += (v - means[a][b]) * (v - means[a][b]);
      n_total += static_cast<double>(values.size());
      inverse_n += 1.0 / static_cast<double>(values.size());
    }
  InteractionContrast out;
  out.df = n_total - 4;
  if (out.df < 1)
    throw StatsError(
        "interaction contrast: 4 observations give no residual degrees of freedom; repeat a "
        "cell (more repetitions)");
  out.estimate = (means[1][1] - means[1][0]) - (means[0][1] - means[0][0]);
  out.se = std::sqrt(ss_residual / out.df * inverse_n);
  const boost::math::students_t t_dist(out.df);
  const double half =
      boost::math::quantile(boost::math::complement(t_dist, (1 - confidence) / 2)) * out.se;
  out.ci = {out.estimate - half, out.estimate + half};
  if (out.se > 0) {
    out.t = out.estimate / out.se;
    out.p = 2 * boost::math::cdf(boost::math::complement(t_dist, std::abs(out.t)));
  } else {
    // No residual variance: an exact difference (any non-zero estimate is certain).
    out.t = out.estimate == 0
                ? 0
                : std::copysign(std::numeric_limits<double>::infinity(), out.estimate);
    out.p = out.estimate == 0 ? 1 : 0;
  }
  return out;
}

}  // namespace scalebench::stats
