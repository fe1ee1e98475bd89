#include "trainer/cuda/network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/cuda/nccl.hpp"
#include "trainer/errors.hpp"
#include "trainer/model/backward.hpp"
#include "trainer/model/parameters.hpp"

namespace scalebench::trainer::cuda {
namespace {

// cuDNN's 4-D descriptors and cuBLAS's counts are ints.
void require_int_sized(const Shape& s) {
  if (s.count() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw BackendError(fmt::format(
        "backend cuda: a {} tensor has more than 2^31 elements, more than cuDNN's descriptors "
        "take; lower --batch-size",
        s.str()));
  }
}

// Waits for the compute stream, then copies all of `from` to host memory.
void copy_to_host(const Context& context, const DeviceArray<float>& from, float* to) {
  context.synchronize();
  if (from.size() > 0) {
    SB_CHECK(cudaMemcpy(to, from.data(), from.bytes(), cudaMemcpyDeviceToHost));
  }
}

// Runs `work` between a pair of the timer's events when there is a timer (--profile-ops).
template <class Work>
void timed(OpEventTimer* timer, OpEventTimer::Part part, std::size_t node, cudaStream_t stream,
           Work&& work) {
  if (timer != nullptr) timer->begin(part, node, stream);
  work();
  if (timer != nullptr) timer->end(part, node, stream);
}

using Part = OpEventTimer::Part;

}  // namespace

struct CudaNetwork::Plan {
  std::vector<Shape> shapes;  // node i's output
  std::vector<std::unique_ptr<DeviceLayer>> layers;
  std::vector<std::unique_ptr<DeviceAdd>> adds;
  std::vector<std::unique_ptr<DeviceConcat>> concats;
  std::vector<DType> types;  // node i's output and its gradients: the activations', the logits fp32
  std::vector<DeviceArray<float>> buffers;  // every activation, delta and partial
  std::vector<void*> activations;           // node i's output (node 0: the input batch)
  std::vector<void*> deltas;                // loss gradient at node i's output (training only)
  std::vector<void*> partials;              // a later consumer's share, for nodes read twice+
  PinnedArray<float> images;                // host staging of the input batch
  // The batch as it arrives (fp32 N×C×H×W), when node 0 is stored otherwise (channels last, or
  // bf16 activations): reordered and converted from here.
  DeviceArray<float> images_nchw;
  // A buffer for `count` values of `type` (the float slots that hold them).
  void* allocate(std::size_t count, DType type) {
    buffers.emplace_back((count * bytes_of(type) + sizeof(float) - 1) / sizeof(float));
    return buffers.back().data();
  }
  PinnedArray<std::int32_t> host_labels;
  DeviceArray<std::int32_t> labels;
  DeviceArray<double> row_loss;
  DeviceArray<std::int32_t> row_correct;
  PinnedArray<double> host_loss;
  PinnedArray<std::int32_t> host_correct;
  // The captured training step (cuda_graph), the context's buffer generation it saw, and the
  // eager steps run before capturing (the first one makes the libraries' lazy allocations).
  cudaGraphExec_t graph = nullptr;
  std::uint64_t graph_generation = 0;
  int eager_steps = 0;

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() { drop_graph(); }
  void drop_graph() {
    if (graph != nullptr) (void)cudaGraphExecDestroy(graph);
    graph = nullptr;
  }
};

CudaNetwork::CudaNetwork(model::ModelDescription description, std::vector<float> initial_parameters,
                         const OptimizerOptions& optimizer, int device,
                         const DeviceOptions& options)
    : graph_(std::move(description.graph)),
      schedule_(graph_),
      input_(std::move(description.input)),
      context_(device, options),
      lr_(optimizer.lr),
      cuda_graph_(options.cuda_graph) {
  const std::vector<model::Node>& nodes = graph_.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind != model::Node::Kind::op) continue;
    if (const auto why = unsupported(nodes[i].op))
      throw BackendError(fmt::format("backend cuda: graph node {} ({}): {}; use --backend cpu", i,
                                     model::op_name(nodes[i].op), *why));
  }
  model::ParameterLayout layout = model::parameter_layout(graph_);
  parameter_offset_ = std::move(layout.offsets);
  count_ = layout.total;
  for (const model::Node& node : nodes)
    states_.push_back(node.kind == model::Node::Kind::op ? make_layer_state(node.op)
                                                         : LayerState());
  if (count_ != initial_parameters.size()) {
    throw std::logic_error("cuda network: the initial parameters do not fit the model's layout");
  }
  parameters_ = DeviceArray<float>(count_);
  gradients_ = DeviceArray<float>(count_);
  if (count_ > 0) {
    SB_CHECK(cudaMemsetAsync(gradients_.data(), 0, gradients_.bytes(), context_.stream()));
  }
  if (context_.layout() == Layout::nhwc) conv_weights_ = conv_weight_blocks(graph_);
  host_parameters_ = std::move(initial_parameters);
  parameters_changed();
  host_parameters_ = {};  // a host copy again only when parameters() is asked for
  optimizer_ = make_device_optimizer(optimizer, count_);
  SB_CHECK(cudaEventCreateWithFlags(&loss_ready_, cudaEventDisableTiming));
  // The layer states' uploads and the optimizer state's zeroing ran on the legacy default
  // stream, which the (non-blocking) compute stream does not wait for: finish them now.
  SB_CHECK(cudaDeviceSynchronize());
}

