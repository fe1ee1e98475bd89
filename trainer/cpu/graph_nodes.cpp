// The graph's nodes that are not layers: the residual add and the channel concat
// (trainer/cpu/layers.hpp).
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "trainer/cpu/layers.hpp"

namespace scalebench::trainer::cpu {

AddPlan::AddPlan(const memory::desc& a, const memory::desc& b) : dst_desc_(a) {
  if (a.dims() != b.dims()) throw std::invalid_argument("add: the inputs' shapes differ");
  add_ =
      dnnl::binary(dnnl::binary::primitive_desc({dnnl::algorithm::binary_add, a, b, a}, engine()));
}

void AddPlan::forward(const memory& a, const memory& b, const memory& dst) {
  execute(add_, {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, dst}});
}

void AddPlan::backward(const memory& diff_dst, const memory& diff_a, const memory& diff_b) {
  if (diff_a) reorder(diff_dst, diff_a);
  if (diff_b) reorder(diff_dst, diff_b);
}

ConcatPlan::ConcatPlan(const std::vector<memory::desc>& srcs) : srcs_(srcs) {
  if (srcs.empty()) throw std::invalid_argument("concat needs at least one input");
  const dnnl::concat::primitive_desc pd(1, srcs, engine());
  dst_desc_ = pd.dst_desc();
  concat_ = dnnl::concat(pd);
  memory::dim offset = 0;
  for (const memory::desc& s : srcs) {
    Dims offsets(s.dims().size(), 0);
    offsets[1] = offset;
    slices_.push_back(dst_desc_.submemory_desc(s.dims(), offsets));
    offset += s.dims()[1];
  }
}

void ConcatPlan::forward(const std::vector<memory>& srcs, const memory& dst) {
  std::unordered_map<int, memory> args{{DNNL_ARG_DST, dst}};
  for (std::size_t i = 0; i < srcs.size(); ++i)
    args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = srcs[i];
  execute(concat_, args);
}

void ConcatPlan::backward(const memory& diff_dst, const std::vector<memory>& diff_srcs) {
  for (std::size_t i = 0; i < diff_srcs.size(); ++i) {
    if (diff_srcs[i])
      reorder(memory(slices_[i], engine(), diff_dst.get_data_handle()), diff_srcs[i]);
  }
}

}  // namespace scalebench::trainer::cpu
