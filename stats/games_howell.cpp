#include "stats/games_howell.hpp"

#include <cmath>
#include <string>

#include "stats/descriptive.hpp"
#include "stats/tukey.hpp"

namespace scalebench::stats {
namespace {

std::string pair_label(const std::vector<GroupSummary>& groups, std::size_t a, std::size_t b) {
  return "groups " + std::to_string(a) + " (" + groups[a].name + ") and " + std::to_string(b) +
         " (" + groups[b].name + ")";
}

GamesHowellPair compare(const std::vector<GroupSummary>& groups, std::size_t a, std::size_t b,
                        double k, double confidence) {
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
  pair.p_adjusted = studentized_range_survival(pair.q, k, pair.df);
  const double critical = studentized_range_quantile(confidence, k, pair.df);
  pair.lower = pair.diff - critical * pair.se;
  pair.upper = pair.diff + critical * pair.se;
  return pair;
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
  const double k = static_cast<double>(groups.size());
  std::vector<GamesHowellPair> pairs;
  pairs.reserve(groups.size() * (groups.size() - 1) / 2);
  for (std::size_t a = 0; a < groups.size(); ++a) {
    for (std::size_t b = a + 1; b < groups.size(); ++b)
      pairs.push_back(compare(groups, a, b, k, confidence));
  }
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
