#include "stats/nested_anova.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/tools/minima.hpp>
#include <cmath>
#include <limits>
#include <numeric>

namespace scalebench::stats {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct Run {
  double n = 0;
  double mean = 0;  // of the shifted values
  double ssw = 0;   // sum of squares about the run's mean
};

struct Design {
  std::vector<std::vector<Run>> groups;
  double observations = 0;
  double shift = 0;  // subtracted from every value: the statistics do not depend on an offset
};

// The GLS group means and the "weighted" sums of one group for run weights n / (1 + n theta^2).
struct GroupFit {
  double weight_sum = 0;  // S_i(theta) = sum_j n_j / (1 + n_j theta^2)
  double mean = 0;
  double between = 0;  // sum_j w_j (mean_j - mean)^2
};

GroupFit fit_group(const std::vector<Run>& runs, double theta) {
  GroupFit fit;
  double weighted = 0;
  for (const Run& run : runs) {
    const double w = run.n / (1 + run.n * theta * theta);
    fit.weight_sum += w;
    weighted += w * run.mean;
  }
  fit.mean = weighted / fit.weight_sum;
  for (const Run& run : runs) {
    const double w = run.n / (1 + run.n * theta * theta);
    fit.between += w * (run.mean - fit.mean) * (run.mean - fit.mean);
  }
  return fit;
}

// Penalised residual sum of squares Q(theta) = sum SSW + sum w (mean_j - mean_i)^2 and the log
// determinants of the REML criterion (Bates et al. 2015, lme4, eq. 42).
struct Criterion {
  double q = 0;
  double log_det = 0;  // sum_j log(1 + n_j theta^2) + sum_i log S_i
};

Criterion criterion(const Design& design, double theta) {
  Criterion c;
  for (const auto& runs : design.groups) {
    const GroupFit fit = fit_group(runs, theta);
    c.q += fit.between;
    c.log_det += std::log(fit.weight_sum);
    for (const Run& run : runs) {
      c.q += run.ssw;
      c.log_det += std::log1p(run.n * theta * theta);
    }
  }
  return c;
}

double residual_df(const Design& design) {
  return design.observations - static_cast<double>(design.groups.size());
}

// The REML deviance with sigma profiled out (sigma^2 = Q / (N - p)).
double profiled_deviance(const Design& design, double theta) {
  const Criterion c = criterion(design, theta);
  const double m = residual_df(design);
  return m * std::log(c.q / m) + c.log_det + m * (1 + std::log(2 * kPi));
}

// Var(sum c_i mean_i) at (theta, sigma) = sigma^2 sum c_i^2 / S_i(theta), and its gradient.
struct ContrastVariance {
  double value = 0;
  std::array<double, 2> gradient{};  // d/dtheta, d/dsigma
};

ContrastVariance contrast_variance(const std::vector<std::vector<double>>& run_sizes, double theta,
                                   double sigma, const std::vector<double>& c) {
  ContrastVariance v;
  double sum = 0, dsum = 0;
  for (std::size_t i = 0; i < run_sizes.size(); ++i) {
    if (c[i] == 0) continue;
    double s = 0, ds = 0;
    for (const double n : run_sizes[i]) {
      const double denominator = 1 + n * theta * theta;
      s += n / denominator;
      ds += -2 * n * n * theta / (denominator * denominator);
    }
    sum += c[i] * c[i] / s;
    dsum += -c[i] * c[i] * ds / (s * s);
  }
  v.value = sigma * sigma * sum;
  v.gradient = {sigma * sigma * dsum, 2 * sigma * sum};
  return v;
}

double quadratic_form(const std::array<double, 2>& g,
                      const std::array<std::array<double, 2>, 2>& a) {
  return g[0] * (a[0][0] * g[0] + a[0][1] * g[1]) + g[1] * (a[1][0] * g[0] + a[1][1] * g[1]);
}

// Q(theta) and L(theta) = sum_j log(1 + n_j theta^2) + sum_i log S_i with their first two
// derivatives in closed form: with a_j = n_j / (1 + n_j theta^2), a' = -2 theta a^2,
// a'' = -2 a^2 + 8 theta^2 a^3; Q_i = sum a_j e_j^2 (e_j = mean_j - GLS mean) has Q' = sum a' e^2
// (the GLS mean minimises it) and Q'' = sum a'' e^2 - 2 (sum a' e)^2 / S.
struct CriterionDerivatives {
  double q = 0, dq = 0, d2q = 0;
  double d2l = 0;
};

CriterionDerivatives criterion_derivatives(const Design& design, double theta) {
  CriterionDerivatives d;
  for (const auto& runs : design.groups) {
    const GroupFit fit = fit_group(runs, theta);
    double s1 = 0, s2 = 0, ae = 0;
    for (const Run& run : runs) {
      const double a = run.n / (1 + run.n * theta * theta);
      const double a1 = -2 * theta * a * a;
      const double a2 = -2 * a * a + 8 * theta * theta * a * a * a;
      const double e = run.mean - fit.mean;
      d.q += run.ssw + a * e * e;
      d.dq += a1 * e * e;
      d.d2q += a2 * e * e;
      ae += a1 * e;
      s1 += a1;
      s2 += a2;
      d.d2l += 2 * a - 4 * theta * theta * a * a;  // log(1 + n theta^2)''
    }
    d.d2q -= 2 * ae * ae / fit.weight_sum;
    d.d2l += s2 / fit.weight_sum - (s1 / fit.weight_sum) * (s1 / fit.weight_sum);  // log S''
  }
  return d;
}

// The Hessian of the REML deviance m log(2 pi sigma^2) + L(theta) + Q(theta) / sigma^2 in
// (theta, sigma), exact: lmerTest takes it numerically (numDeriv), which loses digits where the
// run variance is small next to the epoch variance.
std::array<std::array<double, 2>, 2> deviance_hessian(const Design& design, double theta,
                                                      double sigma) {
  const CriterionDerivatives d = criterion_derivatives(design, theta);
  const double m = residual_df(design);
  const double s2 = sigma * sigma;
  const double tt = d.d2l + d.d2q / s2;
  const double ts = -2 * d.dq / (s2 * sigma);
  const double ss = -2 * m / s2 + 6 * d.q / (s2 * s2);
  return {{{tt, ts}, {ts, ss}}};
}

double satterthwaite_df(const NestedAnova& fit, const ContrastVariance& v) {
  const double denominator = quadratic_form(v.gradient, fit.varpar_covariance);
  if (!(denominator > 0)) return std::numeric_limits<double>::infinity();
  return 2 * v.value * v.value / denominator;
}

NestedEstimate estimate_of(const NestedAnova& fit, const std::vector<double>& c) {
  NestedEstimate e;
  for (std::size_t i = 0; i < c.size(); ++i) e.estimate += c[i] * fit.means[i];
  const ContrastVariance v = contrast_variance(fit.run_sizes, fit.theta, fit.sigma, c);
  e.se = std::sqrt(v.value);
  e.df = satterthwaite_df(fit, v);
  e.t = e.estimate / e.se;
  if (std::isinf(e.df)) {
    e.p = std::erfc(std::abs(e.t) / std::sqrt(2.0));
  } else {
    e.p =
        2 * boost::math::cdf(boost::math::complement(boost::math::students_t(e.df), std::abs(e.t)));
  }
  return e;
}

// Eigen decomposition of a symmetric matrix by cyclic Jacobi rotations (Golub & Van Loan 2013,
// alg. 8.5.3): values descending, vectors[m] the m-th unit eigenvector.
void symmetric_eigen(std::vector<std::vector<double>> a, std::vector<double>& values,
                     std::vector<std::vector<double>>& vectors) {
  const std::size_t n = a.size();
  std::vector<std::vector<double>> v(n, std::vector<double>(n, 0));
  for (std::size_t i = 0; i < n; ++i) v[i][i] = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, total = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) (i == j ? total : off) += a[i][j] * a[i][j];
    if (off <= 1e-30 * (total + off)) break;
    for (std::size_t p = 0; p < n; ++p) {
      for (std::size_t q = p + 1; q < n; ++q) {
        if (a[p][q] == 0) continue;
        const double tau = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (tau >= 0 ? 1 : -1) / (std::abs(tau) + std::sqrt(1 + tau * tau));
        const double c = 1 / std::sqrt(1 + t * t), s = t * c;
        for (std::size_t k = 0; k < n; ++k) {
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (std::size_t k = 0; k < n; ++k) {
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (std::size_t k = 0; k < n; ++k) {
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto x, auto y) { return a[x][x] > a[y][y]; });
  values.clear();
  vectors.clear();
  for (const auto m : order) {
    values.push_back(a[m][m]);
    std::vector<double> vector(n);
    for (std::size_t k = 0; k < n; ++k) vector[k] = v[k][m];
    vectors.push_back(std::move(vector));
  }
}

// The hypothesis rows lmerTest's anova uses for the group term of y ~ group: rows 2..k of t(L)
// of the Doolittle factorisation X'X = L D L' of the treatment-coded design, mapped to the cell
// means (b_1 = mean_1, b_i = mean_i - mean_1). Same hypothesis as any other basis (so the same F),
// and the same Satterthwaite d.f. as R, which depend on the basis.
std::vector<std::vector<double>> group_hypothesis(const std::vector<double>& epochs) {
  const std::size_t k = epochs.size();
  const double total = std::accumulate(epochs.begin(), epochs.end(), 0.0);
  std::vector<std::vector<double>> x(k, std::vector<double>(k, 0));  // X'X, treatment coding
  x[0][0] = total;
  for (std::size_t i = 1; i < k; ++i) x[0][i] = x[i][0] = x[i][i] = epochs[i];
  // Doolittle: x = L U; for symmetric x, column r of L is row r of U over U[r][r].
  std::vector<std::vector<double>> l(k, std::vector<double>(k, 0)), u = x;
  for (std::size_t r = 0; r < k; ++r) {
    l[r][r] = 1;
    for (std::size_t s = r + 1; s < k; ++s) {
      l[s][r] = u[s][r] / u[r][r];
      for (std::size_t c = r; c < k; ++c) u[s][c] -= l[s][r] * u[r][c];
    }
  }
  std::vector<std::vector<double>> rows;
  for (std::size_t r = 1; r < k; ++r) {
    std::vector<double> b(k, 0);  // over the treatment coefficients: row r of t(L)
    for (std::size_t s = 0; s < k; ++s) b[s] = l[s][r];
    std::vector<double> c(k, 0);  // over the cell means
    for (std::size_t i = 1; i < k; ++i) {
      c[i] = b[i];
      c[0] -= b[i];
    }
    c[0] += b[0];
    rows.push_back(std::move(c));
  }
  return rows;
}

Design make_design(const NestedData& groups) {
  if (groups.empty()) throw StatsError("the nested analysis needs at least one group");
  Design design;
  bool have_shift = false;
  std::size_t runs = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].empty()) throw StatsError(fmt::format("group {} has no run", i + 1));
    std::vector<Run> out;
    for (std::size_t j = 0; j < groups[i].size(); ++j) {
      const auto& epochs = groups[i][j];
      if (epochs.empty())
        throw StatsError(fmt::format("run {} of group {} has no epoch", j + 1, i + 1));
      for (const double value : epochs)
        if (!std::isfinite(value))
          throw StatsError(fmt::format("run {} of group {} has a non-finite value", j + 1, i + 1));
      if (!have_shift) {
        design.shift = epochs.front();
        have_shift = true;
      }
      Run run;
      run.n = static_cast<double>(epochs.size());
      for (const double value : epochs) run.mean += value - design.shift;
      run.mean /= run.n;
      for (const double value : epochs) {
        const double d = value - design.shift - run.mean;
        run.ssw += d * d;
      }
      design.observations += run.n;
      out.push_back(run);
      ++runs;
    }
    design.groups.push_back(std::move(out));
  }
  if (runs <= groups.size()) {
    throw StatsError(
        "the nested analysis needs two runs in one group at least: with one run per group the "
        "run-to-run variance cannot be told from the group effect");
  }
  double ssw = 0, scale = 0;
  for (const auto& g : design.groups)
    for (const Run& run : g) {
      ssw += run.ssw;
      scale += run.n * run.mean * run.mean;
    }
  if (!(ssw > 1e-24 * std::max(scale, 1e-300)) ||
      design.observations <= static_cast<double>(runs)) {
    throw StatsError(
        "no variation of epoch times within runs (one epoch per run, or equal epochs): the "
        "nested analysis needs it; analyse one mean per run instead");
  }
  return design;
}

}  // namespace

