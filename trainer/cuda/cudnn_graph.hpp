// Convolutions through cuDNN's graph API: the backend descriptors of cuDNN 9
// (cudnnBackendCreateDescriptor / SetAttribute / Finalize / Execute), without NVIDIA's
// cudnn-frontend on top (docs/trainer-cuda.md, "cuDNN's graph API").
//
// A ConvProblem (shape, layout, data type, direction, fused bias and ReLU) becomes an operation
// graph; cuDNN's heuristics (mode A, then the fallback list) propose engine configurations; each
// is finalized into an execution plan (those that cannot be are skipped, with cuDNN's reason
// kept), the plans are timed with CUDA events on the first use of a shape and the fastest is
// kept in a ConvPlanCache, as PyTorch's cudnn.benchmark does. Later uses of the same key get the
// cached plan. Every failed call throws BackendError naming the call, file:line and status.
//
// Tensors are described in cuDNN's logical order (N, C, H, W) with strides: NHWC is strides
// (HWC, 1, WC, C), and the filters of an NHWC problem are KRSC. Arithmetic is fp32 for fp32 and
// bf16 data alike (bf16 tensors, fp32 accumulation).
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <source_location>
#include <string>
#include <vector>

namespace scalebench::trainer::cuda {

// One backend descriptor, destroyed with it; move-only. set() and finalize() throw BackendError
// naming the descriptor's type, the attribute and the caller's file:line.
class BackendDescriptor {
 public:
  BackendDescriptor() = default;
  explicit BackendDescriptor(cudnnBackendDescriptorType_t type,
                             std::source_location where = std::source_location::current());
  ~BackendDescriptor();
  BackendDescriptor(BackendDescriptor&& o) noexcept;
  BackendDescriptor& operator=(BackendDescriptor&& o) noexcept;
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return handle_; }
  cudnnBackendDescriptorType_t type() const { return type_; }

  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
           const void* values, std::source_location where = std::source_location::current());
  void set_int64(cudnnBackendAttributeName_t name, std::int64_t value,
                 std::source_location where = std::source_location::current());
  void set_int64s(cudnnBackendAttributeName_t name, const std::vector<std::int64_t>& values,
                  std::source_location where = std::source_location::current());
  void set_data_type(cudnnBackendAttributeName_t name, cudnnDataType_t value,
                     std::source_location where = std::source_location::current());
  void set_descriptor(cudnnBackendAttributeName_t name, const BackendDescriptor& value,
                      std::source_location where = std::source_location::current());
  void finalize(std::source_location where = std::source_location::current());
  // Finalizes without throwing: the status (a candidate plan that cannot run is no error).
  cudnnStatus_t try_finalize() noexcept;

 private:
  cudnnBackendDescriptor_t handle_ = nullptr;
  cudnnBackendDescriptorType_t type_{};
};

// "CUDNN_BACKEND_TENSOR_DESCRIPTOR" for the types this file creates, else the number.
std::string descriptor_type_name(cudnnBackendDescriptorType_t type);
// cudnnGetErrorString, followed by cuDNN's last error message when it has one.
std::string graph_status_text(cudnnStatus_t status);

enum class ConvDirection { forward, backward_data, backward_filter };
enum class TensorLayout { nchw, nhwc };

// A 2-D convolution of x (n, c, h, w) by k filters of c/groups × r × s.
struct ConvShape {
  std::int64_t n = 1, c = 1, h = 1, w = 1;
  std::int64_t k = 1, r = 1, s = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t groups = 1;

  std::int64_t out_h() const;  // P
  std::int64_t out_w() const;  // Q
  std::size_t x_count() const;
  std::size_t w_count() const;
  std::size_t y_count() const;
  // Multiply-adds × 2 of one direction (forward, backward-data and backward-filter alike).
  double flops() const;
};

struct ConvProblem {
  ConvDirection direction = ConvDirection::forward;
  ConvShape shape;
  TensorLayout layout = TensorLayout::nhwc;
  // x, w, y and the bias: CUDNN_DATA_FLOAT or CUDNN_DATA_BFLOAT16; arithmetic in fp32.
  cudnnDataType_t data_type = CUDNN_DATA_FLOAT;
  // Forward only: y = relu(conv(x, w) + bias), the bias one value per output channel, the
  // intermediate results virtual (fp32, never in memory).
  bool bias = false;
  bool relu = false;