CudaNetwork::~CudaNetwork() {
  (void)cudaStreamSynchronize(context_.stream());
  plans_.clear();
  if (loss_ready_ != nullptr) (void)cudaEventDestroy(loss_ready_);
}

std::span<float> CudaNetwork::parameters() {
  host_parameters_.resize(count_);
  copy_to_host(context_, parameters_, host_parameters_.data());
  weights_from_channels_last(host_parameters_, conv_weights_);  // nothing unless channels last
  return host_parameters_;
}

std::span<float> CudaNetwork::gradients() {
  host_gradients_.resize(count_);
  copy_to_host(context_, gradients_, host_gradients_.data());
  weights_from_channels_last(host_gradients_, conv_weights_);
  return host_gradients_;
}

void CudaNetwork::parameters_changed() {
  context_.synchronize();
  if (host_parameters_.size() != count_) return;  // nothing on the host to upload
  std::span<const float> host = host_parameters_;
  std::vector<float> reordered;  // the device's order of convolution weights (channels last)
  if (!conv_weights_.empty()) {
    reordered = host_parameters_;
    weights_to_channels_last(reordered, conv_weights_);
    host = reordered;
  }
  if (count_ > 0) {
    // On the compute stream, and waited for: a pageable cudaMemcpy may return before the data
    // has arrived, and the compute stream would not wait for it.
    SB_CHECK(cudaMemcpyAsync(parameters_.data(), host.data(), parameters_.bytes(),
                             cudaMemcpyHostToDevice, context_.stream()));
  }
  context_.synchronize();
}

std::vector<float> CudaNetwork::running_mean(std::size_t node) {
  std::vector<float> host(states_.at(node).running_mean.size());
  copy_to_host(context_, states_[node].running_mean, host.data());
  return host;
}

std::vector<float> CudaNetwork::running_var(std::size_t node) {
  std::vector<float> host(states_.at(node).running_var.size());
  copy_to_host(context_, states_[node].running_var, host.data());
  return host;
}

