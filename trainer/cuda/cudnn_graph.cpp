// cuDNN's graph API for convolutions: descriptors, problems, operation graphs and executing a
// plan (trainer/cuda/cudnn_graph.hpp says what and why; cudnn_autotune.cpp picks the plan).
#include "trainer/cuda/cudnn_graph.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

#include "trainer/cuda/check.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer::cuda {
namespace {

[[noreturn]] void graph_fail(std::string_view call, cudnnStatus_t status,
                             const std::source_location& where) {
  fail(call, where.file_name(), static_cast<int>(where.line()), graph_status_text(status));
}

// The handle attribute is deprecated in cuDNN 9 (9.8 and later no longer need it); the graph
// still takes one, as cudnn-frontend sets it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
constexpr cudnnBackendAttributeName_t kGraphHandle = CUDNN_ATTR_OPERATIONGRAPH_HANDLE;
#pragma GCC diagnostic pop

// Unique ids of the tensors in every graph: the slots of ConvBuffers, then the virtual ones.
enum TensorUid : std::int64_t { kX = 1, kW = 2, kY = 3, kBias = 4, kConvOut = 5, kBiasOut = 6 };

std::vector<std::int64_t> strides_of(TensorLayout layout, std::int64_t n, std::int64_t c,
                                     std::int64_t h, std::int64_t w) {
  (void)n;
  if (layout == TensorLayout::nchw) return {c * h * w, h * w, w, 1};
  return {h * w * c, 1, w * c, c};
}

BackendDescriptor make_tensor(std::int64_t uid, cudnnDataType_t type,
                              const std::vector<std::int64_t>& dims, TensorLayout layout,
                              bool is_virtual = false) {
  BackendDescriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t.set_data_type(CUDNN_ATTR_TENSOR_DATA_TYPE, type);
  t.set_int64s(CUDNN_ATTR_TENSOR_DIMENSIONS, dims);
  t.set_int64s(CUDNN_ATTR_TENSOR_STRIDES, strides_of(layout, dims[0], dims[1], dims[2], dims[3]));
  t.set_int64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
  t.set_int64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16);
  if (is_virtual) {
    const bool yes = true;
    t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &yes);
  }
  t.finalize();
  return t;
}

BackendDescriptor make_convolution(const ConvShape& s) {
  BackendDescriptor conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  conv.set_int64(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 2);
  conv.set_data_type(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_DATA_FLOAT);
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  conv.set_int64s(CUDNN_ATTR_CONVOLUTION_DILATIONS, {s.dilation_h, s.dilation_w});
  conv.set_int64s(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, {s.stride_h, s.stride_w});
  conv.set_int64s(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, {s.pad_h, s.pad_w});
  conv.set_int64s(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, {s.pad_h, s.pad_w});
  conv.finalize();
  return conv;
}

// The convolution of `direction` between the tensors x, w and y (dx, dw or dy by direction).
BackendDescriptor make_conv_operation(ConvDirection direction, const BackendDescriptor& conv,
                                      const BackendDescriptor& x, const BackendDescriptor& w,
                                      const BackendDescriptor& y) {
  const float alpha = 1.0f, beta = 0.0f;
  auto op = [&](cudnnBackendDescriptorType_t type, cudnnBackendAttributeName_t a_alpha,
                cudnnBackendAttributeName_t a_beta, cudnnBackendAttributeName_t a_conv,
                cudnnBackendAttributeName_t a_x, cudnnBackendAttributeName_t a_w,
                cudnnBackendAttributeName_t a_y) {
    BackendDescriptor d(type);
    d.set(a_alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
    d.set(a_beta, CUDNN_TYPE_FLOAT, 1, &beta);
    d.set_descriptor(a_conv, conv);
    d.set_descriptor(a_x, x);
    d.set_descriptor(a_w, w);
    d.set_descriptor(a_y, y);
    d.finalize();
    return d;
  };
  switch (direction) {
    case ConvDirection::forward:
      return op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y);
    case ConvDirection::backward_data:
      return op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY);
    case ConvDirection::backward_filter:
      return op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY);
  }
  throw std::logic_error("make_conv_operation: unknown direction");
}

