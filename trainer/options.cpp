#include "trainer/options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "trainer/allreduce_bench.hpp"
#include "trainer/backend_registry.hpp"
#include "trainer/errors.hpp"
#include "trainer/model/zoo.hpp"

namespace scalebench::trainer {
namespace {
// 1 TiB: far beyond any gradient buffer, and small enough that the byte count is exact.
constexpr double kMaxFusionMb = 1048576.0;
}  // namespace

const std::vector<std::string>& model_names() { return model::model_names(); }

void add_options(CLI::App& app, TrainOptions& o) {
  app.description(
      "scalebench-train: the built-in data-parallel trainer. Run it alone, or under mpirun/srun "
      "for data parallelism (gradients averaged by MPI allreduce). Output format: "
      "docs/trainer-output.md.");
  app.option_defaults()->always_capture_default();

  app.add_option("--model", o.model,
                 "Model to train (docs/trainer.md): mlp, mnist_cnn (the Keras MNIST CNN), lenet5, "
                 "vgg16, resnet50, inception_v3, mobilenet_v2")
      ->check(CLI::IsMember(model_names()));
  app.add_option("--hidden", o.hidden, "Hidden layer widths of the MLP, e.g. 256,128")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--dataset", o.dataset, "Training data (docs/trainer.md, Datasets)")
      ->check(CLI::IsMember({"fashion-mnist", "idx", "cifar10", "cifar100", "synthetic"}));
  app.add_option("--data-dir", o.data_dir,
                 "fashion-mnist, idx: directory of train-/t10k- IDX files (gzip'd or raw); "
                 "cifar10, cifar100: directory of the binary version's .bin files, or the one "
                 "holding cifar-10-batches-bin/ or cifar-100-binary/");
  app.add_flag("--coarse-labels", o.coarse_labels,
               "cifar100: train on the 20 coarse classes instead of the 100 fine ones");
  app.add_option("--input-shape", o.input_shape, "Synthetic data: image shape CxHxW [1x28x28]");
  app.add_option("--classes", o.classes, "Synthetic data: number of classes [10]")
      ->check(CLI::Range(2, 1 << 20));
  app.add_option("--train-images", o.train_images, "Synthetic data: training images [60000]")
      ->check(CLI::PositiveNumber);
  app.add_option("--test-images", o.test_images, "Synthetic data: test images, 0 for none [10000]");
  app.add_option("--train-limit", o.train_limit,
                 "Use only the first N training images (0: all), for quick runs");
  app.add_option("--images-per-rank", o.images_per_rank,
                 "Weak scaling: images each rank trains per epoch (whole batches), so that an "
                 "epoch grows with np (0: the training set split among the ranks)");
  app.add_option(
         "--emulated-compute-ms", o.emulated_compute_ms,
         "Sleep this many ms per step instead of computing forward, backward and the update "
         "(an accelerator's idle host; the gradient allreduce is real; 0: compute)")
      ->check(CLI::Range(0.0, 3.6e6));
  app.add_option("--epochs", o.epochs, "Number of epochs")->check(CLI::PositiveNumber);
  app.add_option("--batch-size", o.batch_size, "Images per step on each rank")
      ->check(CLI::PositiveNumber);
  app.add_option("--lr", o.lr, "Learning rate per rank; the trainer uses lr x np (Horovod)")
      ->check(CLI::PositiveNumber);
  app.add_option("--momentum", o.momentum,
                 "SGD momentum (0: plain SGD; momentum/nesterov default to 0.9)")
      ->check(CLI::Range(0.0, 0.9999));
  app.add_option("--optimizer", o.optimizer, "Optimizer, with torch.optim's defaults")
      ->check(
          CLI::IsMember({"sgd", "momentum", "nesterov", "adadelta", "rmsprop", "adam", "radam"}));
  app.add_option("--weight-decay", o.weight_decay, "L2 weight decay (added to the gradient)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--warmup-epochs", o.warmup_epochs,
                 "Ramp the learning rate linearly from lr to lr x np over this many epochs")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", o.seed,
                 "Seed of the initial parameters, the shuffles and synthetic data");
  app.add_option("--threads", o.threads, "oneDNN/OpenMP threads per rank")
      ->check(CLI::PositiveNumber);
  app.add_option(
      "--backend", o.backend,
      fmt::format("Compute backend; this build has: {}", fmt::join(available_backends(), ", ")));
  // "on" or "off" into an OnOff (CLI11's transformers would also take 0 and 1).
  const auto add_on_off = [&app](const std::string& name, OnOff& value, const std::string& help) {
    return app
        .add_option_function<std::string>(
            name,
            [&value](const std::string& text) { value = text == "on" ? OnOff::On : OnOff::Off; },
            help)
        ->check(CLI::IsMember({"on", "off"}))
        ->default_str(value == OnOff::On ? "on" : "off");
  };
  app.add_option("--precision", o.precision,
                 "fp32, or bf16: convolutions and matrix products in bfloat16 with fp32 "
                 "parameters and accumulation (cuda backend)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  add_on_off("--cuda-graph", o.cuda_graph,
             "Capture each training step in a CUDA graph and replay it (cuda backend, "
             "--overlap off)");
  app.add_flag("--deterministic", o.deterministic,
               "Only convolution algorithms that give the same bits every run (cuda backend; "
               "the cpu backend always does)");
  app.add_option("--memory-format", o.memory_format,
                 "nchw, or channels_last: activations stored N×H×W×C on the GPU, convolution "
                 "weights K×R×S×C (cuda backend)")
      ->check(CLI::IsMember({"nchw", "channels_last"}));
  app.add_option("--conv-engine", o.conv_engine,
                 "legacy (cudnnFind, the default), or graph: cuDNN's graph API with the bias and "
                 "ReLU fused into the convolution (cuda backend)")
      ->check(CLI::IsMember({"legacy", "graph"}));
  app.add_option("--activation-type", o.activation_type,
                 "fp32, or bf16: activations and their gradients stored in bfloat16 between "
                 "layers (half the memory traffic; with --precision bf16, cuda backend)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  app.add_flag("--verbose", o.verbose,
               "Say on stderr what the backend chose (convolution plans) and why anything fell "
               "back");
  app.add_flag("--profile-ops", o.profile_ops,
               "After training, print each operation's share of a step: forward and backward "
               "times summed over the steps after the first, with achieved FLOP/s or bytes/s");
  app.add_option("--fusion-mb", o.fusion_mb,
                 "Gradient allreduce bucket size in MiB (Horovod's fusion threshold)")
      ->check(CLI::Range(1e-6, kMaxFusionMb));
  add_on_off("--overlap", o.overlap,
             "Allreduce finished buckets during backward (on) or all after it (off)");