  // Everything that decides the plan, e.g. "fwd nhwc bf16 x64x64x56x56 k64x3x3 s1x1 p1x1 d1x1
  // g1 +bias +relu"; throws std::invalid_argument for an impossible problem.
  std::string key() const;
};

// The device memory of one execution. The slots keep their forward names in every direction:
// backward-data writes dx into x and reads dy from y; backward-filter writes dw into w.
struct ConvBuffers {
  void* x = nullptr;
  void* w = nullptr;
  void* y = nullptr;
  void* bias = nullptr;  // forward with bias only
};

// The descriptors of one problem's operation graph (tensors, operations, the graph last),
// shared by every plan built from it.
using GraphParts = std::vector<BackendDescriptor>;

// The finalized operation graph of `problem`: its tensors and operations, the graph last. Needs
// no GPU; `handle` (may be null) is set on the graph, as cudnn-frontend does.
std::shared_ptr<const GraphParts> build_conv_graph(const ConvProblem& problem,
                                                   cudnnHandle_t handle = nullptr);

// A finalized execution plan with everything it was built from.
class ConvPlan {
 public:
  ConvPlan(ConvProblem problem, std::shared_ptr<const GraphParts> graph, BackendDescriptor config,
           BackendDescriptor plan, std::int64_t workspace_bytes, std::string engine);
  const ConvProblem& problem() const { return problem_; }
  std::size_t workspace_bytes() const { return static_cast<std::size_t>(workspace_bytes_); }
  // "engine 12 (tensor cores)": cuDNN's global engine index and its notes.
  const std::string& engine() const { return engine_; }
  // The median time of the autotune's runs, in ms (0 when not timed).
  float tuned_ms() const { return tuned_ms_; }
  void set_tuned_ms(float ms) { tuned_ms_ = ms; }
  // Queues the plan on the handle's stream; BackendError when `workspace_bytes` is less than
  // the plan needs, or a buffer it uses is null or not 16-byte aligned.
  void execute(cudnnHandle_t handle, const ConvBuffers& buffers, void* workspace,
               std::size_t workspace_bytes) const;

 private:
  ConvProblem problem_;
  std::shared_ptr<const GraphParts> graph_;
  BackendDescriptor config_;
  BackendDescriptor plan_;
  std::int64_t workspace_bytes_ = 0;
  std::string engine_;
  float tuned_ms_ = 0;
};

struct AutotuneOptions {
  // At most this many engine configurations are finalized and timed (PyTorch's
  // cudnn benchmark limit is 10 by default).
  int max_candidates = 10;
  int timing_runs = 3;  // after one untimed warm-up run each
  // No plan may need more workspace; 0: half the device's free memory.
  std::size_t workspace_limit = 0;
  // Only engines cuDNN does not mark non-deterministic.
  bool deterministic = false;
};

// What an autotune did, for --verbose: one line per candidate (engine, workspace, time, or why
// it was skipped).
struct AutotuneReport {
  std::string key;
  std::vector<std::string> lines;
  int heuristic_configs = 0, fallback_configs = 0, finalized = 0, timed = 0;
};

// Every engine configuration the heuristics propose for `problem`, finalized where possible.
// Throws BackendError when none can be finalized.
std::vector<ConvPlan> candidate_plans(cudnnHandle_t handle, const ConvProblem& problem,
                                      const AutotuneOptions& options, AutotuneReport* report);

// Times `candidates` on the handle's stream with `buffers` (their outputs are overwritten) and
// returns the fastest, its time set. Synchronizes the stream first.
ConvPlan fastest_plan(cudnnHandle_t handle, std::vector<ConvPlan> candidates,
                      const ConvBuffers& buffers, const AutotuneOptions& options,
                      AutotuneReport* report);

// The fastest plan per (device, problem key, deterministic), tuned on first use. Thread-safe.
class ConvPlanCache {
 public:
  std::shared_ptr<const ConvPlan> get(cudnnHandle_t handle, const ConvProblem& problem,
                                      const ConvBuffers& buffers,
                                      const AutotuneOptions& options = {});
  std::size_t size() const;
  int autotunes() const;  // how many gets built and timed plans (the others were cached)
  // The reports of every autotune, in order.
  std::vector<AutotuneReport> reports() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const ConvPlan>> plans_;
  std::vector<AutotuneReport> reports_;
  int autotunes_ = 0;
};

}  // namespace scalebench::trainer::cuda
