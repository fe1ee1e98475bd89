// stats::compact_letters against the first port of multcomp's insert_absorb + sweepLetters (kept
// below, unchanged but for its name, as the reference: its absorb step restarts the pairwise
// column scan after every dropped column, and took minutes for 300 groups with many differing
// pairs). The letters must be identical, letter order included, on random significance matrices:
// independent pairs at several densities, and "means on a line" patterns (groups differ when
// their means are far apart, as with real data), k = 2..40 and a few k > 64 (several words per
// bit set), many seeds, ties in the means included.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "stats/letters.hpp"

using namespace scalebench;

namespace {

using Column = std::vector<char>;  // one letter: TRUE for the rows (groups) that carry it
using Matrix = std::vector<Column>;

// multcomp's get_letters: a..z, A..Z, then ".a" ...
std::string letter_name(std::size_t index) {
  static const std::string kLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  return std::string(index / kLetters.size(), '.') + kLetters[index % kLetters.size()];
}

// A column all of whose TRUE rows are TRUE in `other` is absorbed (R: all() of none is TRUE).
bool within(const Column& column, const Column& other) {
  for (std::size_t r = 0; r < column.size(); ++r)
    if (column[r] && !other[r]) return false;
  return true;
}

void absorb(Matrix& m) {
  for (bool again = true; again;) {
    again = false;
    for (std::size_t j = 0; j + 1 < m.size() && !again; ++j)
      for (std::size_t k = j + 1; k < m.size(); ++k) {
        if (within(m[k], m[j])) {
          m.erase(m.begin() + static_cast<std::ptrdiff_t>(k));
          again = true;
          break;
        }
        if (within(m[j], m[k])) {
          m.erase(m.begin() + static_cast<std::ptrdiff_t>(j));
          again = true;
          break;
        }
      }
  }
}

// multcomp's sweepLetters: drops a letter from a group when every other group that shares the
// letter with it also shares another letter with it, then removes letters left empty.
Matrix sweep(Matrix mat) {
  const std::size_t n = mat.empty() ? 0 : mat[0].size();
  const std::size_t m = mat.size();
  std::vector<std::vector<char>> locked(n, std::vector<char>(m, 0));
  for (std::size_t i = 0; i < m; ++i) {
    // tmp: the rows that carry letter i, as they are when column i is reached.
    std::vector<std::vector<char>> tmp(n, std::vector<char>(m, 0));
    std::vector<std::size_t> one;
    for (std::size_t r = 0; r < n; ++r)
      if (mat[i][r]) {
        for (std::size_t c = 0; c < m; ++c) tmp[r][c] = mat[c][r];
        one.push_back(r);
      }
    bool every_row_elsewhere = true;
    for (std::size_t r = 0; r < n && every_row_elsewhere; ++r) {
      bool any = false;
      for (std::size_t c = 0; c < m; ++c)
        if (c != i && tmp[r][c]) any = true;
      every_row_elsewhere = any;
    }
    if (every_row_elsewhere) continue;
    for (const std::size_t j : one) {
      if (locked[j][i]) continue;
      std::size_t checked = 0;
      std::vector<
          std::pair<std::pair<std::size_t, std::size_t>, std::pair<std::size_t, std::size_t>>>
          locks;
      for (const std::size_t k : one) {
        if (j == k) continue;
        std::size_t last_hit = m;  // the last shared column other than i
        bool shared_elsewhere = false;
        for (std::size_t c = 0; c < m; ++c)
          if (c != i && tmp[j][c] && tmp[k][c]) {
            last_hit = c;
            shared_elsewhere = true;
          }
        if (shared_elsewhere) {
          ++checked;
          locks.push_back({{j, last_hit}, {k, last_hit}});
        }
      }
      if (checked == one.size() - 1 && checked != 0) {
        for (const auto& [a, b] : locks) {
          locked[a.first][a.second] = 1;
          locked[b.first][b.second] = 1;
        }
        mat[i][j] = 0;
      }
    }
    if (std::none_of(mat[i].begin(), mat[i].end(), [](char x) { return x != 0; })) {
      mat.erase(mat.begin() + static_cast<std::ptrdiff_t>(i));
      return sweep(std::move(mat));
    }
  }
  std::erase_if(mat, [](const Column& c) {
    return std::none_of(c.begin(), c.end(), [](char x) { return x != 0; });
  });
  return mat;
}

std::size_t count(const Column& c) {
  return static_cast<std::size_t>(std::count(c.begin(), c.end(), 1));
}
std::size_t first_true(const Column& c) {
  return static_cast<std::size_t>(std::find(c.begin(), c.end(), 1) - c.begin());
}

// R's `m[, order(key)]`: a stable sort of the columns by an integer key.
template <typename Key>
void order_columns(Matrix& m, Key key) {
  std::stable_sort(m.begin(), m.end(),
                   [&](const Column& a, const Column& b) { return key(a) < key(b); });
}

std::vector<std::string> reference_letters(const std::vector<double>& means,
                                           const std::vector<std::vector<bool>>& significant) {
  const std::size_t k = means.size();
  if (k < 2) throw stats::StatsError("compact letters need at least two groups");
  if (significant.size() != k)
    throw stats::StatsError("compact letters: the significance matrix does not match the groups");
  for (const auto& row : significant)
    if (row.size() != k)
      throw stats::StatsError("compact letters: the significance matrix does not match the groups");

  // cld's lvl_order: groups by ascending mean (R's order(): ties keep the input order).
  std::vector<std::size_t> lvl(k);
  std::iota(lvl.begin(), lvl.end(), 0);
  std::stable_sort(lvl.begin(), lvl.end(),
                   [&](std::size_t a, std::size_t b) { return means[a] < means[b]; });
  std::vector<std::size_t> row_of(k);  // group -> row of the letter matrix
  for (std::size_t r = 0; r < k; ++r) row_of[lvl[r]] = r;

  bool any = false;
  Matrix lmat = {Column(k, 1)};
  // Tukey contrasts in multcomp's order (B-A, C-A, ..., C-B, ...): comps = (later, earlier).
  for (std::size_t i = 0; i + 1 < k; ++i)
    for (std::size_t j = i + 1; j < k; ++j) {
      if (!significant[i][j]) continue;
      any = true;
      const std::size_t first = row_of[j], second = row_of[i];
      std::vector<std::size_t> asserting;
      for (std::size_t c = 0; c < lmat.size(); ++c)
        if (lmat[c][first] && lmat[c][second]) asserting.push_back(c);
      if (asserting.empty()) continue;
      Matrix added;
      for (const std::size_t c : asserting) {
        Column column = lmat[c];
        column[second] = 0;
        added.push_back(column);
        lmat[c][first] = 0;
      }
      lmat.insert(lmat.end(), added.begin(), added.end());
      if (lmat.size() > 1) absorb(lmat);
    }
  if (!any) return std::vector<std::string>(k, "a");

  // Rows back to the input order (cld's levels.x), then order, sweep, order twice, as cld does.
  Matrix byinput(lmat.size(), Column(k, 0));
  for (std::size_t c = 0; c < lmat.size(); ++c)
    for (std::size_t g = 0; g < k; ++g) byinput[c][g] = lmat[c][row_of[g]];
  lmat = std::move(byinput);
  for (int pass = 0; pass < 2; ++pass) {
    order_columns(lmat, count);
    lmat = sweep(std::move(lmat));
    order_columns(lmat, first_true);
  }
  std::vector<std::string> out(k);
  for (std::size_t c = 0; c < lmat.size(); ++c)
    for (std::size_t g = 0; g < k; ++g)
      if (lmat[c][g]) out[g] += letter_name(c);
  return out;
}

struct Case {
  std::vector<double> means;
  std::vector<std::vector<bool>> significant;
};

// Independent pairs, each significant with probability `density`; means drawn from a few values
// (ties) or continuous.
Case random_case(std::size_t k, double density, std::mt19937_64& rng) {
  Case c;
  std::uniform_real_distribution<double> unit(0, 1);
  const bool ties = unit(rng) < 0.3;
  for (std::size_t g = 0; g < k; ++g)
    c.means.push_back(ties ? std::floor(unit(rng) * 4) : unit(rng));
  c.significant.assign(k, std::vector<bool>(k, false));
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = i + 1; j < k; ++j)
      c.significant[i][j] = c.significant[j][i] = unit(rng) < density;
  return c;
}