  // The allreduce benchmark (nccl-tests' all_reduce_perf -b -e -f -n -w).
  const auto size = [](const char* option) {
    return [option](std::string text) {
      try {
        return std::to_string(parse_size(text, option));
      } catch (const UsageError& e) {
        throw CLI::ValidationError(e.what());
      }
    };
  };
  app.add_option("--benchmark", o.benchmark,
                 "Instead of training, benchmark a collective (docs/allreduce-benchmark.md): "
                 "allreduce (MPI over host memory for --backend cpu, NCCL for cuda)")
      ->check(CLI::IsMember({"allreduce"}));
  app.add_option("--min-bytes", o.min_bytes, "Benchmark: smallest message, e.g. 8, 1K, 4M [8]")
      ->transform(size("--min-bytes"))
      ->type_name("SIZE");
  app.add_option("--max-bytes", o.max_bytes, "Benchmark: largest message, at most 4G [128M]")
      ->transform(size("--max-bytes"))
      ->type_name("SIZE");
  app.add_option("--step-factor", o.step_factor,
                 "Benchmark: each message size is the previous one times this [2]")
      ->check(CLI::Range(2, 1 << 20));
  app.add_option("--iterations", o.iterations, "Benchmark: timed allreduces per size [20]")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup-iterations", o.warmup_iterations,
                 "Benchmark: untimed allreduces per size before the timed ones [5]")
      ->check(CLI::NonNegativeNumber);
}

std::size_t fusion_bytes(const TrainOptions& o) {
  const double bytes = std::min(o.fusion_mb, kMaxFusionMb) * 1048576.0;
  return std::max(sizeof(float), static_cast<std::size_t>(std::llround(bytes)));
}

