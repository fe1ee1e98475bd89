#include "stats/factorial_anova.hpp"

#include <algorithm>
#include <boost/math/distributions/fisher_f.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <unordered_map>

#include "stats/effect_size.hpp"
#include "stats/linear_model.hpp"

namespace scalebench::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A factor as level indices 0..levels-1, in order of first appearance.
struct CodedFactor {
  std::string name;
  std::vector<std::string> levels;
  std::vector<std::size_t> index;  // per observation
};

CodedFactor code_factor(const std::string& name, const std::vector<std::string>& labels) {
  CodedFactor f{name, {}, {}};
  std::unordered_map<std::string, std::size_t> seen;
  f.index.reserve(labels.size());
  for (const auto& label : labels) {
    const auto [it, inserted] = seen.try_emplace(label, f.levels.size());
    if (inserted) f.levels.push_back(label);
    f.index.push_back(it->second);
  }
  if (f.levels.size() < 2) {
    throw StatsError(
        "factor " + name + " has " + std::to_string(f.levels.size()) +
        " level(s); a factor needs at least two levels to be compared (drop it from the model)");
  }
  return f;
}

// Contrast columns of a factor: treatment coding (R's contr.treatment: indicators of levels 2..L)
// or sum-to-zero coding (R's contr.sum: level l < L-1 -> e_l, the last level -> -1 in every
// column).
std::vector<std::vector<double>> contrast_columns(const CodedFactor& f, bool sum_to_zero) {
  const std::size_t n = f.index.size();
  const std::size_t last = f.levels.size() - 1;
  std::vector<std::vector<double>> cols(last, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t l = f.index[i];
    if (sum_to_zero) {
      if (l == last) {
        for (auto& c : cols) c[i] = -1;
      } else {
        cols[l][i] = 1;
      }
    } else if (l > 0) {
      cols[l - 1][i] = 1;
    }
  }
  return cols;
}

// Interaction columns: every product of an A column with a B column (A's index running fastest, as
// in R's model.matrix).
std::vector<std::vector<double>> product_columns(const std::vector<std::vector<double>>& a,
                                                 const std::vector<std::vector<double>>& b) {
  std::vector<std::vector<double>> out;
  for (const auto& cb : b) {
    for (const auto& ca : a) {
      std::vector<double> c(ca.size());
      for (std::size_t i = 0; i < c.size(); ++i) c[i] = ca[i] * cb[i];
      out.push_back(std::move(c));
    }
  }
  return out;
}

void check_cells(const CodedFactor& a, const CodedFactor& b) {
  std::vector<std::size_t> count(a.levels.size() * b.levels.size(), 0);
  for (std::size_t i = 0; i < a.index.size(); ++i)
    ++count[a.index[i] * b.levels.size() + b.index[i]];
  for (std::size_t la = 0; la < a.levels.size(); ++la) {
    for (std::size_t lb = 0; lb < b.levels.size(); ++lb) {
      if (count[la * b.levels.size() + lb] == 0) {
        throw EmptyCellError(
            "cell " + a.name + "=" + a.levels[la] + ", " + b.name + "=" + b.levels[lb] +
            " has no observation, so the " + a.name + ":" + b.name +
            " interaction cannot be estimated (observe that combination, or fit without the "
            "interaction)");
      }
    }
  }
}

void fill_test(AnovaTerm& t, double ms_residual, double df_residual) {
  check_sums_of_squares(t.ms, ms_residual);
  if (ms_residual > 0) {
    t.f = t.ms / ms_residual;
    const boost::math::fisher_f_distribution<double> dist(t.df, df_residual);
    t.p =
        boost::math::cdf(boost::math::complement(dist, t.f));  // upper tail directly: no underflow
  } else if (t.ms > 0) {
    t.f = std::numeric_limits<double>::infinity();  // no noise, a real effect: certain
    t.p = 0;
  } else {
    t.f = kNaN;  // 0/0 carries no evidence either way (as in R)
    t.p = kNaN;
  }
}

}  // namespace

