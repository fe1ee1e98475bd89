#include "stats/letters.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>

namespace scalebench::stats {
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

}  // namespace

std::vector<std::string> compact_letters(const std::vector<double>& means,
                                         const std::vector<std::vector<bool>>& significant) {
  const std::size_t k = means.size();
  if (k < 2) throw StatsError("compact letters need at least two groups");
  if (significant.size() != k)
    throw StatsError("compact letters: the significance matrix does not match the groups");
  for (const auto& row : significant)
    if (row.size() != k)
      throw StatsError("compact letters: the significance matrix does not match the groups");

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

}  // namespace scalebench::stats
