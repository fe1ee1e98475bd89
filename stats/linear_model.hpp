// Least squares for linear models: Householder QR on a column-major design matrix, and the
// sequential (Type I) sums of squares of blocks of columns that every ANOVA type is built from.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "stats/error.hpp"

namespace scalebench::stats {

// A dense n x p matrix stored column by column: element (i, j) is values[j * rows + i].
struct ColumnMajorMatrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<double> values;

  double& at(std::size_t i, std::size_t j) { return values[j * rows + i]; }
  double at(std::size_t i, std::size_t j) const { return values[j * rows + i]; }
};

struct LeastSquaresFit {
  std::vector<double> coefficients;  // beta minimising ||y - X beta||, one per column of X
  std::vector<double>
      effects;  // Q^T y (R's lm(...)$effects): first p entries per column, rest residual
  std::vector<double> residuals;  // y - X beta, computed as Q (0, effects[p..n)) (no cancellation)
  double rss = 0;                 // sum of effects[p..n)^2 = ||y - X beta||^2
  double df_residual = 0;         // n - p
};

// Least squares by Householder QR without pivoting (Golub & Van Loan 2013, alg. 5.3.2), columns in
// the order given, so effects[j] is the part of y explained by column j after columns 0..j-1 (as in
// R's lm). Throws StatsError when n < p, an input is not finite, or a column is (numerically) a
// combination of the columns before it: what is left of it after the earlier columns' reflections
// has norm <= 1e-7 x its original norm, the test and tolerance of R's lm (LINPACK dqrdc2), which
// would drop ("alias") such a column instead. The message names the column's index.
LeastSquaresFit least_squares(const ColumnMajorMatrix& x, const std::vector<double>& y);

// A named block of columns of a design matrix: one model term (a factor's contrasts, an
// interaction).
struct TermColumns {
  std::string name;
  std::vector<std::vector<double>> columns;  // each as long as the response
};

struct SequentialAnova {
  std::vector<double> ss;  // per block: sum of its squared effects = RSS(before it) - RSS(with it)
  std::vector<double> df;  // per block: its number of columns
  double rss = 0;          // residual sum of squares of the full model
  double df_residual = 0;  // n - (1 + total number of columns)
  double ss_total = 0;     // sum (y - mean y)^2, the corrected total sum of squares of the response
};

// Fits intercept + blocks in order and returns each block's sequential sum of squares from the
// QR effects, as R's anova(lm) does. Sums of squares of effects, not differences of residual sums,
// so a term much smaller than the residual keeps its relative precision. The response is centred
// (corrected two-pass mean) before the fit; the intercept absorbs the rounding of that mean
// exactly.
SequentialAnova sequential_anova(const std::vector<double>& response,
                                 const std::vector<TermColumns>& blocks);

}  // namespace scalebench::stats