// y = x + b (ADD) or y = max(x, 0) (RELU_FWD, b null), in fp32.
BackendDescriptor make_pointwise(cudnnPointwiseMode_t mode, const BackendDescriptor& x,
                                 const BackendDescriptor* b, const BackendDescriptor& y,
                                 GraphParts& parts) {
  BackendDescriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  pw.set_data_type(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_DATA_FLOAT);
  if (mode == CUDNN_POINTWISE_RELU_FWD) {
    const double lower = 0.0, upper = std::numeric_limits<float>::max();
    pw.set(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_DOUBLE, 1, &lower);
    pw.set(CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_DOUBLE, 1, &upper);
  }
  pw.finalize();
  const float one = 1.0f;
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  if (b != nullptr) op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one);
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one);
  op.finalize();
  parts.push_back(std::move(pw));
  return op;
}

const char* data_type_name(cudnnDataType_t type) {
  switch (type) {
    case CUDNN_DATA_FLOAT:
      return "fp32";
    case CUDNN_DATA_BFLOAT16:
      return "bf16";
    default:
      return nullptr;
  }
}

const char* direction_name(ConvDirection d) {
  switch (d) {
    case ConvDirection::forward:
      return "fwd";
    case ConvDirection::backward_data:
      return "dgrad";
    case ConvDirection::backward_filter:
      return "wgrad";
  }
  return "?";
}

}  // namespace

// ---- descriptors ----

BackendDescriptor::BackendDescriptor(cudnnBackendDescriptorType_t type, std::source_location where)
    : type_(type) {
  const cudnnStatus_t status = cudnnBackendCreateDescriptor(type, &handle_);
  if (status != CUDNN_STATUS_SUCCESS) {
    handle_ = nullptr;
    graph_fail(fmt::format("cudnnBackendCreateDescriptor({})", descriptor_type_name(type)), status,
               where);
  }
}

BackendDescriptor::~BackendDescriptor() {
  if (handle_ != nullptr) (void)cudnnBackendDestroyDescriptor(handle_);
}

BackendDescriptor::BackendDescriptor(BackendDescriptor&& o) noexcept
    : handle_(std::exchange(o.handle_, nullptr)), type_(o.type_) {}

BackendDescriptor& BackendDescriptor::operator=(BackendDescriptor&& o) noexcept {
  if (this != &o) {
    if (handle_ != nullptr) (void)cudnnBackendDestroyDescriptor(handle_);
    handle_ = std::exchange(o.handle_, nullptr);
    type_ = o.type_;
  }
  return *this;
}

void BackendDescriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                            std::int64_t count, const void* values, std::source_location where) {
  // cuDNN's prototype takes the values as void* although it only reads them.
  const cudnnStatus_t status =
      cudnnBackendSetAttribute(handle_, name, type, count, const_cast<void*>(values));
  if (status != CUDNN_STATUS_SUCCESS) {
    graph_fail(fmt::format("cudnnBackendSetAttribute({}, attribute {})",
                           descriptor_type_name(type_), static_cast<int>(name)),
               status, where);
  }
}

void BackendDescriptor::set_int64(cudnnBackendAttributeName_t name, std::int64_t value,
                                  std::source_location where) {
  set(name, CUDNN_TYPE_INT64, 1, &value, where);
}

void BackendDescriptor::set_int64s(cudnnBackendAttributeName_t name,
                                   const std::vector<std::int64_t>& values,
                                   std::source_location where) {
  set(name, CUDNN_TYPE_INT64, static_cast<std::int64_t>(values.size()), values.data(), where);
}

void BackendDescriptor::set_data_type(cudnnBackendAttributeName_t name, cudnnDataType_t value,
                                      std::source_location where) {
  set(name, CUDNN_TYPE_DATA_TYPE, 1, &value, where);
}

void BackendDescriptor::set_descriptor(cudnnBackendAttributeName_t name,
                                       const BackendDescriptor& value, std::source_location where) {
  cudnnBackendDescriptor_t raw = value.get();
  set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, where);
}

void BackendDescriptor::finalize(std::source_location where) {
  const cudnnStatus_t status = try_finalize();
  if (status != CUDNN_STATUS_SUCCESS) {
    graph_fail(fmt::format("cudnnBackendFinalize({})", descriptor_type_name(type_)), status, where);
  }
}