// Groups differ when their means are more than `width` apart (with a few pairs flipped), as
// Tukey's test on data with spread-out means gives.
Case line_case(std::size_t k, double width, double flip, std::mt19937_64& rng) {
  Case c;
  std::uniform_real_distribution<double> unit(0, 1);
  for (std::size_t g = 0; g < k; ++g) c.means.push_back(unit(rng));
  c.significant.assign(k, std::vector<bool>(k, false));
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = i + 1; j < k; ++j) {
      bool s = std::abs(c.means[i] - c.means[j]) > width;
      if (unit(rng) < flip) s = !s;
      c.significant[i][j] = c.significant[j][i] = s;
    }
  return c;
}

}  // namespace

TEST_CASE("compact letters equal the reference insert-absorb on random independent pairs") {
  std::size_t cases = 0;
  // Sparse random significance leaves many overlapping non-differing sets (columns): the
  // reference's restarting absorb is then too slow past k ~ 20 for a unit test.
  for (std::size_t k = 2; k <= 40; ++k)
    for (const double density : {0.05, 0.2, 0.5, 0.8, 0.95, 1.0}) {
      if (density < 0.7 && k > (density < 0.1 ? 24u : 20u)) continue;
      const std::size_t seeds = k <= 16 ? 30 : 6;
      for (std::size_t seed = 0; seed < seeds; ++seed) {
        std::mt19937_64 rng(seed * 1000003 + k * 101 + static_cast<std::size_t>(density * 100));
        const Case c = random_case(k, density, rng);
        INFO("k=" << k << " density=" << density << " seed=" << seed);
        REQUIRE(stats::compact_letters(c.means, c.significant) ==
                reference_letters(c.means, c.significant));
        ++cases;
      }
    }
  CHECK(cases > 2000);
}