FactorialAnova factorial_anova(const std::vector<double>& response,
                               const std::vector<std::vector<std::string>>& factors,
                               const std::vector<std::string>& factor_names, SsType type,
                               bool interaction) {
  if (factors.empty() || factors.size() > 2) {
    throw StatsError("factorial ANOVA takes 1 or 2 factors, got " + std::to_string(factors.size()));
  }
  if (factor_names.size() != factors.size()) {
    throw StatsError("factorial ANOVA: " + std::to_string(factors.size()) + " factors but " +
                     std::to_string(factor_names.size()) + " factor names");
  }
  if (type != SsType::I && type != SsType::II && type != SsType::III) {
    throw StatsError("factorial ANOVA: unknown sum-of-squares type " +
                     std::to_string(static_cast<int>(type)));
  }
  for (std::size_t f = 0; f < factors.size(); ++f) {
    if (factor_names[f].empty())
      throw StatsError("factorial ANOVA: factor " + std::to_string(f) + " has no name");
    if (factors[f].size() != response.size()) {
      throw StatsError("factor " + factor_names[f] + " has " + std::to_string(factors[f].size()) +
                       " labels for " + std::to_string(response.size()) + " observations");
    }
  }
  if (factors.size() == 2 && factor_names[0] == factor_names[1]) {
    throw StatsError("factorial ANOVA: both factors are named " + factor_names[0] +
                     " (give them distinct names)");
  }
  for (double y : response) {
    if (!std::isfinite(y))
      throw StatsError("factorial ANOVA: the response holds a non-finite value (NaN or inf)");
  }

  std::vector<CodedFactor> coded;
  for (std::size_t f = 0; f < factors.size(); ++f)
    coded.push_back(code_factor(factor_names[f], factors[f]));
  const bool two = coded.size() == 2;
  const bool with_ab = two && interaction;
  if (with_ab) check_cells(coded[0], coded[1]);

  // Type III needs sum-to-zero coding: with treatment coding its "main effect" would be the effect
  // at the other factor's first level. Types I and II do not depend on the coding.
  const bool sum_to_zero = type == SsType::III;
  std::vector<TermColumns> terms;
  for (const auto& f : coded) terms.push_back({f.name, contrast_columns(f, sum_to_zero)});
  if (with_ab) {
    terms.push_back(
        {coded[0].name + ":" + coded[1].name, product_columns(terms[0].columns, terms[1].columns)});
  }

  // The full model in R's order gives the residual line and the Type I (sequential) sums of
  // squares.
  const SequentialAnova full = sequential_anova(response, terms);
  if (full.df_residual < 1) {
    throw StatsError("factorial ANOVA: no residual degrees of freedom (" +
                     std::to_string(response.size()) +
                     " observations for as many parameters); replicate each cell or fit without "
                     "the interaction");
  }
  std::vector<double> ss = full.ss;
  if (type != SsType::I && two) {
    // Each term's SS is the sequential SS of its block when fitted last among the terms it is
    // adjusted for: Type II leaves out terms containing it (A:B for A and B), Type III none.
    const auto last_block_ss = [&](std::vector<std::size_t> order) {
      std::vector<TermColumns> blocks;
      for (std::size_t k : order) blocks.push_back(terms[k]);
      return sequential_anova(response, blocks).ss.back();
    };
    const bool adjust_for_ab = with_ab && type == SsType::III;
    ss[0] = adjust_for_ab ? last_block_ss({1, 2, 0}) : last_block_ss({1, 0});
    ss[1] = adjust_for_ab ? last_block_ss({0, 2, 1}) : last_block_ss({0, 1});
    // A:B is already last in the full model: its sequential SS is its Type II and III SS.
  }

  // A fit's rounding leaves ~eps ||y|| in every projection, so an SS below (n eps)^2 SS_total is
  // noise, not signal: reported as exactly 0, so exact data give F = inf (real effect, no noise) or
  // NaN (nothing at all) rather than a ratio of rounding errors. R's aov prints those ratios
  // instead.
  const double n = static_cast<double>(response.size());
  const double noise = n * std::numeric_limits<double>::epsilon() * n *
                       std::numeric_limits<double>::epsilon() * full.ss_total;
  const auto denoise = [noise](double v) { return v <= noise ? 0.0 : v; };
  for (double& v : ss) v = denoise(v);
  const double rss = denoise(full.rss);

  FactorialAnova out;
  out.type = type;
  out.ss_total = full.ss_total;
  const double ms_residual = rss / full.df_residual;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    AnovaTerm t;
    t.term = terms[k].name;
    t.df = full.df[k];
    t.ss = ss[k];
    t.ms = t.ss / t.df;
    fill_test(t, ms_residual, full.df_residual);
    t.eta_sq = eta_squared(t.ss, full.ss_total);
    t.partial_eta_sq = partial_eta_squared(t.ss, rss);
    t.omega_sq = omega_squared(t.ss, t.df, ms_residual, full.ss_total);
    out.terms.push_back(std::move(t));
  }
  AnovaTerm residual;
  residual.term = "Residuals";
  residual.df = full.df_residual;
  residual.ss = rss;
  residual.ms = ms_residual;
  residual.f = residual.p = kNaN;
  residual.eta_sq = residual.partial_eta_sq = residual.omega_sq = kNaN;
  out.terms.push_back(std::move(residual));
  return out;
}

}  // namespace scalebench::stats
