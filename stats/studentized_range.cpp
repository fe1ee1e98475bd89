// The studentized range distribution by nested adaptive quadrature, in log space.
//
// Q = R / s, R the range of k independent N(0,1), s = sqrt(chi2_df / df) independent of R.
//   P(R > x)  = k * int phi(z) [Phi(z)^(k-1) - (Phi(z) - Phi(z-x))^(k-1)] dz   (upper tail, direct)
//   P(R <= x) = k * int phi(z) [Phi(z) - Phi(z-x)]^(k-1) dz                       (lower tail,
//   direct) P(Q > q)  = int f_s(s) P(R > q s) ds, taken over t = log s.
// Every integrand is evaluated as a logarithm and integrated as exp(g - max g) around its mode, so
// neither the tiny upper tail (1e-100 and far below) nor the chi density's narrow peak at large df
// is lost. Method: Copenhaver & Holland (1988, J. Stat. Comput. Simul. 30:1-15), with
// double-exponential (sinh-sinh) quadrature from Boost.Math in place of fixed Gauss-Legendre
// panels.
#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/quadrature/sinh_sinh.hpp>
#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "stats/error.hpp"
#include "stats/studentized_range_detail.hpp"
#include "stats/tukey.hpp"

namespace scalebench::stats {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log(sqrt(2 pi))
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kLn2 = 0.69314718055994530942;
// Above this df the normal limit (df = inf) is used: it differs by about q^4 / (4 df) relative,
// ~2e-9 at p ~ 1e-300 and far less in the body, while the chi weight's peak in t = log s
// (width 1/sqrt(2 df)) gets too narrow for the mode search to resolve cheaply.
constexpr double kDfInfinite = 1e15;

// log(1 - exp(y)) for y <= 0 without cancellation (Maechler 2012, "Accurately computing log(1 -
// exp(-|a|))").
double log1mexp(double y) {
  return y > -kLn2 ? std::log(-std::expm1(y)) : std::log1p(-std::exp(y));
}

// log Phi(x): erfc where it is accurate, the Mills-ratio asymptotic series (Abramowitz &
// Stegun 26.2.12) below -35 where erfc would underflow.
double log_normal_cdf(double x) {
  if (std::isnan(x)) return kNaN;
  if (x > 0) return std::log1p(-0.5 * std::erfc(x * kSqrtHalf));
  if (x > -35) return std::log(0.5 * std::erfc(-x * kSqrtHalf));
  if (x == -kInf) return -kInf;
  const double r = 1 / (x * x);
  // 1 - 1/x^2 + 3/x^4 - 15/x^6 + ...; the first omitted term is below 1e-16 at |x| = 35.
  const double series =
      1 + r * (-1 + r * (3 + r * (-15 + r * (105 + r * (-945 + r * (10395 + r * -135135))))));
  return -0.5 * x * x - std::log(-x) - kLogSqrt2Pi + std::log(series);
}

// log(Phi(hi) - Phi(lo)) for lo <= hi, from whichever tails avoid cancellation.
double log_normal_interval(double lo, double hi) {
  if (lo >= 0) {  // both in the upper tail: Phibar(lo) - Phibar(hi)
    const double a = log_normal_cdf(-lo);
    return a + log1mexp(log_normal_cdf(-hi) - a);
  }
  if (hi <= 0) {  // both in the lower tail
    const double b = log_normal_cdf(hi);
    return b + log1mexp(log_normal_cdf(lo) - b);
  }
  return std::log(0.5 * (std::erf(hi * kSqrtHalf) -
                         std::erf(lo * kSqrtHalf)));  // opposite signs: no cancellation
}

// Error target of the double-exponential rule below. 1e-9 already gives ~1e-13 at small k, but at
// k = 64, df ~ 6e5 it leaves 2e-11; the reference entry point (for tests) asks for 1e-13, ~4x
// slower.
thread_local double quadrature_tolerance = 1e-9;

// Integrate exp(g(u)) over the real line for a unimodal log-integrand g whose mode lies in
// [lo, hi]; returns the log of the integral. `scale` is a rough width of the peak.
template <class G>
double log_integral(G g, double lo, double hi, double scale) {
  std::uintmax_t iterations = 200;
  const auto negated = [&](double u) {
    const double v = g(u);
    return std::isnan(v) ? 1e100 : -std::max(v, -1e100);  // keep Brent's parabolas finite
  };
  const double mode = boost::math::tools::brent_find_minima(negated, lo, hi, 20, iterations).first;
  const double peak = g(mode);
  if (!std::isfinite(peak)) return peak;  // -inf: the integrand vanishes (or NaN propagates)
  // Width from the curvature at the mode, so the half-line maps below put the peak at unit scale.
  const double h = 0.25 * scale;
  const double drop = 2 * peak - g(mode + h) - g(mode - h);
  double width = drop > 0 ? h / std::sqrt(drop) : scale;
  width = std::min(std::max(width, 0.05 * scale), 20 * scale);
  // Below e^-10000 the rounding of g itself (~1e-16 |g|) makes quadrature noise; such values only
  // ever feed an outer integral that is e^-9000 larger, so Laplace's approximation is plenty.
  if (peak < -1e4) return peak + std::log(width * 2.5066282746310002);
  // Double-exponential quadrature over the real line: the scaled integrand is analytic and
  // decays at least exponentially, where sinh-sinh converges in ~100-200 points.
  const auto centred = [&](double v) {
    const double u = mode + width * v;
    const double e = std::isfinite(u) ? std::exp(g(u) - peak) : 0.0;
    return std::isnan(e) ? 0.0 : e;  // only at the rule's extreme nodes, where the integrand is 0
  };
  static boost::math::quadrature::sinh_sinh<double> rule(10);  // abscissas are shared, thread-safe
  const double integral = rule.integrate(centred, quadrature_tolerance);
  return peak + std::log(width * integral);
}

// Beyond this the range survival is below e^-2500 and its asymptote is used (it only ever feeds
// negligible parts of outer integrals, and keeps the mode searches' brackets short).
constexpr double kRangeFar = detail::kRangeFar;

// P(R > x) -> k(k-1)/2 P(|Z1 - Z2| > x) as x -> inf: the extremes sit near +-x/2 and the rest
// fall between them with probability -> 1.
double log_range_survival_asymptote(double x, double k) {
  return std::log(k * (k - 1) / 2) + kLn2 + log_normal_cdf(-x * kSqrtHalf);
}

// log P(R > x) for the range R of k standard normals.
double log_range_survival(double x, double k) {
  if (x <= 0) return 0;
  if (x >= kRangeFar) return log_range_survival_asymptote(x, k);
  const double log_k = std::log(k);
  const double log_k1 = std::log(k - 1);
  const auto g = [&](double z) {
    const double la = log_normal_cdf(z);
    const double d = log_normal_cdf(z - x) - la;  // log(Phi(z-x)/Phi(z)) <= 0
    // log(1 - (1 - r)^(k-1)), r = e^d; when r underflows it is log((k-1) r) to within (k-1) r.
    const double tail = d < -700 ? log_k1 + d : log1mexp((k - 1) * log1mexp(d));
    return log_k - 0.5 * z * z - kLogSqrt2Pi + (k - 1) * la + tail;
  };
  return log_integral(g, -8.0, x + 8.0, 1.0);
}

// log P(R <= x) for the range R of k standard normals.
double log_range_cdf(double x, double k) {
  if (x <= 0) return -kInf;
  if (x >= kRangeFar) return -std::exp(log_range_survival_asymptote(x, k));  // log(1 - tiny)
  const double log_k = std::log(k);
  const auto g = [&](double z) {
    return log_k - 0.5 * z * z - kLogSqrt2Pi + (k - 1) * log_normal_interval(z - x, z);
  };
  return log_integral(g, -8.0, x + 8.0, 1.0);
}

// e^u - 1 - u without cancellation near 0 (series below 0.1, where it matters at large df).
double expm1_minus_identity(double u) {
  if (std::abs(u) >= 0.1) return std::expm1(u) - u;
  double term = u * u / 2;
  double sum = term;
  for (int n = 3; n < 14; ++n) {
    term *= u / n;
    sum += term;
  }
  return sum;
}

// log Gamma(nu) - Stirling's approximation, by its asymptotic series for large nu (A&S 6.1.41).
double stirling_correction(double nu) {
  if (nu < 10) return std::lgamma(nu) - ((nu - 0.5) * std::log(nu) - nu + kLogSqrt2Pi);
  const double r = 1 / (nu * nu);
  return (1.0 / 12 +
          r * (-1.0 / 360 +
               r * (1.0 / 1260 + r * (-1.0 / 1680 + r * (1.0 / 1188 + r * (-691.0 / 360360)))))) /
         nu;
}

// The scaled chi density of s = sqrt(chi2_df/df) on t = log s, times ds/dt, as a logarithm:
// log(2 sqrt(nu / 2pi)) - stirling(nu) - nu (e^{2t} - 1 - 2t), nu = df/2 (integrates to 1 over t).
struct LogChiWeight {
  double nu;
  double constant;
  explicit LogChiWeight(double df)
      : nu(df / 2),
        constant(kLn2 + 0.5 * std::log(df / 2) - kLogSqrt2Pi - stirling_correction(df / 2)) {}
  double operator()(double t) const { return constant - nu * expm1_minus_identity(2 * t); }
};

void check_parameters(double k, double df) {
  if (!(k >= 2) || !std::isfinite(k)) {
    throw StatsError("studentized range needs k >= 2 groups (finite), got " + std::to_string(k));
  }
  if (!(df > 0)) throw StatsError("studentized range needs df > 0, got " + std::to_string(df));
}

// Width of the chi weight in t = log s, as a scale hint for the outer integral.
double chi_scale(double df) { return std::min(1.0, 1 / std::sqrt(2 * df)); }

// log P(Q > q) for q > 0 finite, the inner log P(R > x) given as `inner` (exact or tabulated).
template <class Inner>
double log_survival_positive_with(double q, double df, Inner inner) {
  if (df > kDfInfinite) return inner(q);
  const LogChiWeight weight(df);
  const auto g = [&](double t) { return weight(t) + inner(q * std::exp(t)); };
  // The chi weight rises for t < 0 and the range survival falls in t: the mode is at t <= 0 and
  // above where q s is so small that P(R > q s) is flat.
  const double lo = std::min(0.0, std::log(0.5 / q)) - 3;
  return log_integral(g, lo, 0.5, chi_scale(df));
}

double log_survival_positive(double q, double k, double df) {
  return log_survival_positive_with(q, df, [k](double x) { return log_range_survival(x, k); });
}

// ---- Fast path: fixed-step trapezoidal rules on precomputed nodes
// --------------------------------
//
// Both integrands are analytic and decay like Gaussians away from one peak, where the trapezoidal
// rule with step h converges like exp(-2 pi^2 (sigma / h)^2) for a peak of width sigma (Trefethen &
// Weideman 2014, "The exponentially convergent trapezoidal rule", SIAM Review 56:385-458); h =
// sigma / 2 already leaves ~e^-79. So no adaptivity is needed, the inner nodes can sit on one
// lattice z_i = i h whose factors k phi(z_i) Phi(z_i)^(k-1) are computed once per k, and each node
// costs one erfc, one log1p and one expm1 in plain (not log) space. Results below kLatticeFloor
// go to the log-space reference above.

constexpr double kLatticeStep =
    0.125;  // inner step in z: the max-of-k density has sd >= 0.25 up to k ~ 1e5
constexpr int kLatticeLow = -296;  // z = -37: Phi(z) ~ 6e-300, still a normal double
constexpr int kLatticeHigh =
    720;  // z = 90: beyond the peak (x / 2) of any x below kLatticeRangeMax
constexpr double kLatticeRangeMax = 80;  // P(R > 80) < 1e-690: far below kLatticeFloor
constexpr double kLatticeFloor = 1e-280;
constexpr double kLatticeMaxK = 200;
constexpr double kLatticeMinDf = 5;
constexpr double kLatticeTolerance =
    1e-19;  // stop a walk once terms fall below this times the peak

// Per-k node factors of the inner rule, h k phi(z_i) Phi(z_i)^(k-1), and Phi(z_i).
struct RangeLattice {
  double k = 0;
  std::vector<double> weight;
  std::vector<double> cdf;
  int peak = 0;  // index of the largest weight (the mode of the max of k normals)

