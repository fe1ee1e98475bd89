// The layers without a file of their own (eltwise, flatten, dropout, dense), the lowering of a
// model operation to its layer, the loss and sgemm. Conv2d, pooling and batch norm are in
// conv2d.cpp, pooling.cpp and batch_norm.cpp; add and concat in graph_nodes.cpp.
#include "trainer/cpu/layers.hpp"

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "trainer/model/dropout_mask.hpp"
#include "trainer/model/parameters.hpp"

namespace scalebench::trainer::cpu {
namespace {

using tag = memory::format_tag;
using dt = memory::data_type;
using dnnl::algorithm;
using dnnl::prop_kind;

// ---- eltwise ----

class EltwisePlan final : public LayerPlan {
 public:
  EltwisePlan(Activation activation, const memory::desc& src) {
    const algorithm alg = activation == Activation::relu    ? algorithm::eltwise_relu
                          : activation == Activation::relu6 ? algorithm::eltwise_clip_v2
                                                            : algorithm::eltwise_tanh;
    const float alpha = 0.0f, beta = activation == Activation::relu6 ? 6.0f : 0.0f;
    const dnnl::eltwise_forward::primitive_desc fwd_pd(
        {prop_kind::forward_training, alg, src, alpha, beta}, engine());
    dst_desc_ = fwd_pd.dst_desc();
    fwd_ = dnnl::eltwise_forward(fwd_pd);
    bwd_ = dnnl::eltwise_backward(
        dnnl::eltwise_backward::primitive_desc({alg, src, src, alpha, beta}, engine(), fwd_pd));
  }
  void forward(const memory& src, const memory& dst, bool) override {
    execute(fwd_, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  }
  void backward(const memory& src, const memory&, const memory& diff_dst,
                const memory& diff_src) override {
    if (!diff_src) return;
    execute(bwd_,
            {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_SRC, diff_src}});
  }

 private:
  dnnl::eltwise_forward fwd_;
  dnnl::eltwise_backward bwd_;
};

// ---- flatten ----

class FlattenPlan final : public LayerPlan {
 public:
  explicit FlattenPlan(const memory::desc& src) : plain_(plain_desc(src.dims())) {
    const Dims& d = src.dims();
    memory::dim features = 1;
    for (std::size_t i = 1; i < d.size(); ++i) features *= d[i];
    dst_desc_ = plain_desc({d[0], features});
    to_plain_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), src, engine(), plain_));
    from_plain_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), plain_, engine(), src));
  }
  void forward(const memory& src, const memory& dst, bool) override {
    to_plain_.execute(stream(), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, wrap(plain_, data_of(dst))}});
  }
  void backward(const memory&, const memory&, const memory& diff_dst,
                const memory& diff_src) override {
    if (!diff_src) return;
    from_plain_.execute(
        stream(), {{DNNL_ARG_FROM, wrap(plain_, data_of(diff_dst))}, {DNNL_ARG_TO, diff_src}});
  }

 private:
  memory::desc plain_;
  dnnl::reorder to_plain_, from_plain_;
};

}  // namespace

// ---- dropout ----

class DropoutPlan final : public LayerPlan {
 public:
  // Works on the plain (NCHW) layout so that element i of the mask is logical element i,
  // whatever blocked format the producer chose: the mask then depends on neither the CPU's ISA
  // (nChw8c on AVX2, nChw16c on AVX-512) nor the backend (the cuda backend's tensors are NCHW
  // and it hashes the same indices). A blocked input is reordered to plain on the way in, and
  // its gradient back on the way out.
  DropoutPlan(Dropout& layer, const memory::desc& src)
      : layer_(layer),
        plain_(plain_desc(src.dims())),
        count_(float_count(plain_)),
        mask_(count_),
        src_is_plain_(src == plain_) {
    dst_desc_ = plain_;
    if (!src_is_plain_) {
      to_plain_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), src, engine(), plain_));
      from_plain_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), plain_, engine(), src));
      diff_plain_ = make_memory(plain_);
    }
  }
  void forward(const memory& src, const memory& dst, bool training) override {
    float* y = data_of(dst);
    const float* x = data_of(src);
    if (!src_is_plain_) {
      to_plain_.execute(stream(), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
      stream().wait();
      x = y;  // masked in place below
    }
    if (!training || layer_.rate_ <= 0.0f) {
      if (x != y) std::memcpy(y, x, count_ * sizeof(float));
      return;
    }
    const std::uint64_t key = layer_.mask_key(layer_.calls_++);
    const std::uint32_t threshold = model::dropout_threshold(layer_.rate_);
    const float scale = 1.0f / (1.0f - layer_.rate_);
    float* mask = mask_.data();
    const auto n = static_cast<std::int64_t>(count_);
#pragma omp parallel for simd schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const bool keep = model::dropout_keeps(key, static_cast<std::uint64_t>(i), threshold);
      mask[i] = keep ? scale : 0.0f;
      y[i] = keep ? x[i] * scale : 0.0f;
    }
  }
  void backward(const memory&, const memory&, const memory& diff_dst,
                const memory& diff_src) override {
    if (!diff_src) return;
    const float* dy = data_of(diff_dst);
    float* dx = src_is_plain_ ? data_of(diff_src) : data_of(diff_plain_);
    if (layer_.rate_ <= 0.0f) {
      if (dx != dy) std::memcpy(dx, dy, count_ * sizeof(float));
    } else {
      // The mask holds 0 or the scale: one multiply (dy·0 is ±0, as good as the 0 it was).
      const float* mask = mask_.data();
      const auto n = static_cast<std::int64_t>(count_);
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i) dx[i] = dy[i] * mask[i];
    }
    if (!src_is_plain_) {
      from_plain_.execute(stream(), {{DNNL_ARG_FROM, diff_plain_}, {DNNL_ARG_TO, diff_src}});
      stream().wait();
    }
  }

 private:
  Dropout& layer_;
  memory::desc plain_;
  std::size_t count_;        // logical elements
  std::vector<float> mask_;  // 0 (dropped) or 1/(1 − rate) (kept), in logical order
  bool src_is_plain_;
  dnnl::reorder to_plain_, from_plain_;
  memory diff_plain_;  // the gradient in plain layout before its reorder to src's
};

