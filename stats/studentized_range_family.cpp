#include "stats/studentized_range_family.hpp"

#include <algorithm>
#include <atomic>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <thread>

#include "stats/error.hpp"
#include "stats/studentized_range_detail.hpp"
#include "stats/tukey.hpp"

namespace scalebench::stats {
namespace detail {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int kMaxDepth = 12;             // panels no narrower than ~100 / 8 / 4096
constexpr int kFirstPanels = 8;           // [0, kRangeFar] starts as 8 panels, bisected as needed
constexpr double kCheckAbsolute = 5e-13;  // allowed |interpolant - reference| in log P(R > x),
constexpr double kCheckRelative = 5e-15;  // plus this times |log P| (the reference's own noise)

// Chebyshev node j of n (first kind) on [-1, 1].
double node(int j, int n) { return std::cos(kPi * (j + 0.5) / n); }

// Clenshaw's recurrence for sum_m c_m T_m(s).
double clenshaw(const std::array<double, RangeSurvivalTable::kNodes>& c, double s) {
  double b1 = 0, b2 = 0;
  for (int m = RangeSurvivalTable::kNodes - 1; m >= 1; --m) {
    const double b0 = 2 * s * b1 - b2 + c[static_cast<std::size_t>(m)];
    b2 = b1;
    b1 = b0;
  }
  return s * b1 - b2 + c[0];
}

}  // namespace

RangeSurvivalTable::RangeSurvivalTable(double k) : k_(k) {
  const double width = kRangeFar / kFirstPanels;
  for (int i = 0; i < kFirstPanels; ++i) fit(i * width, (i + 1) * width, 0);
}

// Interpolates on [lo, hi] at kNodes Chebyshev nodes and keeps the panel when the interpolant
// matches the reference at points between the nodes (where its error peaks); else bisects.
void RangeSurvivalTable::fit(double lo, double hi, int depth) {
  constexpr int n = kNodes;
  const double mid = 0.5 * (lo + hi), half = 0.5 * (hi - lo);
  std::array<double, n> values{};
  for (int j = 0; j < n; ++j)
    values[static_cast<std::size_t>(j)] = range_log_survival_reference(mid + half * node(j, n), k_);
  // Discrete Chebyshev transform at first-kind nodes (Trefethen, ATAP ch. 3 / Numerical Recipes
  // 5.8): c_m = (2/n) sum_j f_j cos(pi m (j + 1/2) / n), c_0 halved.
  std::array<double, n> c{};
  for (int m = 0; m < n; ++m) {
    double sum = 0;
    for (int j = 0; j < n; ++j)
      sum += values[static_cast<std::size_t>(j)] * std::cos(kPi * m * (j + 0.5) / n);
    c[static_cast<std::size_t>(m)] = (m == 0 ? 1.0 : 2.0) * sum / n;
  }
  // Check points: halfway (in angle) between every two nodes, where the interpolation error peaks.
  double worst = 0;
  for (int j = 0; j + 1 < n; ++j) {
    const double s = std::cos(kPi * (j + 1.0) / n);
    const double want = range_log_survival_reference(mid + half * s, k_);
    const double got = clenshaw(c, s);
    worst =
        std::max(worst, std::abs(got - want) / (kCheckAbsolute + kCheckRelative * std::abs(want)));
  }
  if (worst > 1 && depth < kMaxDepth) {
    fit(lo, mid, depth + 1);
    fit(mid, hi, depth + 1);
    return;
  }
  worst_check_ = std::max(worst_check_, worst);
  lower_.push_back(lo);
  upper_.push_back(hi);
  coefficients_.push_back(c);
}

double RangeSurvivalTable::log_survival(double x) const {
  if (std::isnan(x)) return x;
  if (x <= 0) return 0;
  if (x >= kRangeFar) return range_log_survival_far(x, k_);
  // Panels are stored left to right and tile [0, kRangeFar].
  const auto it = std::upper_bound(lower_.begin(), lower_.end(), x);
  const std::size_t i = static_cast<std::size_t>(it - lower_.begin()) - 1;
  const double s = (2 * x - lower_[i] - upper_[i]) / (upper_[i] - lower_[i]);
  return std::min(clenshaw(coefficients_[i], s), 0.0);
}

void parallel_for(std::size_t n, std::size_t serial_below,
                  const std::function<void(std::size_t)>& body) {
  const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = n < serial_below ? 1 : std::min<std::size_t>(hardware, 16);
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  // Chunks handed out by a counter: costs per item vary (tails, small df), so no fixed split.
  constexpr std::size_t kChunk = 32;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto work = [&] {
    try {
      for (std::size_t begin = next.fetch_add(kChunk); begin < n && !failed;
           begin = next.fetch_add(kChunk)) {
        for (std::size_t i = begin; i < std::min(n, begin + kChunk); ++i) body(i);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace detail

StudentizedRangeFamily::StudentizedRangeFamily(double k) : k_(k) {
  if (!(k >= 2) || !std::isfinite(k))
    throw StatsError("studentized range needs k >= 2 groups (finite), got " + std::to_string(k));
}

StudentizedRangeFamily::~StudentizedRangeFamily() = default;

bool StudentizedRangeFamily::tabulated(double df) const {
  return !detail::studentized_range_has_fast_path(k_, df);
}

const detail::RangeSurvivalTable& StudentizedRangeFamily::table() const {
  std::call_once(built_, [this] { table_ = std::make_unique<detail::RangeSurvivalTable>(k_); });
  return *table_;
}

double StudentizedRangeFamily::log_survival_tabulated(double q, double df) const {
  const detail::RangeSurvivalTable& t = table();
  return detail::studentized_range_log_survival_with(q, k_, df,
                                                     [&t](double x) { return t.log_survival(x); });
}

double StudentizedRangeFamily::survival(double q, double df) const {
  if (!tabulated(df) || !(q > 0) || !std::isfinite(q)) return studentized_range_survival(q, k_, df);
  return std::exp(log_survival_tabulated(q, df));
}

// The root of log P(Q > q) = log(1 - probability) in log q, as studentized_range_upper_quantile
// solves it (TOMS 748 to 48 bits), bracketed outward from the guess in steps that double.
double StudentizedRangeFamily::quantile(double probability, double df, double guess) const {
  // Below 0.5 the public function works on the lower tail; the families only ask for confidences.
  if (!tabulated(df) || !(probability >= 0.5 && probability < 1))
    return studentized_range_quantile(probability, k_, df);
  const double target = std::log1p(-probability);
  const auto f = [&](double log_q) { return log_survival_tabulated(std::exp(log_q), df) - target; };
  // A close guess: a narrow bracket.
  return detail::solve_for_q(f, guess > 0 && std::isfinite(guess) ? guess : 3.0,
                             guess > 0 ? 1e-3 : 1);
}

}  // namespace scalebench::stats
