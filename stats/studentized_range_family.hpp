// The studentized range distribution at one k for many (q, df): what all-pairs comparisons need.
//
// Tukey HSD asks P(Q > q) at one (k, df) for k(k-1)/2 values of q, Games-Howell at one k for as
// many (q, df) pairs, each with its own critical value. Where the public functions take
// milliseconds a call (k > 200 or df < 5: the log-space reference), this family tabulates the inner
// integral log P(R > x) once per k and keeps the reference's outer integral, so each call costs
// tens of microseconds and differs from the reference only by the table's error (checked to ~1e-13
// when built). Elsewhere it calls the public functions, so those results are bit-identical.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace scalebench::stats {

namespace detail {

// log P(R > x) for the range R of k standard normals, as piecewise Chebyshev interpolants on
// [0, kRangeFar] fitted to the reference's inner quadrature, each panel checked off its nodes.
class RangeSurvivalTable {
 public:
  static constexpr int kNodes = 24;  // Chebyshev nodes per panel
  explicit RangeSurvivalTable(double k);
  double log_survival(double x) const;
  std::size_t panels() const { return lower_.size(); }
  // Largest difference from the reference seen at the check points while building, relative to
  // the tolerance allowed there (<= 1 unless a panel hit the minimum width).
  double worst_check() const { return worst_check_; }

 private:
  void fit(double lo, double hi, int depth);
  double k_;
  std::vector<double> lower_;  // panel i covers [lower_[i], upper_[i]]
  std::vector<double> upper_;
  std::vector<std::array<double, kNodes>> coefficients_;
  double worst_check_ = 0;
};

// Runs body(i) for i in [0, n), in chunks over up to hardware_concurrency() threads (one thread
// below `serial_below` items). body must be safe to call concurrently; the first exception thrown
// is rethrown here after all threads stop.
void parallel_for(std::size_t n, std::size_t serial_below,
                  const std::function<void(std::size_t)>& body);

}  // namespace detail

class StudentizedRangeFamily {
 public:
  explicit StudentizedRangeFamily(double k);  // k >= 2; throws StatsError otherwise
  ~StudentizedRangeFamily();
  StudentizedRangeFamily(const StudentizedRangeFamily&) = delete;
  StudentizedRangeFamily& operator=(const StudentizedRangeFamily&) = delete;

  double k() const { return k_; }
  // studentized_range_survival(q, k, df). Thread-safe.
  double survival(double q, double df) const;
  // studentized_range_quantile(probability, k, df); `guess` (> 0, optional) is a nearby critical
  // value (e.g. of a close df) that shortens the search. Thread-safe.
  double quantile(double probability, double df, double guess = 0) const;
  // True where this family evaluates through its table (false: the public functions directly).
  bool tabulated(double df) const;

 private:
  const detail::RangeSurvivalTable& table() const;
  double log_survival_tabulated(double q, double df) const;
  double k_;
  mutable std::once_flag built_;
  mutable std::unique_ptr<detail::RangeSurvivalTable> table_;
};

}  // namespace scalebench::stats
