// The model's operations (trainer/model/ops.hpp) on the GPU: convolution, batch norm, pooling
// and activations through cuDNN, dense layers through cuBLAS, dropout through the one custom
// kernel. A DeviceLayer is the plan of one layer for one input shape (batch included): its
// descriptors, chosen convolution algorithms and views of the layer's parameters and gradients
// in the model's flat device buffers, made once and reused every step.
//
// Tensors are fp32 and contiguous, NCHW by default, so a flattened N×C×H×W tensor is the same
// memory as N×(C·H·W), in PyTorch's (channel-major) order like the CPU backend's Flatten.
// Parameters use the CPU backend's layouts, so one flat buffer means the same on both backends.
// With the context's Layout::nhwc (--memory-format channels_last) activations are N×H×W×C and
// convolution weights K×R×S×C on the device; Flatten then reorders to channel-major, and the
// network converts the weights whenever the host reads or writes them (channels_last.hpp).
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainer/cuda/device.hpp"
#include "trainer/model/ops.hpp"

namespace scalebench::trainer::cuda {

// N×C×H×W; a matrix of N rows of F features is N×F×1×1.
struct Shape {
  int n = 0, c = 0, h = 1, w = 1;
  std::size_t count() const {
    return static_cast<std::size_t>(n) * static_cast<std::size_t>(c) * static_cast<std::size_t>(h) *
           static_cast<std::size_t>(w);
  }
  // H·W, the values of one channel of one image.
  std::size_t plane() const { return static_cast<std::size_t>(h) * static_cast<std::size_t>(w); }
  // Whether N×H×W×C is other memory than N×C×H×W (not for one channel or one pixel).
  bool channels_last_differs() const { return c > 1 && plane() > 1; }
  bool operator==(const Shape&) const = default;
  std::string str() const;
};

// A cuDNN tensor descriptor of a Shape (packed; NCHW and fp32 unless told).
class TensorDesc : public Owned<cudnnTensorDescriptor_t, &cudnnDestroyTensorDescriptor> {
 public:
  TensorDesc() = default;
  explicit TensorDesc(const Shape& shape, cudnnDataType_t type = CUDNN_DATA_FLOAT,
                      Layout layout = Layout::nchw);
};

// Batch norm's per-channel parameter descriptor, derived from the data's.
class BatchNormParamDesc : public Owned<cudnnTensorDescriptor_t, &cudnnDestroyTensorDescriptor> {
 public:
  explicit BatchNormParamDesc(const TensorDesc& data);
};

// What a layer keeps between plans (training and evaluation batch sizes differ): batch norm's
// running statistics and dropout's call counter (the mask of call k, as on the CPU).
struct LayerState {
  DeviceArray<float> running_mean, running_var;
  std::uint64_t dropout_calls = 0;
};

class DeviceLayer {
 public:
  virtual ~DeviceLayer() = default;
  const Shape& output() const { return out_; }
  // Host-side state of the next training forward (dropout's key for this call), set before the
  // forward is queued or a captured CUDA graph of it replays. Default: nothing.
  virtual void prepare_step() {}
  // y = f(x); `training` selects batch statistics and dropout masks. x, y, dy and dx hold the
  // context's activation type (fp32, or bf16 with --activation-type bf16), except the logits (the
  // last node's y and dy: fp32 always).
  virtual void forward(const void* x, void* y, bool training) = 0;
  // From the last forward's x and y and the loss gradient dy: overwrites the layer's parameter
  // gradients and writes dx (skipped when dx is null: the first layer needs none). May
  // overwrite dy.
  virtual void backward(const void* x, const void* y, void* dy, void* dx) = 0;

 protected:
  Shape out_;
};

// Why the cuda backend cannot run `op` with its options (asymmetric padding, a batch norm epsilon
// below cuDNN's minimum), or nothing: asked for every node before any device memory is taken.
std::optional<std::string> unsupported(const model::Op& op);

// The state an operation starts with on the device (batch norm's running statistics: mean 0,
// variance 1, as the CPU backend's).
LayerState make_layer_state(const model::Op& op);

// The device plan of `layer` for inputs of shape `in`; params/grads point at its
// parameter_count() floats in the flat device buffers; its input holds the context's activation
// type, its output `out_type` (fp32 for the logits; only a dense layer can give fp32 from bf16).
// Throws BackendError for a layer or an option the cuda backend cannot run (e.g. asymmetric
// padding), std::invalid_argument for a shape that does not fit the layer.
std::unique_ptr<DeviceLayer> make_device_layer(const model::Op& op, Context& context,
                                               const Shape& in, float* params, float* grads,
                                               LayerState& state, DType out_type);

// The convolution's device plan (conv2d.cpp), as make_device_layer makes it for model::Conv2d:
// the graph API's (conv2d_graph.cpp) with ConvEngine::graph, unless it has no plan for this one
// (then the legacy layer, the reason said under --verbose).
std::unique_ptr<DeviceLayer> make_conv2d_layer(const model::Conv2dOptions& options,
                                               Context& context, const Shape& in, float* params,
                                               float* grads);
// The graph API's layer alone; throws BackendError where cuDNN has no plan.
std::unique_ptr<DeviceLayer> make_graph_conv2d_layer(const model::Conv2dOptions& options,
                                                     Context& context, const Shape& in,
                                                     float* params, float* grads);

// dst = a + b (a residual connection) through cudnnOpTensor; both inputs get dy back.
class DeviceAdd {
 public:
  DeviceAdd(Context& context, const Shape& a, const Shape& b);
  const Shape& output() const { return shape_; }
  void forward(const void* a, const void* b, void* dst);
  // Copies dy to d_input (either input's gradient).
  void backward(const void* dy, void* d_input);

 private:
  Context& context_;
  Shape shape_;
  TensorDesc desc_;
  struct AddDesc : Owned<cudnnOpTensorDescriptor_t, &cudnnDestroyOpTensorDescriptor> {
    AddDesc();
  } add_;
};

// Concatenation along channels: one strided copy per input (cudaMemcpy2DAsync).
class DeviceConcat {
 public:
  DeviceConcat(Context& context, const std::vector<Shape>& inputs);
  const Shape& output() const { return shape_; }
  void forward(const std::vector<const void*>& inputs, void* dst);
  // Copies input k's channels of dy to d_input.
  void backward(const void* dy, std::size_t k, void* d_input);

 private:
  Context& context_;
  Shape shape_;
  std::vector<Shape> inputs_;
  std::vector<std::size_t> offsets_;  // first channel of each input in the output
  // Input k's place in the output, as cudaMemcpy2D's rows: its first byte in the output, its
  // row's bytes, the output row's bytes and the number of rows.
  struct Rows {
    std::size_t offset, width, pitch, count;
  };
  Rows rows(std::size_t k) const;
};

// a += b over n values of the context's activation type (cublasSaxpy for fp32): a node's
// gradient shares from several consumers.
void accumulate(Context& context, void* a, const void* b, std::size_t n);

}  // namespace scalebench::trainer::cuda