CudaNetwork::Plan& CudaNetwork::plan(std::size_t batch) {
  if (auto it = plans_.find(batch); it != plans_.end()) return *it->second;
  const std::vector<model::Node>& nodes = graph_.nodes();
  auto p = std::make_unique<Plan>();
  const std::size_t n = nodes.size();
  p->shapes.resize(n);
  p->layers.resize(n);
  p->adds.resize(n);
  p->concats.resize(n);
  p->activations.assign(n, nullptr);
  // Every stored activation in the context's type but the logits (the loss reads fp32).
  p->types.assign(n, context_.activation_type());
  p->types[n - 1] = DType::f32;
  const model::InputDims& input = input_;
  Shape& in = p->shapes[0];
  in.n = static_cast<int>(batch);
  if (input.size() == 1) {
    in.c = static_cast<int>(input[0]);
  } else if (input.size() == 3) {
    in.c = static_cast<int>(input[0]);
    in.h = static_cast<int>(input[1]);
    in.w = static_cast<int>(input[2]);
  } else {
    throw std::invalid_argument("cuda network: inputs must be C, or C×H×W");
  }
  require_int_sized(in);
  p->activations[0] = p->allocate(in.count(), p->types[0]);
  for (std::size_t i = 1; i < n; ++i) {
    const model::Node& node = nodes[i];
    auto src = [&](std::size_t k) -> const Shape& {
      return p->shapes[static_cast<std::size_t>(node.inputs[k])];
    };
    try {
      switch (node.kind) {
        case model::Node::Kind::op:
          p->layers[i] = make_device_layer(
              node.op, context_, src(0), parameters_.data() + parameter_offset_[i],
              gradients_.data() + parameter_offset_[i], states_[i], p->types[i]);
          p->shapes[i] = p->layers[i]->output();
          break;
        case model::Node::Kind::add:
          if (p->types[i] != context_.activation_type())
            throw BackendError("backend cuda: the logits must come from a dense layer");
          p->adds[i] = std::make_unique<DeviceAdd>(context_, src(0), src(1));
          p->shapes[i] = p->adds[i]->output();
          break;
        case model::Node::Kind::concat: {
          if (p->types[i] != context_.activation_type())
            throw BackendError("backend cuda: the logits must come from a dense layer");
          std::vector<Shape> srcs;
          for (std::size_t k = 0; k < node.inputs.size(); ++k) srcs.push_back(src(k));
          p->concats[i] = std::make_unique<DeviceConcat>(context_, srcs);
          p->shapes[i] = p->concats[i]->output();
          break;
        }
        case model::Node::Kind::input:
          throw std::logic_error("only node 0 is the input");
      }
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format(
          "graph node {} ({}): {}", i,
          node.kind == model::Node::Kind::op ? model::op_name(node.op) : "add/concat", e.what()));
    }
    require_int_sized(p->shapes[i]);
    p->activations[i] = p->allocate(p->shapes[i].count(), p->types[i]);
  }
  const Shape& out = p->shapes.back();
  if (out.h != 1 || out.w != 1) {
    throw std::logic_error("the last node of a model must give batch × classes logits");
  }
  p->images = PinnedArray<float>(in.count());
  if ((context_.layout() == Layout::nhwc && in.channels_last_differs()) ||
      p->types[0] != DType::f32)
    p->images_nchw = DeviceArray<float>(in.count());
  p->host_labels = PinnedArray<std::int32_t>(batch);
  p->labels = DeviceArray<std::int32_t>(batch);
  p->row_loss = DeviceArray<double>(batch);
  p->row_correct = DeviceArray<std::int32_t>(batch);
  p->host_loss = PinnedArray<double>(batch);
  p->host_correct = PinnedArray<std::int32_t>(batch);
  return *plans_.emplace(batch, std::move(p)).first->second;
}

void CudaNetwork::allocate_backward(Plan& p) {
  // The backend-neutral liveness (trainer/model/backward.hpp): every tensor is packed here, so
  // buffers of equal size in bytes are interchangeable.
  const std::size_t n = graph_.nodes().size();
  const model::BackwardBuffers plan = model::plan_backward_buffers(
      graph_, [&](std::size_t i) { return p.shapes[i].count() * bytes_of(p.types[i]); });
  std::vector<void*> buffers;
  for (const std::size_t node : plan.sized_by)
    buffers.push_back(p.allocate(p.shapes[node].count(), p.types[node]));
  p.deltas.assign(n, nullptr);
  p.partials.assign(n, nullptr);
  for (std::size_t i = 1; i < n; ++i) {
    if (plan.delta[i] != model::BackwardBuffers::none) p.deltas[i] = buffers[plan.delta[i]];
    if (plan.partial[i] != model::BackwardBuffers::none) p.partials[i] = buffers[plan.partial[i]];
  }
}

void CudaNetwork::stage(Plan& p, std::span<const float> images,
                        std::span<const std::int32_t> labels, std::size_t batch) {
  const std::size_t input_count = p.shapes[0].count();
  if (images.size() < input_count || labels.size() < batch) {
    throw std::invalid_argument(
        fmt::format("cuda network: a batch of {} needs {} floats", batch, input_count));
  }
  // The staging buffers are free: the previous step's copies finished before its loss was read.
  std::memcpy(p.images.data(), images.data(), input_count * sizeof(float));
  std::memcpy(p.host_labels.data(), labels.data(), batch * sizeof(std::int32_t));
}

