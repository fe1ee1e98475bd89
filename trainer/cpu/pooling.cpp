// Pool2d and GlobalAvgPool on oneDNN's pooling primitives, with a loop of our own for 2×2/2 max
// pooling of nChw8c (trainer/cpu/layers.hpp).
#include <cstdint>

#include "trainer/cpu/layers.hpp"

namespace scalebench::trainer::cpu {
namespace {

using tag = memory::format_tag;
using dt = memory::data_type;
using dnnl::algorithm;
using dnnl::prop_kind;

// ---- pooling ----

class PoolPlan final : public LayerPlan {
 public:
  PoolPlan(const Pool2dOptions& o, const memory::desc& src) {
    require_4d(src, "pooling");
    const Dims s = src.dims();
    const Dims dst_dims{
        s[0], s[1],
        output_extent(s[2], o.kernel[0], o.stride[0], o.padding[0], o.padding_end[0], "pooling"),
        output_extent(s[3], o.kernel[1], o.stride[1], o.padding[1], o.padding_end[1], "pooling")};
    const algorithm alg = o.kind == PoolKind::max       ? algorithm::pooling_max
                          : o.kind == PoolKind::average ? algorithm::pooling_avg_include_padding
                                                        : algorithm::pooling_avg_exclude_padding;
    const Dims strides = to_dims(o.stride), kernel = to_dims(o.kernel), pad_l = to_dims(o.padding),
               pad_r = to_dims(o.padding_end);
    // 2×2/2 max pooling of nChw8c (the convolutions' format on AVX2) runs in a loop of our own:
    // oneDNN 2.6's jit pooling takes ~4× the memory-bound time, and its backward zero-fills
    // diff_src before scattering. The backward finds the window's first maximum again from src
    // and dst (the order oneDNN and PyTorch pick it in) instead of keeping a workspace.
    fast_ = o.kind == PoolKind::max && o.kernel == Pair{2, 2} && o.stride == Pair{2, 2} &&
            o.padding == Pair{0, 0} && o.padding_end == Pair{0, 0} && s[2] % 2 == 0 &&
            s[3] % 2 == 0 && src == memory::desc(s, dt::f32, tag::aBcd8b);
    if (fast_) {
      dst_desc_ = memory::desc(dst_dims, dt::f32, tag::aBcd8b);
      blocks_ = static_cast<std::int64_t>(s[0] * ((s[1] + 7) / 8));
      oh_ = static_cast<std::int64_t>(dst_dims[2]);
      ow_ = static_cast<std::int64_t>(dst_dims[3]);
      return;
    }
    const dnnl::pooling_forward::primitive_desc fwd_pd(
        {prop_kind::forward_training, alg, src, any_desc(dst_dims), strides, kernel, pad_l, pad_r},
        engine());
    dst_desc_ = fwd_pd.dst_desc();
    fwd_ = dnnl::pooling_forward(fwd_pd);
    if (o.kind == PoolKind::max) workspace_ = make_memory(fwd_pd.workspace_desc());
    bwd_ = dnnl::pooling_backward(dnnl::pooling_backward::primitive_desc(
        {alg, src, dst_desc_, strides, kernel, pad_l, pad_r}, engine(), fwd_pd));
  }

  void forward(const memory& src, const memory& dst, bool) override {
    if (fast_) {
      fast_forward(data_of(src), data_of(dst));
      return;
    }
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    if (workspace_) args[DNNL_ARG_WORKSPACE] = workspace_;
    execute(fwd_, args);
  }

  void backward(const memory& src, const memory& dst, const memory& diff_dst,
                const memory& diff_src) override {
    if (!diff_src) return;
    if (fast_) {
      fast_backward(data_of(src), data_of(dst), data_of(diff_dst), data_of(diff_src));
      return;
    }
    std::unordered_map<int, memory> args{{DNNL_ARG_DIFF_DST, diff_dst},
                                         {DNNL_ARG_DIFF_SRC, diff_src}};
    if (workspace_) args[DNNL_ARG_WORKSPACE] = workspace_;
    execute(bwd_, args);
  }

 private:
  // nChw8c: the 8 channels of a block are contiguous, then width, then height.
  void fast_forward(const float* x, float* y) const {
    const std::int64_t ow = ow_, iw8 = 2 * ow_ * 8, rows = blocks_ * oh_;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* r0 = x + 2 * r * iw8;
      const float* r1 = r0 + iw8;
      float* out = y + r * ow * 8;
      for (std::int64_t j = 0; j < ow; ++j) {
        const float* a = r0 + 16 * j;
        const float* b = r1 + 16 * j;
        float* o = out + 8 * j;
#pragma omp simd
        for (int c = 0; c < 8; ++c) {
          const float m0 = a[c + 8] > a[c] ? a[c + 8] : a[c];
          const float m1 = b[c + 8] > b[c] ? b[c + 8] : b[c];
          o[c] = m1 > m0 ? m1 : m0;
        }
      }
    }
  }

  void fast_backward(const float* x, const float* y, const float* dy, float* dx) const {
    const std::int64_t ow = ow_, iw8 = 2 * ow_ * 8, rows = blocks_ * oh_;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* x0 = x + 2 * r * iw8;
      const float* x1 = x0 + iw8;
      float* d0 = dx + 2 * r * iw8;
      float* d1 = d0 + iw8;
      const float* yr = y + r * ow * 8;
      const float* dyr = dy + r * ow * 8;
      for (std::int64_t j = 0; j < ow; ++j) {
#pragma omp simd
        for (int c = 0; c < 8; ++c) {
          const std::int64_t k = 8 * j + c, i = 16 * j + c;
          const float m = yr[k], g0 = dyr[k];
          // The first of (0,0), (0,1), (1,0), (1,1) equal to the maximum takes the gradient.
          const bool e00 = x0[i] == m, e01 = x0[i + 8] == m, e10 = x1[i] == m;
          d0[i] = e00 ? g0 : 0.0f;
          const float g1 = e00 ? 0.0f : g0;
          d0[i + 8] = e01 ? g1 : 0.0f;
          const float g2 = e01 ? 0.0f : g1;
          d1[i] = e10 ? g2 : 0.0f;
          d1[i + 8] = e10 ? 0.0f : g2;
        }
      }
    }
  }

  bool fast_ = false;
  std::int64_t blocks_ = 0, oh_ = 0, ow_ = 0;
  dnnl::pooling_forward fwd_;
  dnnl::pooling_backward bwd_;
  memory workspace_;
};

}  // namespace

std::unique_ptr<LayerPlan> Pool2d::plan(const memory::desc& src) {
  return std::make_unique<PoolPlan>(o_, src);
}

std::unique_ptr<LayerPlan> GlobalAvgPool::plan(const memory::desc& src) {
  require_4d(src, "global_avg_pool");
  Pool2dOptions o;
  o.kind = PoolKind::average;
  o.kernel = {static_cast<int>(src.dims()[2]), static_cast<int>(src.dims()[3])};
  o.stride = {1, 1};
  return std::make_unique<PoolPlan>(o, src);
}

}  // namespace scalebench::trainer::cpu
