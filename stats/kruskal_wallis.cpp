#include "stats/kruskal_wallis.hpp"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>

#include "stats/groups.hpp"

namespace scalebench::stats {
namespace {}  // namespace

// Kruskal & Wallis (1952, JASA 47:583), tie correction as R's kruskal.test (Hollander & Wolfe
// 1973, 6.1).
KruskalWallis kruskal_wallis(const std::vector<std::vector<double>>& groups) {
  detail::check_groups(groups, "Kruskal-Wallis");
  std::vector<std::pair<double, std::size_t>> all;  // (value, group)
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (double x : groups[i]) all.emplace_back(x, i);
  }
  std::sort(all.begin(), all.end());
  std::vector<double> rank_sums(groups.size(), 0);
  double ties = 0;  // sum over tie runs of t^3 - t
  for (std::size_t lo = 0; lo < all.size();) {
    std::size_t hi = lo;
    while (hi < all.size() && all[hi].first == all[lo].first) ++hi;
    const double mid_rank =
        (static_cast<double>(lo + 1) + static_cast<double>(hi)) / 2;  // ranks lo+1 .. hi
    for (std::size_t j = lo; j < hi; ++j) rank_sums[all[j].second] += mid_rank;
    const double t = static_cast<double>(hi - lo);
    ties += t * t * t - t;
    lo = hi;
  }
  const double n = static_cast<double>(all.size());
  const double correction = 1 - ties / (n * n * n - n);
  if (!(correction > 0)) {
    throw StatsError(
        "Kruskal-Wallis: every observation is tied, so no ranking separates the groups (H = 0/0)");
  }
  // 12 / (N (N+1)) sum n_i (Rbar_i - (N+1)/2)^2: the same H as R's 12/(N(N+1)) sum R_i^2/n_i -
  // 3(N+1), without the subtraction of two large numbers.
  double h = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const double ni = static_cast<double>(groups[i].size());
    const double d = rank_sums[i] / ni - (n + 1) / 2;
    h += ni * d * d;
  }
  KruskalWallis r;
  r.h = 12 * h / (n * (n + 1)) / correction;
  r.df = static_cast<double>(groups.size()) - 1;
  r.p = boost::math::cdf(
      boost::math::complement(boost::math::chi_squared_distribution<double>(r.df), r.h));
  return r;
}

}  // namespace scalebench::stats
