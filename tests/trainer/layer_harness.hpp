// Helpers for the layer tests: run one layer's plan on plain (row-major) test tensors, whatever
// formats its primitives chose, and read the PyTorch reference file.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "trainer/cpu/layers.hpp"

namespace scalebench::trainer::cpu::test {

inline std::vector<float> random_vector(std::size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

inline std::size_t element_count(const Dims& dims) {
  std::size_t n = 1;
  for (auto d : dims) n *= static_cast<std::size_t>(d);
  return n;
}

inline std::vector<float> to_plain(const memory& m) {
  const memory::desc plain = plain_desc(m.get_desc().dims());
  std::vector<float> out(element_count(plain.dims()));
  reorder(m, wrap(plain, out.data()));
  stream().wait();
  return out;
}

inline void from_plain(const std::vector<float>& values, const memory& m) {
  reorder(wrap(plain_desc(m.get_desc().dims()), values.data()), m);
  stream().wait();
}

// One layer planned for a plain input that the caller owns (so perturbing it is seen).
class Harness {
 public:
  Harness(Layer& layer, const Dims& x_dims, std::vector<float>& x)
      : src_(wrap(plain_desc(x_dims), x.data())), plan_(layer.plan(plain_desc(x_dims))) {
    dst_ = make_memory(plan_->dst_desc());
    diff_dst_ = make_memory(plan_->dst_desc());
    diff_src_ = make_memory(plain_desc(x_dims));
  }
  Dims y_dims() const { return plan_->dst_desc().dims(); }
  std::vector<float> forward(bool training = true) {
    plan_->forward(src_, dst_, training);
    stream().wait();
    return to_plain(dst_);
  }
  // L = Σ r·y, accumulated in double.
  double loss(const std::vector<float>& r, bool training = true) {
    const std::vector<float> y = forward(training);
    double sum = 0;
    for (std::size_t i = 0; i < y.size(); ++i) sum += static_cast<double>(y[i]) * r[i];
    return sum;
  }
  // Backward of the last forward with dL/dy = r; returns dL/dx (plain).
  std::vector<float> backward(const std::vector<float>& r, bool want_dx = true) {
    from_plain(r, diff_dst_);
    plan_->backward(src_, dst_, diff_dst_, want_dx ? diff_src_ : memory());
    stream().wait();
    return want_dx ? to_plain(diff_src_) : std::vector<float>();
  }

 private:
  memory src_;
  std::unique_ptr<LayerPlan> plan_;
  memory dst_, diff_dst_, diff_src_;
};

// Checks analytic[i] against the central difference of loss() when values[i] moves by ±h:
// |analytic − numeric| ≤ tolerance·max(1, |numeric|).
inline void check_gradient(const std::string& what, std::span<float> values,
                           std::span<const float> analytic, const std::function<double()>& loss,
                           float h, double tolerance) {
  REQUIRE(values.size() == analytic.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float saved = values[i];
    values[i] = saved + h;
    const double plus = loss();
    values[i] = saved - h;
    const double minus = loss();
    values[i] = saved;
    const double numeric = (plus - minus) / (2.0 * static_cast<double>(h));
    const double error = std::abs(numeric - analytic[i]) / std::max(1.0, std::abs(numeric));
    worst = std::max(worst, error);
    INFO(what << "[" << i << "]: analytic " << analytic[i] << ", numeric " << numeric);
    CHECK(error <= tolerance);
  }
  MESSAGE(what << ": worst scaled error " << worst);
}

// tests/data/trainer/torch_layers.txt (scripts/reference/torch_layers.py): case → name → tensor.
struct RefTensor {
  Dims dims;
  std::vector<float> values;
};
using RefCase = std::map<std::string, RefTensor>;

inline const std::map<std::string, RefCase>& torch_reference() {
  static const std::map<std::string, RefCase> cases = [] {
    std::map<std::string, RefCase> all;
    std::ifstream in(scalebench::test::data_dir() / "trainer" / "torch_layers.txt");
    REQUIRE_MESSAGE(in, "missing tests/data/trainer/torch_layers.txt");
    std::string line, current;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string word;
      words >> word;
      if (word == "case") {
        words >> current;
      } else if (word == "tensor") {
        std::string name;
        words >> name;
        RefTensor t;
        for (memory::dim d; words >> d;) t.dims.push_back(d);
        std::getline(in, line);
        std::istringstream values(line);
        for (double v; values >> v;) t.values.push_back(static_cast<float>(v));
        REQUIRE(t.values.size() == element_count(t.dims));
        all[current][name] = std::move(t);
      }
    }
    return all;
  }();
  return cases;
}

inline const RefCase& reference_case(const std::string& name) {
  const auto& all = torch_reference();
  const auto it = all.find(name);
  REQUIRE_MESSAGE(it != all.end(), "no case " << name << " in torch_layers.txt");
  return it->second;
}

// |actual − expected| ≤ tolerance·(1 + |expected|) elementwise.
inline void check_close(const std::string& what, std::span<const float> actual,
                        std::span<const float> expected, double tolerance) {
  REQUIRE_MESSAGE(actual.size() == expected.size(), what);
  double worst = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double error = std::abs(static_cast<double>(actual[i]) - expected[i]) /
                         (1.0 + std::abs(static_cast<double>(expected[i])));
    worst = std::max(worst, error);
    INFO(what << "[" << i << "]: got " << actual[i] << ", PyTorch " << expected[i]);
    CHECK(error <= tolerance);
  }
  MESSAGE(what << ": worst error " << worst);
}

}  // namespace scalebench::trainer::cpu::test
