// The command line of scalebench-train, shared by main.cpp and the tests.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace scalebench::trainer {

// Where Debian's dataset-fashion-mnist puts its files; the other file datasets need --data-dir.
inline constexpr const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";

// A switch given on the command line as "on" or "off".
enum class OnOff { Off, On };

struct TrainOptions {
  std::string model = "mlp";
  std::vector<int> hidden{128};
  std::string dataset = "fashion-mnist";  // fashion-mnist | idx | cifar10 | cifar100 | synthetic
  std::string data_dir = kDefaultDataDir;
  bool coarse_labels = false;  // CIFAR-100's 20 superclasses instead of its 100 classes
  // Synthetic data only; unset means the default (1x28x28, 10 classes, 60000 / 10000 images).
  std::optional<std::string> input_shape;
  std::optional<int> classes;
  std::optional<std::size_t> train_images;
  std::optional<std::size_t> test_images;
  std::size_t train_limit = 0;  // 0: all training images
  // Weak scaling: each rank trains this many images per epoch (a whole number of batches), so
  // an epoch holds images_per_rank x np images; 0: the data set is split among the ranks.
  std::size_t images_per_rank = 0;
  int epochs = 3;
  int batch_size = 128;  // per rank
  double lr = 0.05;      // per-rank learning rate; the trainer uses lr × np
  double momentum = 0.0;
  std::string optimizer = "sgd";  // sgd | momentum | nesterov | adadelta | rmsprop | adam | radam
  double weight_decay = 0.0;
  double warmup_epochs = 0.0;  // linear warm-up from lr to lr × np (Goyal et al. 2017)
  std::uint32_t seed = 1;
  int threads = 1;
  std::string backend = "cpu";
  std::string precision = "fp32";        // fp32 | bf16 (mixed precision, cuda backend only)
  OnOff cuda_graph = OnOff::Off;         // on: replay each step as a CUDA graph (cuda backend only)
  bool deterministic = false;            // cuda: deterministic cuDNN algorithms only
  std::string memory_format = "nchw";    // nchw | channels_last (cuda backend only)
  std::string conv_engine = "legacy";    // legacy | graph (cuda backend only)
  std::string activation_type = "fp32";  // fp32 | bf16 (stored activations; cuda, bf16 only)
  bool verbose = false;                  // the backend's choices and fallbacks, on stderr
  bool profile_ops = false;  // print per-operation times after training (op_profile.hpp)
  // Gradient allreduce: bucket size in MiB (Horovod's 64 MiB fusion threshold) and whether
  // buckets are reduced during backward ("on") or after it ("off"). Off by default: on the 2-core
  // machine overlap gained nothing for mnist_cnn and cost 17% with 1 MiB buckets
  // (bench/README.md, scaling_vs_ddp.sh).
  double fusion_mb = 64.0;
  OnOff overlap = OnOff::Off;
  // Emulated accelerator: each step sleeps this long instead of computing forward, backward and
  // the update (the gradient is a constant; its allreduce runs for real), so that more ranks than
  // cores can be measured without fighting over them (docs/scaling-model.md, own hold-out).
  // 0: real compute.
  double emulated_compute_ms = 0.0;
  // --benchmark allreduce: time allreduces instead of training (trainer/allreduce_bench.hpp,
  // docs/allreduce-benchmark.md). The settings below apply to it alone; unset means nccl-tests'
  // default (8 B to 128 MiB, factor 2, 20 timed after 5 warm-up iterations).
  std::optional<std::string> benchmark;
  std::optional<std::size_t> min_bytes;
  std::optional<std::size_t> max_bytes;
  std::optional<int> step_factor;
  std::optional<int> iterations;
  std::optional<int> warmup_iterations;
};

// The --model names every backend answers to (a backend may refuse one with a clear error).
const std::vector<std::string>& model_names();

// --fusion-mb in bytes (at least one float).
std::size_t fusion_bytes(const TrainOptions& options);

// Declares every option on `app`, bound to `options`.
void add_options(CLI::App& app, TrainOptions& options);
// Checks what CLI11 cannot: option combinations (synthetic-only options, --data-dir with
// synthetic data, --data-dir for CIFAR, benchmark settings without --benchmark, the benchmark's
// sizes). Throws UsageError.
void validate(const TrainOptions& options);

}  // namespace scalebench::trainer