NestedAnova nested_anova(const NestedData& groups) {
  const Design design = make_design(groups);
  NestedAnova fit;
  fit.observations = static_cast<std::size_t>(design.observations);
  for (const auto& g : design.groups) {
    fit.runs += g.size();
    std::vector<double> sizes;
    for (const Run& run : g) sizes.push_back(run.n);
    fit.run_sizes.push_back(std::move(sizes));
  }

  // theta >= 0 as u / (1 - u) with u in [0, 1): a bounded search for Brent's method.
  const auto objective = [&](double u) { return profiled_deviance(design, u / (1 - u)); };
  const double u_max = 1 - 1e-9;
  std::uintmax_t iterations = 500;
  const auto [u_best, d_best] = boost::math::tools::brent_find_minima(
      objective, 0.0, u_max, std::numeric_limits<double>::digits / 2, iterations);
  double u = u_best;
  if (objective(0.0) <= d_best) u = 0;
  fit.theta = u / (1 - u);
  fit.singular = fit.theta < 1e-6;
  if (fit.singular) fit.theta = 0;
  const Criterion c = criterion(design, fit.theta);
  fit.sigma = std::sqrt(c.q / residual_df(design));
  fit.epoch_variance = fit.sigma * fit.sigma;
  fit.run_variance = fit.theta * fit.theta * fit.epoch_variance;

  const auto h = deviance_hessian(design, fit.theta, fit.sigma);
  const double det = h[0][0] * h[1][1] - h[0][1] * h[1][0];
  if (det > 0) {
    fit.varpar_covariance = {
        {{2 * h[1][1] / det, -2 * h[0][1] / det}, {-2 * h[1][0] / det, 2 * h[0][0] / det}}};
  } else {
    // A flat direction (a singular fit): only sigma's variance is defined, theta held fixed.
    fit.varpar_covariance = {{{0, 0}, {0, h[1][1] > 0 ? 2 / h[1][1] : 0}}};
  }

  const std::size_t k = design.groups.size();
  std::vector<double> epochs;
  for (std::size_t i = 0; i < k; ++i) {
    const GroupFit g = fit_group(design.groups[i], fit.theta);
    fit.means.push_back(g.mean + design.shift);
    epochs.push_back(std::accumulate(fit.run_sizes[i].begin(), fit.run_sizes[i].end(), 0.0));
  }
  for (std::size_t i = 0; i < k; ++i) {
    std::vector<double> unit(k, 0);
    unit[i] = 1;
    fit.mean_estimates.push_back(estimate_of(fit, unit));
  }
  if (k < 2) return fit;

  // The multi-d.f. Satterthwaite F of lmerTest::contestMD: the hypothesis rows turned to the
  // eigenvectors of their covariance, one t statistic and one d.f. per direction.
  const auto rows = group_hypothesis(epochs);
  const std::size_t q = rows.size();
  std::vector<std::vector<double>> covariance(q, std::vector<double>(q, 0));
  for (std::size_t a = 0; a < q; ++a)
    for (std::size_t b = 0; b < q; ++b)
      for (std::size_t i = 0; i < k; ++i)
        covariance[a][b] +=
            rows[a][i] * rows[b][i] * fit.mean_estimates[i].se * fit.mean_estimates[i].se;
  std::vector<double> values;
  std::vector<std::vector<double>> vectors;
  symmetric_eigen(covariance, values, vectors);
  double f_sum = 0;
  std::vector<double> nu;
  for (std::size_t m = 0; m < q; ++m) {
    std::vector<double> c(k, 0);
    for (std::size_t a = 0; a < q; ++a)
      for (std::size_t i = 0; i < k; ++i) c[i] += vectors[m][a] * rows[a][i];
    const ContrastVariance v = contrast_variance(fit.run_sizes, fit.theta, fit.sigma, c);
    double estimate = 0;
    for (std::size_t i = 0; i < k; ++i) estimate += c[i] * (fit.means[i] - design.shift);
    f_sum += estimate * estimate / values[m];
    nu.push_back(satterthwaite_df(fit, v));
  }
  double df = 0;
  const auto [lowest, highest] = std::minmax_element(nu.begin(), nu.end());
  if (q == 1 || *highest - *lowest < 1e-8) {
    df = std::accumulate(nu.begin(), nu.end(), 0.0) / static_cast<double>(q);
  } else if (*lowest <= 2) {
    df = 2;
  } else {
    double e = 0;
    for (const double n : nu) e += n / (n - 2);
    df = 2 * e / (e - static_cast<double>(q));
  }
  fit.f = f_sum / static_cast<double>(q);
  fit.df_num = static_cast<double>(q);
  fit.df_den = df;
  fit.p = std::isinf(df) ? std::numeric_limits<double>::quiet_NaN()
                         : boost::math::cdf(boost::math::complement(
                               boost::math::fisher_f(static_cast<double>(q), df), *fit.f));
  return fit;
}