  explicit RangeLattice(double k_) : k(k_) {
    const std::size_t n = kLatticeHigh - kLatticeLow + 1;
    weight.resize(n);
    cdf.resize(n);
    const double log_hk = std::log(kLatticeStep * k);
    for (std::size_t j = 0; j < n; ++j) {
      const double z = (kLatticeLow + static_cast<int>(j)) * kLatticeStep;
      cdf[j] = 0.5 * std::erfc(-z * kSqrtHalf);
      weight[j] = std::exp(log_hk - 0.5 * z * z - kLogSqrt2Pi + (k - 1) * log_normal_cdf(z));
      if (weight[j] > weight[peak]) peak = static_cast<int>(j);
    }
    peak += kLatticeLow;
  }
};

// The lattice of the last k used on this thread (Tukey HSD asks for one k many times).
const RangeLattice& lattice_for(double k) {
  thread_local std::unique_ptr<RangeLattice> cached;
  if (!cached || cached->k != k) cached = std::make_unique<RangeLattice>(k);
  return *cached;
}

// Sums term(i) over i in [low, high] outward from `start` until the terms fall below
// kLatticeTolerance times the largest seen, for a unimodal sequence of nonnegative terms.
template <class Term>
double walk_sum(Term term, int start, int low, int high) {
  const double first = term(start);
  double sum = first;
  double peak = first;
  double previous = first;
  for (int i = start + 1; i <= high; ++i) {
    const double v = term(i);
    sum += v;
    peak = std::max(peak, v);
    if (v <= previous && v < kLatticeTolerance * peak) break;
    previous = v;
  }
  previous = first;
  for (int i = start - 1; i >= low; --i) {
    const double v = term(i);
    sum += v;
    peak = std::max(peak, v);
    if (v <= previous && v < kLatticeTolerance * peak) break;
    previous = v;
  }
  return sum;
}

// P(R > x) = sum_i h k phi(z_i) Phi(z_i)^(k-1) [1 - (1 - r_i)^(k-1)], r_i = Phi(z_i - x) /
// Phi(z_i), the bracket as -expm1((k-1) log1p(-r)): no cancellation when r is tiny (the far tail).
double range_survival_lattice(double x, const RangeLattice& lattice) {
  if (!(x > 0)) return 1;
  if (x >= kLatticeRangeMax) return 0;
  const double km1 = lattice.k - 1;
  const auto term = [&](int i) {
    const std::size_t j = static_cast<std::size_t>(i - kLatticeLow);
    const double below = 0.5 * std::erfc((x - i * kLatticeStep) * kSqrtHalf);  // Phi(z_i - x)
    const double r = std::min(below / lattice.cdf[j], 1.0);
    return lattice.weight[j] * -std::expm1(km1 * std::log1p(-r));
  };
  // The integrand peaks at or right of the max's mode, and near x / 2 for large x.
  const double centre = std::max(lattice.peak * kLatticeStep, 0.5 * x);
  const int start =
      std::clamp(static_cast<int>(std::lround(centre / kLatticeStep)), kLatticeLow, kLatticeHigh);
  return walk_sum(term, start, kLatticeLow, kLatticeHigh);
}

// P(Q > q) = int w(t) P(R > q e^t) dt by the trapezoidal rule in t around the peak, its step set
// from the peak's curvature. NaN where the reference must be used instead.
double survival_lattice(double q, double k, double df) {
  // Checked against the reference (tests/stats/test_studentized_range.cpp) for k <= 200 and
  // df >= 5. Outside: k = 1000 is off by 8e-12 in the body, df = 3 by 2e-11 near p = 1 at k = 200,
  // df = 1 by 1e-9 and worse at k >= 100 (which of the two is wrong there is not settled).
  if (k > kLatticeMaxK || df < kLatticeMinDf) return kNaN;
  const RangeLattice& lattice = lattice_for(k);
  if (df > kDfInfinite) {
    const double p = range_survival_lattice(q, lattice);
    return p >= kLatticeFloor ? p : kNaN;
  }
  const LogChiWeight weight(df);
  const auto g = [&](double t) {
    return weight(t) + std::log(range_survival_lattice(q * std::exp(t), lattice));
  };
  // Start from the peak of the large-x approximation log P(R > x) ~ -x^2 / 4: there
  // 2 nu (1 - e^{2t}) = x^2 / 2, i.e. e^{2t} = 2 df / (q^2 + 2 df), with curvature -(4 nu e^{2t} +
  // x^2).
  double t = -0.5 * std::log1p(q * q / (2 * df));
  double sigma = 1 / std::sqrt(df * std::exp(2 * t) * 2 + q * q * std::exp(2 * t));
  double g0 = kNaN;
  bool settled = false;
  // Safeguarded Newton steps on finite differences of the exact log-integrand, which is concave
  // near its peak: the slope's sign brackets the peak, steps are capped and fall back to bisection.
  double below = -kInf;  // the peak lies right of this
  double above = kInf;   // and left of this
  for (int iteration = 0; iteration < 60; ++iteration) {
    const double delta = 0.25 * std::min(sigma, 0.5);
    g0 = g(t);
    const double g_plus = g(t + delta);
    const double g_minus = g(t - delta);
    if (!std::isfinite(g0) || !std::isfinite(g_plus) || !std::isfinite(g_minus)) return kNaN;
    const double slope = (g_plus - g_minus) / (2 * delta);
    const double curvature = (g_plus - 2 * g0 + g_minus) / (delta * delta);
    (slope > 0 ? below : above) = t;
    double step = slope > 0 ? 2.0 : -2.0;
    if (curvature < 0) {
      sigma = 1 / std::sqrt(-curvature);
      step = -slope / curvature;
      if (std::abs(step) < 0.5 * sigma) {
        settled = true;
        break;
      }
    }
    double next = t + std::clamp(step, -2.0, 2.0);
    if (!(next > below && next < above)) next = 0.5 * (below + above);  // both ends known here
    t = next;
  }
  if (!settled || !std::isfinite(g0)) return kNaN;
  // The chi weight in t is analytic only in |Im t| < pi/4 (e^{2t} turns around there), so the step
  // also stays well inside that strip.
  // The peak is skewed for small df (the weight's e^{2t}); a finer step there keeps 1e-13.
  const double h = std::min((df >= 1000 ? 0.5 : 0.25) * sigma, 0.1);
  const auto term = [&](int j) {
    const double u = t + j * h;
    return std::exp(weight(u)) * range_survival_lattice(q * std::exp(u), lattice);
  };
  const int reach = static_cast<int>(std::ceil(60 * std::max(sigma, 0.1) / h)) + 200;
  const double p = h * walk_sum(term, 0, -reach, reach);
  return p >= kLatticeFloor && p <= 1 + 1e-12 ? std::min(p, 1.0) : kNaN;
}

// P(Q > q) for q > 0 finite in plain space: the exact Student t identity for k = 2, else the
// lattice rules; NaN where the log-space reference must be used.
double survival_fast(double q, double k, double df) {
  if (k == 2) {
    const double p =
        df > kDfInfinite
            ? std::erfc(0.5 * q)
            : 2 * boost::math::cdf(boost::math::complement(
                      boost::math::students_t_distribution<double>(df), q * kSqrtHalf));
    return p >= kLatticeFloor ? p : kNaN;
  }
  return survival_lattice(q, k, df);
}

double log_survival_fast(double q, double k, double df) {
  const double p = survival_fast(q, k, df);
  return std::isnan(p) ? log_survival_positive(q, k, df) : std::log(p);
}

// log P(Q <= q) computed in the lower tail directly, for q > 0 finite.
double log_cdf_direct(double q, double k, double df) {
  if (df > kDfInfinite) return log_range_cdf(q, k);
  const LogChiWeight weight(df);
  const auto g = [&](double t) { return weight(t) + log_range_cdf(q * std::exp(t), k); };
  // Mirror image: the cdf of the range rises in t, the weight falls for t > 0.
  const double hi = std::max(0.0, std::log(20.0 / q)) + 3;
  return log_integral(g, -0.5, hi, chi_scale(df));
}

double log_cdf_positive(double q, double k, double df) {
  const double log_s = log_survival_fast(q, k, df);
  if (log_s <= -kLn2) return std::log1p(-std::exp(log_s));  // cdf >= 0.5: 1 - survival is accurate
  return log_cdf_direct(q, k, df);
}

using detail::solve_for_q;

}  // namespace