void CudaNetwork::forward(Plan& p, std::size_t batch, bool training) {
  const std::vector<model::Node>& nodes = graph_.nodes();
  cudaStream_t stream = context_.stream();
  OpEventTimer* timer = training ? timer_.get() : nullptr;
  const std::size_t input_count = p.shapes[0].count();
  timed(timer, Part::forward, 0, stream, [&] {
    const Shape& in = p.shapes[0];
    if (p.images_nchw.size() > 0) {  // the data set's fp32 N×C×H×W, reordered or converted
      SB_CHECK(cudaMemcpyAsync(p.images_nchw.data(), p.images.data(), input_count * sizeof(float),
                               cudaMemcpyHostToDevice, stream));
      if (context_.layout() == Layout::nhwc && in.channels_last_differs()) {
        nchw_to_nhwc(p.images_nchw.data(), DType::f32, p.activations[0], p.types[0],
                     static_cast<std::size_t>(in.n), static_cast<std::size_t>(in.c), in.plane(),
                     stream);
      } else {
        convert(p.images_nchw.data(), DType::f32, p.activations[0], p.types[0], input_count,
                stream);
      }
    } else {
      SB_CHECK(cudaMemcpyAsync(p.activations[0], p.images.data(), input_count * sizeof(float),
                               cudaMemcpyHostToDevice, stream));
    }
    SB_CHECK(cudaMemcpyAsync(p.labels.data(), p.host_labels.data(), batch * sizeof(std::int32_t),
                             cudaMemcpyHostToDevice, stream));
  });
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    const model::Node& node = nodes[i];
    auto in = [&](std::size_t k) {
      return p.activations[static_cast<std::size_t>(node.inputs[k])];
    };
    timed(timer, Part::forward, i, stream, [&] {
      if (p.layers[i]) {
        p.layers[i]->forward(in(0), p.activations[i], training);
      } else if (p.adds[i]) {
        p.adds[i]->forward(in(0), in(1), p.activations[i]);
      } else {
        std::vector<const void*> srcs;
        for (std::size_t k = 0; k < node.inputs.size(); ++k) srcs.push_back(in(k));
        p.concats[i]->forward(srcs, p.activations[i]);
      }
    });
  }
  const Shape& out = p.shapes.back();
  timed(timer, Part::loss, 0, stream, [&] {
    softmax_cross_entropy(static_cast<const float*>(p.activations.back()), p.labels.data(), batch,
                          static_cast<std::size_t>(out.c), p.row_loss.data(), p.row_correct.data(),
                          training ? static_cast<float*>(p.deltas.back()) : nullptr, stream);
    SB_CHECK(cudaMemcpyAsync(p.host_loss.data(), p.row_loss.data(), batch * sizeof(double),
                             cudaMemcpyDeviceToHost, stream));
    SB_CHECK(cudaMemcpyAsync(p.host_correct.data(), p.row_correct.data(),
                             batch * sizeof(std::int32_t), cudaMemcpyDeviceToHost, stream));
  });
  // Inside a graph capture, an external record becomes a node that records the event on each
  // replay; outside a capture that flag is an error (cudaEventRecordWithFlags), so ask.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  SB_CHECK(cudaStreamIsCapturing(stream, &capture));
  SB_CHECK(cudaEventRecordWithFlags(
      loss_ready_, stream,
      capture == cudaStreamCaptureStatusActive ? cudaEventRecordExternal : cudaEventRecordDefault));
}

BatchStats CudaNetwork::read_loss(Plan& p, std::size_t batch) {
  context_.wait(loss_ready_);
  BatchStats stats;
  for (std::size_t r = 0; r < batch; ++r) {
    stats.loss_sum += p.host_loss.data()[r];
    stats.correct += p.host_correct.data()[r];
  }
  return stats;
}

void CudaNetwork::backward(Plan& p) {
  const std::vector<model::Node>& nodes = graph_.nodes();
  // Node i's k-th input: where its share goes (null: the model's input, no gradient), and adding
  // it to the delta when it was a partial (model::BackwardSchedule).
  auto target = [&](std::size_t i, std::size_t k) -> void* {
    const auto j = static_cast<std::size_t>(nodes[i].inputs[k]);
    switch (schedule_.share(i, k)) {
      case model::Share::none:
        return nullptr;
      case model::Share::delta:
        return p.deltas[j];
      case model::Share::partial:
        return p.partials[j];
    }
    return nullptr;
  };
  auto settle = [&](std::size_t i, std::size_t k) {
    if (schedule_.share(i, k) != model::Share::partial) return;
    const auto j = static_cast<std::size_t>(nodes[i].inputs[k]);
    accumulate(context_, p.deltas[j], p.partials[j], p.shapes[j].count());
  };
  cudaStream_t stream = context_.stream();
  for (std::size_t i = nodes.size(); i-- > 1;) {
    const model::Node& node = nodes[i];
    timed(timer_.get(), Part::backward, i, stream, [&] {
      if (p.layers[i]) {
        p.layers[i]->backward(p.activations[static_cast<std::size_t>(node.inputs[0])],
                              p.activations[i], p.deltas[i], target(i, 0));
        settle(i, 0);
      } else if (p.adds[i]) {
        for (std::size_t k = 0; k < 2; ++k) {
          if (void* t = target(i, k)) p.adds[i]->backward(p.deltas[i], t);
          settle(i, k);
        }
      } else {
        for (std::size_t k = 0; k < node.inputs.size(); ++k) {
          if (void* t = target(i, k)) p.concats[i]->backward(p.deltas[i], k, t);
          settle(i, k);
        }
      }
    });
    // Queued, not finished: a device allreduce orders itself after this point on the stream.
    if (const auto ready = schedule_.gradients_ready(i); p.layers[i] && ready_ && ready)
      ready_(*ready);
  }
}

