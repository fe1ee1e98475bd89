#include "stats/letters.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
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

// The insert-and-absorb phase keeps each letter column as a bit set over the rows (groups).
using Word = std::uint64_t;
using Bits = std::vector<Word>;

bool test(const Bits& b, std::size_t r) { return ((b[r / 64] >> (r % 64)) & 1U) != 0; }
void clear(Bits& b, std::size_t r) { b[r / 64] &= ~(Word{1} << (r % 64)); }
// Every row of `a` is in `b` (R: all() of none is TRUE).
bool subset(const Bits& a, const Bits& b) {
  for (std::size_t w = 0; w < a.size(); ++w)
    if ((a[w] & ~b[w]) != 0) return false;
  return true;
}

// One step of insert_absorb: groups `first` and `second` differ. R's absorb() then scans the
// column pairs (j < k) from the start, drops k if k is within j, else j if j is within k, and
// starts again until no pair nests. Every drop removes a column that a kept one contains, so the
// columns it keeps are exactly those that no other column strictly contains and that no earlier
// column equals, in their order; that is computed here directly. Before the step the columns are
// such a set (no column within another). The columns W that held both groups lose `first` in
// place (M) and gain copies without `second` at the end (N). The untouched columns U stay
// pairwise unnested and none lies within an M or N (those lie within a W column); M and N never
// nest among themselves (an M holds `second`, an N `first`; two Ms or two Ns would make their
// W columns nest). So only an M or N within a U column can go: an M within a U column holding
// `second` but not `first` (dropped unless it equals a later U column, which then goes instead),
// an N within a U column holding `first` but not `second` (always later, so it goes).
void insert_absorb(std::vector<Bits>& columns, std::size_t first, std::size_t second) {
  std::vector<std::size_t> wrong;  // the columns that wrongly assert first ~ second
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (test(columns[c], first) && test(columns[c], second)) wrong.push_back(c);
  if (wrong.empty()) return;
  const std::size_t old_size = columns.size();
  std::vector<char> in_wrong(old_size, 0);
  for (const std::size_t c : wrong) {
    in_wrong[c] = 1;
    Bits added = columns[c];
    clear(added, second);
    columns.push_back(std::move(added));
    clear(columns[c], first);
  }
  std::vector<std::size_t> with_second,
      with_first;  // U columns: second not first, first not second
  for (std::size_t c = 0; c < old_size; ++c) {
    if (in_wrong[c]) continue;
    const bool f = test(columns[c], first), s = test(columns[c], second);
    if (s && !f) with_second.push_back(c);
    if (f && !s) with_first.push_back(c);
  }
  std::vector<char> dropped(columns.size(), 0);
  for (const std::size_t c : wrong)
    for (const std::size_t u : with_second)
      if (subset(columns[c], columns[u])) {
        if (u > c && columns[c] == columns[u]) {
          dropped[u] = 1;
        } else {
          dropped[c] = 1;
          break;
        }
      }
  for (std::size_t c = old_size; c < columns.size(); ++c)
    for (const std::size_t u : with_first)
      if (subset(columns[c], columns[u])) {
        dropped[c] = 1;
        break;
      }
  std::size_t kept = 0;
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (!dropped[c]) {
      if (kept != c) columns[kept] = std::move(columns[c]);
      ++kept;
    }
  columns.resize(kept);
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
  std::vector<Bits> columns = {Bits((k + 63) / 64, 0)};
  for (std::size_t r = 0; r < k; ++r) columns[0][r / 64] |= Word{1} << (r % 64);
  // Tukey contrasts in multcomp's order (B-A, C-A, ..., C-B, ...): comps = (later, earlier).
  for (std::size_t i = 0; i + 1 < k; ++i)
    for (std::size_t j = i + 1; j < k; ++j) {
      if (!significant[i][j]) continue;
      any = true;
      insert_absorb(columns, row_of[j], row_of[i]);
    }
  if (!any) return std::vector<std::string>(k, "a");

  // Rows back to the input order (cld's levels.x), then order, sweep, order twice, as cld does.
  Matrix lmat(columns.size(), Column(k, 0));
  for (std::size_t c = 0; c < columns.size(); ++c)
    for (std::size_t g = 0; g < k; ++g) lmat[c][g] = test(columns[c], row_of[g]) ? 1 : 0;
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