double studentized_range_log_survival(double q, double k, double df) {
  check_parameters(k, df);
  if (std::isnan(q)) return kNaN;
  if (q <= 0) return 0;
  if (q == kInf) return -kInf;
  return log_survival_fast(q, k, df);
}

double studentized_range_survival(double q, double k, double df) {
  check_parameters(k, df);
  if (std::isnan(q)) return kNaN;
  if (q <= 0) return 1;
  if (q == kInf) return 0;
  const double p = survival_fast(q, k, df);
  return std::isnan(p) ? std::exp(log_survival_positive(q, k, df)) : p;
}

double studentized_range_cdf(double q, double k, double df) {
  check_parameters(k, df);
  if (std::isnan(q)) return kNaN;
  if (q <= 0) return 0;
  if (q == kInf) return 1;
  const double s = survival_fast(q, k, df);
  if (s <= 0.5) return 1 - s;  // survival <= 0.5: its complement is accurate
  const double log_s = std::isnan(s) ? log_survival_positive(q, k, df) : std::log(s);
  if (log_s <= -kLn2) return 1 - std::exp(log_s);
  return std::exp(log_cdf_direct(q, k, df));
}

double studentized_range_upper_quantile(double alpha, double k, double df) {
  check_parameters(k, df);
  if (!(alpha >= 0 && alpha <= 1)) throw StatsError("upper-tail probability outside [0, 1]");
  if (alpha == 0) return kInf;
  if (alpha == 1) return 0;
  const double target = std::log(alpha);
  return solve_for_q(
      [&](double log_q) { return log_survival_fast(std::exp(log_q), k, df) - target; });
}