cudnnStatus_t BackendDescriptor::try_finalize() noexcept { return cudnnBackendFinalize(handle_); }

std::string descriptor_type_name(cudnnBackendDescriptorType_t type) {
  switch (type) {
    case CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
      return "CUDNN_BACKEND_POINTWISE_DESCRIPTOR";
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
      return "CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR";
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR:
      return "CUDNN_BACKEND_ENGINE_DESCRIPTOR";
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR:
      return "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR";
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
      return "CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR";
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR:
      return "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR";
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
      return "CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR";
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
      return "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR";
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
      return "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR";
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
      return "CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR";
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR:
      return "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR";
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
      return "CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR";
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
      return "CUDNN_BACKEND_TENSOR_DESCRIPTOR";
    default:
      return fmt::format("backend descriptor type {}", static_cast<int>(type));
  }
}

std::string graph_status_text(cudnnStatus_t status) {
  std::string text = cudnnGetErrorString(status);
  std::array<char, 512> last{};
  cudnnGetLastErrorString(last.data(), last.size() - 1);
  if (last[0] != '\0') text += fmt::format(" ({})", last.data());
  return text;
}

// ---- problems ----

std::int64_t ConvShape::out_h() const {
  return (h + 2 * pad_h - dilation_h * (r - 1) - 1) / stride_h + 1;
}
std::int64_t ConvShape::out_w() const {
  return (w + 2 * pad_w - dilation_w * (s - 1) - 1) / stride_w + 1;
}
std::size_t ConvShape::x_count() const { return static_cast<std::size_t>(n * c * h * w); }
std::size_t ConvShape::w_count() const {
  return static_cast<std::size_t>(k * (c / groups) * r * s);
}
std::size_t ConvShape::y_count() const {
  return static_cast<std::size_t>(n * k * out_h() * out_w());
}
double ConvShape::flops() const {
  return 2.0 * static_cast<double>(n) * static_cast<double>(k) *
         static_cast<double>(out_h() * out_w()) * static_cast<double>(c / groups) *
         static_cast<double>(r * s);
}

std::string ConvProblem::key() const {
  const ConvShape& s = shape;
  const char* type = data_type_name(data_type);
  if (type == nullptr) {
    throw std::invalid_argument(fmt::format("conv graph: data type {} is neither fp32 nor bf16",
                                            static_cast<int>(data_type)));
  }
  if (s.n < 1 || s.c < 1 || s.h < 1 || s.w < 1 || s.k < 1 || s.r < 1 || s.s < 1 || s.stride_h < 1 ||
      s.stride_w < 1 || s.dilation_h < 1 || s.dilation_w < 1 || s.pad_h < 0 || s.pad_w < 0 ||
      s.groups < 1 || s.c % s.groups != 0 || s.k % s.groups != 0) {
    throw std::invalid_argument("conv graph: a size is not positive, or groups divide not c and k");
  }
  if (s.out_h() < 1 || s.out_w() < 1) {
    throw std::invalid_argument("conv graph: the window is larger than the padded input");
  }
  if ((bias || relu) && direction != ConvDirection::forward) {
    throw std::invalid_argument("conv graph: bias and ReLU fuse into the forward pass only");
  }
  return fmt::format("{} {} {} x{}x{}x{}x{} k{}x{}x{} s{}x{} p{}x{} d{}x{} g{}{}{}",
                     direction_name(direction), layout == TensorLayout::nhwc ? "nhwc" : "nchw",
                     type, s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride_h, s.stride_w, s.pad_h,
                     s.pad_w, s.dilation_h, s.dilation_w, s.groups, bias ? " +bias" : "",
                     relu ? " +relu" : "");
}

// ---- operation graphs ----