NestedEstimate nested_contrast(const NestedAnova& fit, const std::vector<double>& weights) {
  if (weights.size() != fit.means.size()) {
    throw StatsError(fmt::format("a contrast of {} groups needs {} weights, not {}",
                                 fit.means.size(), fit.means.size(), weights.size()));
  }
  if (std::all_of(weights.begin(), weights.end(), [](double w) { return w == 0; }))
    throw StatsError("a contrast needs a non-zero weight");
  return estimate_of(fit, weights);
}

std::vector<TukeyPair> nested_tukey(const NestedAnova& fit, double confidence,
                                    std::optional<std::size_t> base) {
  const std::size_t k = fit.means.size();
  if (k < 2) throw StatsError("Tukey's test needs at least two groups");
  if (!(confidence > 0 && confidence < 1))
    throw StatsError(fmt::format("confidence {} is not in (0, 1)", confidence));
  if (base && *base >= k) throw StatsError(fmt::format("no group {} of {}", *base + 1, k));
  const auto pair = [&](std::size_t a, std::size_t b) {
    std::vector<double> c(k, 0);
    c[b] = 1;
    c[a] = -1;
    const NestedEstimate e = nested_contrast(fit, c);
    TukeyPair out;
    out.a = a;
    out.b = b;
    out.diff = e.estimate;
    out.q = std::sqrt(2.0) * std::abs(e.t);
    const double df = std::isinf(e.df) ? std::numeric_limits<double>::infinity() : e.df;
    out.p_adjusted = studentized_range_survival(out.q, static_cast<double>(k), df);
    const double half =
        studentized_range_quantile(confidence, static_cast<double>(k), df) / std::sqrt(2.0) * e.se;
    out.lower = e.estimate - half;
    out.upper = e.estimate + half;
    return out;
  };
  std::vector<TukeyPair> pairs;
  if (base) {
    for (std::size_t i = 0; i < k; ++i)
      if (i != *base) pairs.push_back(pair(*base, i));
    return pairs;
  }
  for (std::size_t a = 0; a < k; ++a)
    for (std::size_t b = a + 1; b < k; ++b) pairs.push_back(pair(a, b));
  return pairs;
}

// Delta method on the log ratio (as ratio_interval), its d.f. by Satterthwaite for the contrast
// (Kuznetsova et al. 2017): R's lmerTest::contest1D(m, L), L the gradient of log(m_a / m_b).
RatioInterval nested_ratio_interval(const NestedAnova& fit, std::size_t numerator,
                                    std::size_t denominator, double confidence) {
  const std::size_t k = fit.means.size();
  if (numerator >= k || denominator >= k || numerator == denominator)
    throw StatsError("a ratio of two different groups of the fit");
  if (!(confidence > 0 && confidence < 1)) throw StatsError("confidence must lie in (0, 1)");
  const double a = fit.means[numerator], b = fit.means[denominator];
  if (!(a > 0) || !(b > 0)) throw StatsError("a ratio interval needs positive means");
  std::vector<double> weights(k, 0.0);
  weights[numerator] = 1 / a;
  weights[denominator] = -1 / b;
  const NestedEstimate log_scale = nested_contrast(fit, weights);
  return log_scale_interval(a / b, log_scale.se, log_scale.df, confidence);
}

}  // namespace scalebench::stats