void CudaNetwork::queue_step(Plan& p, std::size_t batch) {
  forward(p, batch, true);
  backward(p);
}

void CudaNetwork::capture_step(Plan& p, std::size_t batch) {
  p.drop_graph();
  cudaStream_t stream = context_.stream();
  cudaGraph_t graph = nullptr;
  SB_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    queue_step(p, batch);
  } catch (...) {
    (void)cudaStreamEndCapture(stream, &graph);  // leave the stream usable
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();  // and no stale error for the next launch check to report
    throw;
  }
  SB_CHECK(cudaStreamEndCapture(stream, &graph));
  const cudaError_t status = cudaGraphInstantiate(&p.graph, graph, 0);
  (void)cudaGraphDestroy(graph);
  SB_CHECK(status);
  p.graph_generation = context_.buffers_generation();
}

BatchStats CudaNetwork::train_batch(std::span<const float> images,
                                    std::span<const std::int32_t> labels, std::size_t batch) {
  Plan& p = plan(batch);
  if (p.deltas.empty()) allocate_backward(p);
  if (timer_) {
    // The previous step's events are reused now: read them first (this waits for its end).
    timer_->collect(context_, times_);
    ++times_.steps;
  }
  stage(p, images, labels, batch);
  for (const auto& layer : p.layers) {
    if (layer) layer->prepare_step();
  }
  if (!cuda_graph_) {
    queue_step(p, batch);
  } else {
    if (ready_) {
      // The overlapped allreduce forks onto NCCL's stream inside backward and joins it only in
      // finish(), after train_batch: that cannot be inside one capture.
      throw BackendError("backend cuda: --cuda-graph on needs --overlap off");
    }
    if (p.graph != nullptr && p.graph_generation != context_.buffers_generation()) {
      p.drop_graph();  // the workspace or a scratch slot moved since the capture
    }
    if (p.graph == nullptr && p.eager_steps == 0) {
      ++p.eager_steps;
      queue_step(p, batch);
    } else {
      if (p.graph == nullptr) capture_step(p, batch);
      SB_CHECK(cudaGraphLaunch(p.graph, context_.stream()));
    }
  }
  return read_loss(p, batch);  // waits for the forward pass only; backward keeps running
}

void CudaNetwork::optimizer_step() {
  timed(timer_.get(), Part::optimizer, 0, context_.stream(), [&] {
    optimizer_->step(parameters_.data(), gradients_.data(), count_, lr_, context_.stream());
  });
}

bool CudaNetwork::start_op_timing() {
  if (cuda_graph_) return false;
  if (!timer_) timer_ = std::make_unique<OpEventTimer>(graph_.nodes().size());
  (void)take_op_times();
  return true;
}

OpTimes CudaNetwork::take_op_times() {
  if (timer_) timer_->collect(context_, times_);
  OpTimes taken = std::move(times_);
  times_ = OpTimes{};
  times_.nodes.resize(graph_.nodes().size());
  times_.clock = "CUDA events";
  times_.activation_bytes = bytes_of(context_.activation_type());
  return taken;
}

BatchStats CudaNetwork::evaluate(std::span<const float> images,
                                 std::span<const std::int32_t> labels, std::size_t batch) {
  Plan& p = plan(batch);
  stage(p, images, labels, batch);
  forward(p, batch, false);
  return read_loss(p, batch);
}

std::unique_ptr<GradientAllreduce> CudaNetwork::make_gradient_allreduce(const ProcessGroup& group,
                                                                        std::size_t bucket_bytes,
                                                                        bool overlap) {
  return make_nccl_gradient_allreduce(context_, gradients_.data(), count_, group, bucket_bytes,
                                      overlap);
}

}  // namespace scalebench::trainer::cuda