// ---- dense ----

class DensePlan final : public LayerPlan {
 public:
  DensePlan(Dense& layer, const memory::desc& src) : layer_(layer) {
    const Dims& d = src.dims();
    memory::dim features = 1;
    for (std::size_t i = 1; i < d.size(); ++i) features *= d[i];
    if (!is_plain(src) || static_cast<std::size_t>(features) != layer.in_) {
      throw std::invalid_argument(fmt::format(
          "dense expects a plain input of {} features per image (put a flatten before it)",
          layer.in_));
    }
    batch_ = static_cast<std::size_t>(d[0]);
    dst_desc_ = plain_desc({d[0], static_cast<memory::dim>(layer.out_)});
  }
  void forward(const memory& src, const memory& dst, bool) override {
    const std::size_t in = layer_.in_, out = layer_.out_;
    float* y = data_of(dst);
    // Start every row of y at the bias, then y += x·W.
    for (std::size_t r = 0; r < batch_; ++r)
      std::copy(layer_.bias_.begin(), layer_.bias_.end(), y + r * out);
    sgemm('N', 'N', batch_, out, in, 1.0f, data_of(src), in, layer_.weights_.data(), out, 1.0f, y,
          out);
  }
  void backward(const memory& src, const memory&, const memory& diff_dst,
                const memory& diff_src) override {
    const std::size_t in = layer_.in_, out = layer_.out_;
    const float* dy = data_of(diff_dst);
    // dW = xᵀ·dy (in × out), db = column sums of dy, dx = dy·Wᵀ.
    sgemm('T', 'N', in, out, batch_, 1.0f, data_of(src), in, dy, out, 0.0f,
          layer_.weight_grad_.data(), out);
    std::fill(layer_.bias_grad_.begin(), layer_.bias_grad_.end(), 0.0f);
    for (std::size_t r = 0; r < batch_; ++r) {
      const float* row = dy + r * out;
      for (std::size_t j = 0; j < out; ++j) layer_.bias_grad_[j] += row[j];
    }
    if (diff_src) {
      sgemm('N', 'T', batch_, in, out, 1.0f, dy, out, layer_.weights_.data(), out, 0.0f,
            data_of(diff_src), in);
    }
  }

 private:
  Dense& layer_;
  std::size_t batch_ = 0;
};

// ---- the layers ----

std::unique_ptr<LayerPlan> Eltwise::plan(const memory::desc& src) {
  return std::make_unique<EltwisePlan>(activation_, src);
}

std::uint64_t Dropout::mask_key(std::uint64_t call) const {
  return model::dropout_mask_key(seed_, call);
}

std::unique_ptr<LayerPlan> Dropout::plan(const memory::desc& src) {
  return std::make_unique<DropoutPlan>(*this, src);
}

std::unique_ptr<LayerPlan> Flatten::plan(const memory::desc& src) {
  return std::make_unique<FlattenPlan>(src);
}

void Dense::bind(std::span<float> parameters, std::span<float> gradients) {
  assert(parameters.size() == parameter_count() && gradients.size() == parameter_count());
  weights_ = parameters.first(in_ * out_);
  bias_ = parameters.subspan(in_ * out_, out_);
  weight_grad_ = gradients.first(in_ * out_);
  bias_grad_ = gradients.subspan(in_ * out_, out_);
}

void Dense::init(std::mt19937& rng) {
  model::initialize(model::Dense{in_, out_, init_},
                    std::span<float>(weights_.data(), parameter_count()), rng);
}

std::unique_ptr<LayerPlan> Dense::plan(const memory::desc& src) {
  return std::make_unique<DensePlan>(*this, src);
}

std::unique_ptr<Layer> make_layer(const model::Op& op) {
  return std::visit(
      [](const auto& o) -> std::unique_ptr<Layer> {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, model::Conv2d>) {
          return std::make_unique<Conv2d>(o.options);
        } else if constexpr (std::is_same_v<T, model::Pool2d>) {
          return std::make_unique<Pool2d>(o.options);
        } else if constexpr (std::is_same_v<T, model::GlobalAvgPool>) {
          return std::make_unique<GlobalAvgPool>();
        } else if constexpr (std::is_same_v<T, model::BatchNorm>) {
          return std::make_unique<BatchNorm>(o.channels, o.epsilon, o.momentum, o.relu);
        } else if constexpr (std::is_same_v<T, model::Eltwise>) {
          return std::make_unique<Eltwise>(o.activation);
        } else if constexpr (std::is_same_v<T, model::Dropout>) {
          return std::make_unique<Dropout>(o.rate, o.seed);
        } else if constexpr (std::is_same_v<T, model::Flatten>) {
          return std::make_unique<Flatten>();
        } else {
          static_assert(std::is_same_v<T, model::Dense>, "an operation the CPU cannot lower");
          return std::make_unique<Dense>(o.in, o.out, o.init);
        }
      },
      op);
}

// ---- softmax cross-entropy and sgemm ----

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