namespace {

// The struct is filled by tests too, past CLI11's checks: a choice out of its two values.
void require_one_of(const std::string& value, const char* option, const char* a, const char* b) {
  if (value != a && value != b) throw UsageError(fmt::format("{} is {} or {}", option, a, b));
}

// --precision, --memory-format, --conv-engine, --activation-type: their values, and what needs
// the cuda backend.
void validate_device_choices(const TrainOptions& o) {
  require_one_of(o.precision, "--precision", "fp32", "bf16");
  require_one_of(o.memory_format, "--memory-format", "nchw", "channels_last");
  require_one_of(o.conv_engine, "--conv-engine", "legacy", "graph");
  require_one_of(o.activation_type, "--activation-type", "fp32", "bf16");
  if (o.precision == "bf16" && o.backend != "cuda") {
    throw UsageError("--precision bf16 needs --backend cuda (the cpu backend trains in fp32)");
  }
  if (o.memory_format == "channels_last" && o.backend != "cuda") {
    throw UsageError(
        "--memory-format channels_last needs --backend cuda (oneDNN picks the cpu "
        "backend's layouts itself)");
  }
  if (o.conv_engine == "graph" && o.backend != "cuda") {
    throw UsageError("--conv-engine graph needs --backend cuda (cuDNN's graph API)");
  }
  if (o.activation_type == "bf16" && (o.backend != "cuda" || o.precision != "bf16")) {
    throw UsageError(
        "--activation-type bf16 needs --backend cuda --precision bf16 (parameters, gradients "
        "and the optimizer stay fp32)");
  }
}

}  // namespace

void validate(const TrainOptions& o) {
  if (o.dataset != "synthetic") {
    const char* given = o.input_shape    ? "--input-shape"
                        : o.classes      ? "--classes"
                        : o.train_images ? "--train-images"
                        : o.test_images  ? "--test-images"
                                         : nullptr;
    if (given != nullptr) {
      throw UsageError(fmt::format(
          "{} applies to --dataset synthetic only ({} takes shape, classes and sizes from its "
          "files; use --train-limit to train on fewer images)",
          given, o.dataset));
    }
  }
  const bool cifar = o.dataset == "cifar10" || o.dataset == "cifar100";
  if (cifar && o.data_dir == kDefaultDataDir) {
    // The default is Fashion-MNIST's directory; reading CIFAR there would only fail later.
    throw UsageError(
        fmt::format("--dataset {} needs --data-dir DIR, the extracted {}-binary.tar.gz", o.dataset,
                    o.dataset == "cifar10" ? "cifar-10" : "cifar-100"));
  }
  if (o.coarse_labels && o.dataset != "cifar100") {
    throw UsageError("--coarse-labels applies to --dataset cifar100 only");
  }
  if (o.hidden.empty()) throw UsageError("--hidden needs at least one width");
  if (!(o.emulated_compute_ms >= 0.0 && o.emulated_compute_ms <= 3.6e6)) {
    throw UsageError("--emulated-compute-ms must be in [0, 3600000]");
  }
  if (o.emulated_compute_ms > 0 && o.backend != "cpu") {
    // It emulates an accelerator on a host without one; a device's gradients live on it.
    throw UsageError("--emulated-compute-ms needs --backend cpu");
  }
  // The struct is filled by tests too, past CLI11's checks.
  if (!(o.fusion_mb > 0.0 && o.fusion_mb <= kMaxFusionMb)) {
    throw UsageError(fmt::format("--fusion-mb must be in (0, {}]", kMaxFusionMb));
  }
  validate_device_choices(o);
  if (o.cuda_graph == OnOff::On && o.backend != "cuda") {
    throw UsageError("--cuda-graph on needs --backend cuda");
  }
  if (o.cuda_graph == OnOff::On && o.overlap == OnOff::On) {
    throw UsageError(
        "--cuda-graph on needs --overlap off (the overlapped allreduce cannot be captured with "
        "the step)");
  }
  if (o.profile_ops && o.cuda_graph == OnOff::On) {
    // A replayed graph is one launch: there is no operation boundary left to time.
    throw UsageError("--profile-ops needs --cuda-graph off (a graph has no per-operation times)");
  }
  if (o.profile_ops && (o.emulated_compute_ms > 0 || o.benchmark)) {
    throw UsageError(fmt::format("--profile-ops times training, not {}",
                                 o.benchmark ? "--benchmark" : "--emulated-compute-ms"));
  }
  if (o.benchmark) {
    if (*o.benchmark != "allreduce") {
      throw UsageError(
          fmt::format("--benchmark {}: the only benchmark is allreduce", *o.benchmark));
    }
    (void)allreduce_settings(o);  // sizes and counts in range
  } else {
    const char* given = o.min_bytes           ? "--min-bytes"
                        : o.max_bytes         ? "--max-bytes"
                        : o.step_factor       ? "--step-factor"
                        : o.iterations        ? "--iterations"
                        : o.warmup_iterations ? "--warmup-iterations"
                                              : nullptr;
    if (given != nullptr) {
      throw UsageError(fmt::format("{} applies to --benchmark allreduce only", given));
    }
  }
}

}  // namespace scalebench::trainer