std::shared_ptr<const GraphParts> build_conv_graph(const ConvProblem& p, cudnnHandle_t handle) {
  (void)p.key();  // validates
  const ConvShape& s = p.shape;
  auto parts = std::make_shared<GraphParts>();
  const bool fused = p.bias || p.relu;
  const std::vector<std::int64_t> y_dims{s.n, s.k, s.out_h(), s.out_w()};
  parts->push_back(make_tensor(kX, p.data_type, {s.n, s.c, s.h, s.w}, p.layout));
  parts->push_back(make_tensor(kW, p.data_type, {s.k, s.c / s.groups, s.r, s.s}, p.layout));
  parts->push_back(make_tensor(kY, p.data_type, y_dims, p.layout));
  const std::size_t x = 0, w = 1, y = 2;
  parts->push_back(make_convolution(s));
  const std::size_t conv = 3;
  std::vector<std::size_t> ops;
  if (!fused) {
    parts->push_back(
        make_conv_operation(p.direction, (*parts)[conv], (*parts)[x], (*parts)[w], (*parts)[y]));
    ops.push_back(parts->size() - 1);
  } else {
    parts->push_back(make_tensor(kConvOut, CUDNN_DATA_FLOAT, y_dims, p.layout, true));
    std::size_t last = parts->size() - 1;
    parts->push_back(
        make_conv_operation(p.direction, (*parts)[conv], (*parts)[x], (*parts)[w], (*parts)[last]));
    ops.push_back(parts->size() - 1);
    if (p.bias) {
      parts->push_back(make_tensor(kBias, p.data_type, {1, s.k, 1, 1}, p.layout));
      const std::size_t bias = parts->size() - 1;
      std::size_t out = y;
      if (p.relu) {
        parts->push_back(make_tensor(kBiasOut, CUDNN_DATA_FLOAT, y_dims, p.layout, true));
        out = parts->size() - 1;
      }
      BackendDescriptor add = make_pointwise(CUDNN_POINTWISE_ADD, (*parts)[last], &(*parts)[bias],
                                             (*parts)[out], *parts);
      parts->push_back(std::move(add));
      ops.push_back(parts->size() - 1);
      last = out;
    }
    if (p.relu) {
      BackendDescriptor relu =
          make_pointwise(CUDNN_POINTWISE_RELU_FWD, (*parts)[last], nullptr, (*parts)[y], *parts);
      parts->push_back(std::move(relu));
      ops.push_back(parts->size() - 1);
    }
  }
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::size_t i : ops) raw.push_back((*parts)[i].get());
  BackendDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
            static_cast<std::int64_t>(raw.size()), raw.data());
  if (handle != nullptr) graph.set(kGraphHandle, CUDNN_TYPE_HANDLE, 1, &handle);
  graph.finalize();
  parts->push_back(std::move(graph));
  return parts;
}

// ---- plans ----

ConvPlan::ConvPlan(ConvProblem problem, std::shared_ptr<const GraphParts> graph,
                   BackendDescriptor config, BackendDescriptor plan, std::int64_t workspace_bytes,
                   std::string engine)
    : problem_(std::move(problem)),
      graph_(std::move(graph)),
      config_(std::move(config)),
      plan_(std::move(plan)),
      workspace_bytes_(workspace_bytes),
      engine_(std::move(engine)) {}

void ConvPlan::execute(cudnnHandle_t handle, const ConvBuffers& buffers, void* workspace,
                       std::size_t workspace_bytes) const {
  std::vector<std::int64_t> uids{kX, kW, kY};
  std::vector<void*> pointers{buffers.x, buffers.w, buffers.y};
  if (problem_.bias) {
    uids.push_back(kBias);
    pointers.push_back(buffers.bias);
  }
  for (void* p : pointers) {
    if (p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 16 != 0) {
      throw BackendError(
          fmt::format("conv graph {}: a buffer is null or not 16-byte aligned", problem_.key()));
    }
  }
  if (workspace_bytes < this->workspace_bytes() ||
      (this->workspace_bytes() > 0 && workspace == nullptr)) {
    throw BackendError(
        fmt::format("conv graph {} ({}): the plan needs {} bytes of workspace, {} given",
                    problem_.key(), engine_, this->workspace_bytes(), workspace_bytes));
  }
  BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
           static_cast<std::int64_t>(pointers.size()), pointers.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
           static_cast<std::int64_t>(uids.size()), uids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize();
  SB_CHECK(cudnnBackendExecute(handle, plan_.get(), pack.get()));
}

}  // namespace scalebench::trainer::cuda