double studentized_range_quantile(double probability, double k, double df) {
  check_parameters(k, df);
  if (!(probability >= 0 && probability <= 1)) throw StatsError("probability outside [0, 1]");
  if (probability >= 0.5)
    return studentized_range_upper_quantile(1 - probability, k, df);  // 1 - p exact here
  if (probability == 0) return 0;
  const double target = std::log(probability);
  // log cdf increases in q; negate so the solver sees a decreasing function like the upper tail.
  return solve_for_q(
      [&](double log_q) { return target - log_cdf_positive(std::exp(log_q), k, df); });
}

namespace detail {

double studentized_range_survival_lattice(double q, double k, double df) {
  check_parameters(k, df);
  if (!(q > 0) || !std::isfinite(q)) return kNaN;
  return survival_lattice(q, k, df);
}

double studentized_range_log_survival_reference(double q, double k, double df) {
  check_parameters(k, df);
  if (std::isnan(q)) return kNaN;
  if (q <= 0) return 0;
  if (q == kInf) return -kInf;
  const double saved = quadrature_tolerance;
  quadrature_tolerance = 1e-13;
  const double r = log_survival_positive(q, k, df);
  quadrature_tolerance = saved;
  return r;
}

bool studentized_range_has_fast_path(double k, double df) {
  return k == 2 || (k <= kLatticeMaxK && df >= kLatticeMinDf);
}

double range_log_survival_reference(double x, double k) {
  const double saved = quadrature_tolerance;
  quadrature_tolerance = 1e-13;
  const double r = log_range_survival(x, k);
  quadrature_tolerance = saved;
  return r;
}

double range_log_survival_far(double x, double k) { return log_range_survival_asymptote(x, k); }

double studentized_range_log_survival_with(double q, double k, double df,
                                           const std::function<double(double)>& inner) {
  check_parameters(k, df);
  if (std::isnan(q)) return kNaN;
  if (q <= 0) return 0;
  if (q == kInf) return -kInf;
  return log_survival_positive_with(q, df, std::cref(inner));
}

}  // namespace detail
}  // namespace scalebench::stats
