#include "stats/linear_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "stats/descriptive.hpp"

namespace scalebench::stats {
namespace {

// R's lm (dqrdc2) treats a column as aliased when reflections leave less than this share of its
// norm.
constexpr double kRankTolerance = 1e-7;

// Euclidean norm of v[from..n), scaled so that huge or tiny entries neither overflow nor underflow.
double tail_norm(const std::vector<double>& v, std::size_t from) {
  double scale = 0;
  for (std::size_t i = from; i < v.size(); ++i) scale = std::max(scale, std::abs(v[i]));
  if (scale == 0) return 0;
  double sum = 0;
  for (std::size_t i = from; i < v.size(); ++i) {
    const double t = v[i] / scale;
    sum += t * t;
  }
  return scale * std::sqrt(sum);
}

// Applies H = I - 2 v v^T / (v^T v), v zero above row `from`, to target[from..n).
void reflect(const std::vector<double>& v, double vtv, std::size_t from, double* target) {
  double dot = 0;
  for (std::size_t i = from; i < v.size(); ++i) dot += v[i] * target[i];
  const double s = 2 * dot / vtv;
  for (std::size_t i = from; i < v.size(); ++i) target[i] -= s * v[i];
}

// The QR fit proper. Returns the index of the first aliased column (and leaves `fit` unfinished),
// or p when the design has full column rank.
std::size_t qr_fit(const ColumnMajorMatrix& x, const std::vector<double>& y, LeastSquaresFit& fit);

}  // namespace

LeastSquaresFit least_squares(const ColumnMajorMatrix& x, const std::vector<double>& y) {
  LeastSquaresFit fit;
  const std::size_t aliased = qr_fit(x, y, fit);
  if (aliased < x.cols) {
    throw StatsError(
        "least squares: column " + std::to_string(aliased) +
        " of the design matrix is a linear combination of the columns before it (rank-deficient "
        "design; R's lm would report its coefficient as NA)");
  }
  return fit;
}

namespace {

std::size_t qr_fit(const ColumnMajorMatrix& x, const std::vector<double>& y, LeastSquaresFit& fit) {
  const std::size_t n = x.rows;
  const std::size_t p = x.cols;
  if (x.values.size() != n * p)
    throw StatsError("least squares: the matrix holds the wrong number of values");
  if (y.size() != n) {
    throw StatsError("least squares: the response has " + std::to_string(y.size()) +
                     " values for " + std::to_string(n) + " rows of the design matrix");
  }
  if (n < p) {
    throw StatsError("least squares: " + std::to_string(n) + " observations cannot determine " +
                     std::to_string(p) + " coefficients (collect more observations or drop terms)");
  }
  for (double v : x.values) {
    if (!std::isfinite(v))
      throw StatsError("least squares: the design matrix holds a non-finite value");
  }
  for (double v : y) {
    if (!std::isfinite(v))
      throw StatsError("least squares: the response holds a non-finite value (NaN or inf)");
  }

  ColumnMajorMatrix r = x;  // becomes R on and above the diagonal
  fit.effects = y;
  std::vector<std::vector<double>> reflectors(p);
  std::vector<double> vtv(p, 0);
  std::vector<double> column(n);
  for (std::size_t j = 0; j < p; ++j) {
    const auto offset = static_cast<std::ptrdiff_t>(j * n);
    std::copy_n(x.values.begin() + offset, n, column.begin());
    const double original = tail_norm(column, 0);
    std::copy_n(r.values.begin() + offset, n, column.begin());
    const double left = tail_norm(column, j);
    if (original == 0 || left <= kRankTolerance * original) return j;
    // Reflect column j onto alpha e_j, alpha of the opposite sign to its diagonal entry (no
    // cancellation).
    const double alpha = column[j] >= 0 ? -left : left;
    std::vector<double> v(n, 0);
    for (std::size_t i = j; i < n; ++i) v[i] = column[i];
    v[j] -= alpha;
    vtv[j] = 2 * left * (left + std::abs(column[j]));  // v^T v without another pass
    for (std::size_t k = j + 1; k < p; ++k) reflect(v, vtv[j], j, &r.at(0, k));
    reflect(v, vtv[j], j, fit.effects.data());
    r.at(j, j) = alpha;
    for (std::size_t i = j + 1; i < n; ++i) r.at(i, j) = 0;
    reflectors[j] = std::move(v);
  }

  // R beta = effects[0..p) by back substitution.
  fit.coefficients.assign(p, 0);
  for (std::size_t jj = p; jj-- > 0;) {
    double s = fit.effects[jj];
    for (std::size_t k = jj + 1; k < p; ++k) s -= r.at(jj, k) * fit.coefficients[k];
    fit.coefficients[jj] = s / r.at(jj, jj);
  }

  // Residuals = Q (0, ..., 0, effects[p..n)): the reflections applied in reverse order.
  fit.residuals.assign(n, 0);
  for (std::size_t i = p; i < n; ++i) {
    fit.residuals[i] = fit.effects[i];
    fit.rss += fit.effects[i] * fit.effects[i];
  }
  for (std::size_t jj = p; jj-- > 0;) reflect(reflectors[jj], vtv[jj], jj, fit.residuals.data());
  fit.df_residual = static_cast<double>(n - p);
  return p;
}

}  // namespace

SequentialAnova sequential_anova(const std::vector<double>& response,
                                 const std::vector<TermColumns>& blocks) {
  const std::size_t n = response.size();
  if (n == 0) throw StatsError("linear model of an empty response");
  for (double v : response) {
    if (!std::isfinite(v))
      throw StatsError("linear model: the response holds a non-finite value (NaN or inf)");
  }
  std::size_t p = 1;
  for (const auto& b : blocks) {
    for (const auto& c : b.columns) {
      if (c.size() != n) {
        throw StatsError("linear model: a column of term " + b.name + " has " +
                         std::to_string(c.size()) + " values for " + std::to_string(n) +
                         " observations");
      }
    }
    p += b.columns.size();
  }
  ColumnMajorMatrix x{n, p, std::vector<double>(n * p, 1.0)};  // column 0: the intercept
  std::size_t col = 1;
  for (const auto& b : blocks) {
    for (const auto& c : b.columns)
      std::copy(c.begin(), c.end(), x.values.begin() + static_cast<std::ptrdiff_t>(col++ * n));
  }

  // Centre first: data like 1e12 + small effects then reach the QR as small numbers. Each y - m is
  // exact when y and m are within a factor of two (Sterbenz), and a rounding of m is a constant
  // that the intercept takes up, leaving every sum of squares below untouched.
  const double m = mean(response);
  std::vector<double> centred(n);
  for (std::size_t i = 0; i < n; ++i) centred[i] = response[i] - m;
  // Total SS about the mean of the centred values: the (sum c)^2 / n term removes the rounding of
  // m.
  double sum_c = 0;
  double sum_c2 = 0;
  for (double c : centred) {
    sum_c += c;
    sum_c2 += c * c;
  }

  LeastSquaresFit fit;
  const std::size_t aliased = qr_fit(x, centred, fit);
  if (aliased < p) {
    std::string term = "(Intercept)";  // only when n = 0, excluded above; kept for completeness
    std::size_t end = 1;
    for (const auto& b : blocks) {
      end += b.columns.size();
      if (aliased < end) {
        term = b.name;
        break;
      }
    }
    throw StatsError(
        "linear model: term " + term +
        " is (numerically) a linear combination of the terms before it, so its effect cannot be "
        "separated from theirs (rank-deficient design: an empty cell or confounded factors)");
  }

  SequentialAnova out;
  col = 1;
  for (const auto& b : blocks) {
    double ss = 0;
    for (std::size_t k = 0; k < b.columns.size(); ++k, ++col)
      ss += fit.effects[col] * fit.effects[col];
    out.ss.push_back(ss);
    out.df.push_back(static_cast<double>(b.columns.size()));
  }
  out.rss = fit.rss;
  out.ss_total = std::max(0.0, sum_c2 - sum_c * sum_c / static_cast<double>(n));
  out.df_residual = fit.df_residual;
  return out;
}

}  // namespace scalebench::stats
