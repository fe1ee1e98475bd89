// The CUDA model: the backend-neutral graph (trainer/model/ops.hpp) lowered node by node to
// cuDNN/cuBLAS plans on one GPU. Models are defined once (trainer/model/zoo.cpp), so both
// backends train the same architecture from the same initial parameters (same seed), and the CPU
// network is the oracle the cross-backend tests compare against. The backward order, the
// accumulation of gradient shares and the buffer liveness are the CPU's too, written once
// (trainer/model/backward.hpp).
//
// The flat parameter and gradient buffers live on the device, in the CPU layout. One training
// step queues forward, loss and backward on the compute stream and waits only for the loss (a
// few bytes); the gradient allreduce (NCCL, on its own stream) and the optimizer step follow on
// the device while the host prepares the next batch. With `cuda_graph`, the queued part of a
// training step (input copies, forward, loss, backward) is captured once per batch size into a
// CUDA graph and replayed: one launch instead of one per kernel.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "trainer/backend.hpp"
#include "trainer/cuda/device.hpp"
#include "trainer/cuda/layers.hpp"
#include "trainer/cuda/op_timer.hpp"
#include "trainer/cuda/optimizer.hpp"
#include "trainer/model/backward.hpp"
#include "trainer/model/zoo.hpp"

namespace scalebench::trainer::cuda {

class CudaNetwork final : public Model {
 public:
  // Lowers the backend-neutral description to device layers on `device`, starting from
  // `initial_parameters` (model::initial_parameters: the CPU backend's for the same seed). Host
  // copies of the parameters and gradients exist only once parameters() or gradients() is asked.
  CudaNetwork(model::ModelDescription description, std::vector<float> initial_parameters,
              const OptimizerOptions& optimizer, int device, const DeviceOptions& options = {});
  ~CudaNetwork() override;

  std::size_t parameter_count() const override { return count_; }
  std::span<float> parameters() override;
  std::span<float> gradients() override;
  void parameters_changed() override;
  BatchStats train_batch(std::span<const float> images, std::span<const std::int32_t> labels,
                         std::size_t batch) override;
  void optimizer_step() override;
  void set_learning_rate(double lr) override { lr_ = lr; }
  void set_gradients_ready(GradientsReady callback) override { ready_ = std::move(callback); }
  std::unique_ptr<GradientAllreduce> make_gradient_allreduce(const ProcessGroup& group,
                                                             std::size_t bucket_bytes,
                                                             bool overlap) override;
  BatchStats evaluate(std::span<const float> images, std::span<const std::int32_t> labels,
                      std::size_t batch) override;
  // --profile-ops: CUDA events around each operation (not with cuda_graph: a replay has none).
  bool start_op_timing() override;
  OpTimes take_op_times() override;

  Context& context() { return context_; }
  float* device_gradients() { return gradients_.data(); }
  // Batch norm running statistics of node i (empty for other nodes), copied to the host.
  std::vector<float> running_mean(std::size_t node);
  std::vector<float> running_var(std::size_t node);

 private:
  struct Plan;
  Plan& plan(std::size_t batch);
  void allocate_backward(Plan& p);
  // Copies the batch into the plan's pinned staging buffers (host side only).
  void stage(Plan& p, std::span<const float> images, std::span<const std::int32_t> labels,
             std::size_t batch);
  // Queues the input copies, the forward pass and the loss; `training` also writes the loss
  // gradient. Returns after queuing; read_loss() waits for the loss.
  void forward(Plan& p, std::size_t batch, bool training);
  // A training step's device work: forward (training) then backward.
  void queue_step(Plan& p, std::size_t batch);
  void capture_step(Plan& p, std::size_t batch);
  BatchStats read_loss(Plan& p, std::size_t batch);
  void backward(Plan& p);

  model::Graph graph_;
  model::BackwardSchedule schedule_;
  model::InputDims input_;
  std::vector<float> host_parameters_, host_gradients_;  // allocated when first asked for
  Context context_;
  std::size_t count_ = 0;
  DeviceArray<float> parameters_, gradients_;
  std::vector<std::size_t> parameter_offset_;
  // Channels last: the convolution weights stored K×R×S×C on the device (empty otherwise).
  std::vector<ConvWeights> conv_weights_;
  std::vector<LayerState> states_;
  std::unique_ptr<DeviceOptimizer> optimizer_;
  double lr_;
  GradientsReady ready_;
  bool cuda_graph_;
  cudaEvent_t loss_ready_ = nullptr;
  std::map<std::size_t, std::unique_ptr<Plan>> plans_;
  std::unique_ptr<OpEventTimer> timer_;  // --profile-ops only
  OpTimes times_;
};

}  // namespace scalebench::trainer::cuda