TEST_CASE("compact letters equal the reference insert-absorb on means-on-a-line patterns") {
  for (std::size_t k = 2; k <= 40; ++k)
    for (const double width : {0.05, 0.15, 0.3, 0.6})
      for (const double flip : {0.0, 0.05}) {
        if (flip > 0 && k > 20) continue;  // random flips: many columns, a slow reference
        const std::size_t seeds = k <= 20 ? 20 : 5;
        for (std::size_t seed = 0; seed < seeds; ++seed) {
          std::mt19937_64 rng(seed * 7919 + k * 31 + static_cast<std::size_t>(width * 1000) +
                              (flip > 0 ? 17 : 0));
          const Case c = line_case(k, width, flip, rng);
          INFO("k=" << k << " width=" << width << " flip=" << flip << " seed=" << seed);
          REQUIRE(stats::compact_letters(c.means, c.significant) ==
                  reference_letters(c.means, c.significant));
        }
      }
}

TEST_CASE("compact letters equal the reference insert-absorb past one 64-bit word") {
  for (const std::size_t k : {63, 64, 65, 80})
    for (std::size_t seed = 0; seed < 2; ++seed) {
      std::mt19937_64 rng(seed + k);
      const Case a = line_case(k, seed == 0 ? 0.1 : 0.3, 0.0, rng);
      const Case b = random_case(k, 0.995, rng);
      INFO("k=" << k << " seed=" << seed);
      REQUIRE(stats::compact_letters(a.means, a.significant) ==
              reference_letters(a.means, a.significant));
      REQUIRE(stats::compact_letters(b.means, b.significant) ==
              reference_letters(b.means, b.significant));
    }
}
