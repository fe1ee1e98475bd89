#include "trainer/cpu/layers.hpp"

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

namespace scalebench::trainer::cpu {

void sgemm(char transa, char transb, std::size_t m, std::size_t n, std::size_t k, float alpha,
           const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
           std::size_t ldc) {
  const dnnl_status_t status =
      dnnl_sgemm(transa, transb, static_cast<dnnl_dim_t>(m), static_cast<dnnl_dim_t>(n),
                 static_cast<dnnl_dim_t>(k), alpha, a, static_cast<dnnl_dim_t>(lda), b,
                 static_cast<dnnl_dim_t>(ldb), beta, c, static_cast<dnnl_dim_t>(ldc));
  if (status != dnnl_success) {
    throw std::runtime_error(
        fmt::format("dnnl_sgemm({}, {}, M={}, N={}, K={}) failed with status {}", transa, transb, m,
                    n, k, static_cast<int>(status)));
  }
}

// ---- Dense ----

void Dense::bind(std::span<float> parameters, std::span<float> gradients) {
  assert(parameters.size() == parameter_count() && gradients.size() == parameter_count());
  weights_ = parameters.first(in_ * out_);
  bias_ = parameters.subspan(in_ * out_, out_);
  weight_grad_ = gradients.first(in_ * out_);
  bias_grad_ = gradients.subspan(in_ * out_, out_);
}

void Dense::init(std::mt19937& rng) {
  if (init_ == Init::he) {
    std::normal_distribution<float> normal(0.0f, std::sqrt(2.0f / static_cast<float>(in_)));
    for (float& w : weights_) w = normal(rng);
  } else {
    const float limit = std::sqrt(6.0f / static_cast<float>(in_ + out_));
    std::uniform_real_distribution<float> uniform(-limit, limit);
    for (float& w : weights_) w = uniform(rng);
  }
  std::fill(bias_.begin(), bias_.end(), 0.0f);
}

void Dense::forward(std::span<const float> x, std::span<float> y, std::size_t batch) {
  assert(x.size() >= batch * in_ && y.size() >= batch * out_);
  // Start every row of y at the bias, then y += x·W.
  for (std::size_t r = 0; r < batch; ++r)
    std::copy(bias_.begin(), bias_.end(), y.data() + r * out_);
  sgemm('N', 'N', batch, out_, in_, 1.0f, x.data(), in_, weights_.data(), out_, 1.0f, y.data(),
        out_);
}

void Dense::backward(std::span<const float> x, std::span<const float> y, std::span<const float> dy,
                     std::span<float> dx, std::size_t batch) {
  (void)y;
  // dW = xᵀ·dy (in × out), db = column sums of dy, dx = dy·Wᵀ.
  sgemm('T', 'N', in_, out_, batch, 1.0f, x.data(), in_, dy.data(), out_, 0.0f, weight_grad_.data(),
        out_);
  std::fill(bias_grad_.begin(), bias_grad_.end(), 0.0f);
  for (std::size_t r = 0; r < batch; ++r) {
    const float* row = dy.data() + r * out_;
    for (std::size_t j = 0; j < out_; ++j) bias_grad_[j] += row[j];
  }
  if (!dx.empty()) {
    sgemm('N', 'T', batch, in_, out_, 1.0f, dy.data(), out_, weights_.data(), out_, 0.0f, dx.data(),
          in_);
  }
}

// ---- ReLU ----

void Relu::forward(std::span<const float> x, std::span<float> y, std::size_t batch) {
  const std::size_t n = batch * features_;
  for (std::size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void Relu::backward(std::span<const float> x, std::span<const float> y, std::span<const float> dy,
                    std::span<float> dx, std::size_t batch) {
  (void)y;
  if (dx.empty()) return;
  const std::size_t n = batch * features_;
  for (std::size_t i = 0; i < n; ++i) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}

// ---- softmax cross-entropy ----

LossResult softmax_cross_entropy_forward(std::span<const float> logits,
                                         std::span<const std::int32_t> labels, std::size_t batch,
                                         std::size_t classes, std::span<float> probabilities) {
  LossResult result;
  for (std::size_t r = 0; r < batch; ++r) {
    const float* z = logits.data() + r * classes;
    float* p = probabilities.data() + r * classes;
    // Subtract the row maximum so exp() cannot overflow.
    const std::size_t arg_max = static_cast<std::size_t>(std::max_element(z, z + classes) - z);
    const float z_max = z[arg_max];
    double sum = 0.0;
    for (std::size_t j = 0; j < classes; ++j) {
      p[j] = std::exp(z[j] - z_max);
      sum += p[j];
    }
    const auto inv = static_cast<float>(1.0 / sum);
    for (std::size_t j = 0; j < classes; ++j) p[j] *= inv;
    const auto label = static_cast<std::size_t>(labels[r]);
    // log p(label) = z_label − z_max − log Σ exp(z − z_max): exact even when p underflows.
    result.loss_sum += std::log(sum) - static_cast<double>(z[label] - z_max);
    if (arg_max == label) ++result.correct;
  }
  return result;
}

void softmax_cross_entropy_backward(std::span<const float> probabilities,
                                    std::span<const std::int32_t> labels, std::size_t batch,
                                    std::size_t classes, std::span<float> dlogits) {
  const float scale = 1.0f / static_cast<float>(batch);
  for (std::size_t r = 0; r < batch; ++r) {
    const float* p = probabilities.data() + r * classes;
    float* d = dlogits.data() + r * classes;
    for (std::size_t j = 0; j < classes; ++j) d[j] = p[j] * scale;
    d[static_cast<std::size_t>(labels[r])] -= scale;
  }
}

}  // namespace scalebench::trainer::cpu
