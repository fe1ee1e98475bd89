#include "stats/games_howell.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "stats/descriptive.hpp"
#include "stats/studentized_range_family.hpp"
#include "stats/tukey.hpp"

namespace scalebench::stats {
namespace {

std::string pair_label(const std::vector<GroupSummary>& groups, std::size_t a, std::size_t b) {
  return "groups " + std::to_string(a) + " (" + groups[a].name + ") and " + std::to_string(b) +
         " (" + groups[b].name + ")";
}

// Every field but p_adjusted, lower and upper, which need the distribution (fill_distribution).
GamesHowellPair compare(const std::vector<GroupSummary>& groups, std::size_t a, std::size_t b) {
  const double u_a = groups[a].sd * groups[a].sd / groups[a].n;  // squared standard error of mean a
  const double u_b = groups[b].sd * groups[b].sd / groups[b].n;
  if (!(u_a + u_b > 0)) {
    throw StatsError("Games-Howell: " + pair_label(groups, a, b) +
                     " both have zero variance, so their difference has no standard error");
  }
  GamesHowellPair pair;
  pair.a = a;
  pair.b = b;
  pair.diff = groups[b].mean - groups[a].mean;
  pair.se = std::sqrt((u_a + u_b) / 2);
  pair.df =
      (u_a + u_b) * (u_a + u_b) / (u_a * u_a / (groups[a].n - 1) + u_b * u_b / (groups[b].n - 1));
  pair.q = std::abs(pair.diff) / pair.se;
  return pair;
}

// p-values and critical values of all pairs at one k, each at its own d.f.: in order of d.f., so a
// repeated d.f. reuses its critical value and a close one starts the search from its neighbour's,
// in chunks over threads for many pairs (the table of studentized_range_family.hpp is shared).
void fill_distribution(std::vector<GamesHowellPair>& pairs, double k, double confidence) {
  const StudentizedRangeFamily family(k);
  std::vector<std::size_t> order(pairs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return pairs[x].df < pairs[y].df; });
  constexpr std::size_t kBlock = 64;  // pairs solved in sequence, each from the last one's value
  const std::size_t blocks = (order.size() + kBlock - 1) / kBlock;
  detail::parallel_for(blocks, 4, [&](std::size_t block) {
    double last_df = std::numeric_limits<double>::quiet_NaN();
    double critical = 0;
    for (std::size_t i = block * kBlock; i < std::min(order.size(), (block + 1) * kBlock); ++i) {
      GamesHowellPair& pair = pairs[order[i]];
      pair.p_adjusted = family.survival(pair.q, pair.df);
      if (pair.df != last_df) critical = family.quantile(confidence, pair.df, critical);
      last_df = pair.df;
      pair.lower = pair.diff - critical * pair.se;
      pair.upper = pair.diff + critical * pair.se;
    }
  });
}

}  // namespace

// Games & Howell (1976, J. Educ. Stat. 1:113), Welch-Satterthwaite df per pair (Welch 1947).
std::vector<GamesHowellPair> games_howell_from_summary(const std::vector<GroupSummary>& groups,
                                                       double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    throw StatsError("Games-Howell confidence must lie in (0, 1), e.g. 0.95; got " +
                     std::to_string(confidence));
  }
  check_summaries(groups);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].n < 2) {
      throw StatsError("Games-Howell: group " + std::to_string(i) + " (" + groups[i].name +
                       ") has one observation; every group needs two or more for its variance");
    }
  }
  std::vector<GamesHowellPair> pairs;
  pairs.reserve(groups.size() * (groups.size() - 1) / 2);
  for (std::size_t a = 0; a < groups.size(); ++a) {
    for (std::size_t b = a + 1; b < groups.size(); ++b) pairs.push_back(compare(groups, a, b));
  }
  fill_distribution(pairs, static_cast<double>(groups.size()), confidence);
  return pairs;
}

// Games & Howell (1976) on raw groups: two-pass group means and variances, then the summary form.
std::vector<GamesHowellPair> games_howell(const std::vector<std::vector<double>>& groups,
                                          double confidence,
                                          const std::vector<std::string>& names) {
  if (groups.size() < 2)
    throw StatsError("Games-Howell needs at least two groups, got " +
                     std::to_string(groups.size()));
  return games_howell_from_summary(summarize(shifted_by_first(groups), names), confidence);
}

}  // namespace scalebench::stats
