#include "trainer/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <thread>

#include "trainer/backend_registry.hpp"
#include "trainer/distributed.hpp"
#include "trainer/errors.hpp"
#include "trainer/model/op_cost.hpp"
#include "trainer/model/zoo.hpp"
#include "trainer/op_profile.hpp"

namespace scalebench::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Metric sums reduced across ranks in one call at the end of each epoch.
enum Metric { kLossSum, kCorrect, kSeen, kTestCorrect, kTestSeen, kMetricCount };

// Accuracy on this rank's contiguous shard of the test set, as sums for the allreduce.
void evaluate_shard(Model& model, const Dataset& test, std::size_t batch, double* correct,
                    double* seen) {
  const auto rank = static_cast<std::size_t>(dist::rank());
  const auto size = static_cast<std::size_t>(dist::size());
  const std::size_t begin = test.size() * rank / size;
  const std::size_t end = test.size() * (rank + 1) / size;
  const std::size_t n = test.shape.elements();
  for (std::size_t i = begin; i < end; i += batch) {
    const std::size_t count = std::min(batch, end - i);
    const BatchStats stats =
        model.evaluate(std::span<const float>(test.images).subspan(i * n, count * n),
                       std::span<const std::int32_t>(test.labels).subspan(i, count), count);
    *correct += static_cast<double>(stats.correct);
    *seen += static_cast<double>(count);
  }
}

// --emulated-compute-ms: the step of an accelerator that computes (and updates its parameters)
// while its host waits: the host only sleeps and reduces the gradient. The gradient holds the
// constant written once before training (its mean over ranks is the same constant), so that no
// host work but the allreduce grows with np when ranks share cores.
BatchStats emulate_train_batch(GradientAllreduce& reducer, double milliseconds) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(milliseconds));
  if (reducer.overlap()) reducer.gradients_ready(0);
  return BatchStats{};
}

// --profile-ops: the table of where the timed steps went (trainer/op_profile.hpp).
std::vector<std::string> op_profile_lines(Model& model, const ModelSpec& spec, const RunInfo& info,
                                          double step_seconds) {
  const OpTimes times = model.take_op_times();
  const model::ModelDescription description = model::describe_model(spec);
  const std::vector<model::Shape> shapes =
      model::infer_shapes(description.graph, model::Shape(description.input));
  const std::vector<model::OpCost> costs = model::op_costs(
      description.graph, shapes, static_cast<std::size_t>(info.batch_size), times.activation_bytes);
  const std::string context =
      fmt::format("model={} batch_size={} backend={} precision={}", info.model, info.batch_size,
                  info.backend, info.precision);
  return format_op_profile(context, times, costs, step_seconds);
}

}  // namespace

std::string format_header(const RunInfo& i) {
  return fmt::format(
             "scalebench-train model={} parameters={} dataset={} train_images={} test_images={} "
             "np={} "
             "batch_size={} lr={:g} seed={} threads={} backend={} precision={} fusion_mb={:g} "
             "overlap={}",
             i.model, i.parameters, i.dataset, i.train_images, i.test_images, i.np, i.batch_size,
             i.lr, i.seed, i.threads, i.backend, i.precision, i.fusion_mb,
             i.overlap ? "on" : "off") +
         (i.cuda_graph ? " cuda_graph=on" : "") + (i.deterministic ? " deterministic=on" : "") +
         (i.channels_last ? " memory_format=channels_last" : "") +
         (i.conv_engine_graph ? " conv_engine=graph" : "") +
         (i.bf16_activations ? " activation_type=bf16" : "") +
         (i.hosts.empty() ? "" : " hosts=" + i.hosts) +
         (i.rank_hosts.empty() ? "" : " rank_hosts=" + i.rank_hosts) +
         (i.emulated_compute_ms > 0
              ? fmt::format(" emulated_compute_ms={:g}", i.emulated_compute_ms)
              : std::string());
}

std::string format_epoch_start(int epoch, int epochs) {
  return fmt::format("Epoch {}/{}", epoch, epochs);
}

std::string format_epoch_end(const EpochResult& r) {
  std::string line =
      fmt::format("{}/{} - loss: {:.6f} - accuracy: {:.6f}", r.steps, r.steps, r.loss, r.accuracy);
  if (r.test_accuracy) line += fmt::format(" - test_accuracy: {:.6f}", *r.test_accuracy);
  line +=
      fmt::format(" - images/s: {:.1f} - epoch_seconds: {:.6f}", r.images_per_second, r.seconds);
  return line;
}

std::string format_done(const TrainingSummary& s) {
  return fmt::format("Training done: epochs={} seconds={:.6f} images/s={:.1f}", s.epochs.size(),
                     s.seconds, s.images_per_second);
}

DataSplit load_data(const TrainOptions& o) {
  DataSplit data;
  if (o.dataset == "fashion-mnist") {
    data = load_fashion_mnist(o.data_dir);
  } else if (o.dataset == "idx") {
    data = load_idx_dir(o.data_dir);
  } else if (o.dataset == "cifar10") {
    data = load_cifar10(o.data_dir);
  } else if (o.dataset == "cifar100") {
    data = load_cifar100(o.data_dir, o.coarse_labels);
  } else if (o.dataset == "synthetic") {
    SyntheticSpec spec;
    if (o.input_shape) spec.shape = parse_shape(*o.input_shape);
    if (o.classes) spec.classes = *o.classes;
    if (o.train_images) spec.train_images = *o.train_images;
    if (o.test_images) spec.test_images = *o.test_images;
    spec.seed = o.seed;
    data = make_synthetic(spec);
  } else {
    throw UsageError(fmt::format(
        "unknown dataset '{}' (fashion-mnist, idx, cifar10, cifar100, synthetic)", o.dataset));
  }
  if (o.train_limit > 0) data.train.truncate(o.train_limit);
  return data;
}

TrainingSummary train(const TrainOptions& o, const DataSplit& data,
                      const std::function<void(std::string_view)>& print) {
  validate(o);
  const int np = dist::size();
  const auto batch = static_cast<std::size_t>(o.batch_size);
  const Dataset& train_set = data.train;
  const auto ranks = static_cast<std::size_t>(np);
  if (o.images_per_rank > 0 &&
      (o.images_per_rank % batch != 0 || o.images_per_rank * ranks > train_set.size())) {
    throw UsageError(fmt::format(
        "--images-per-rank {} must be a whole number of batches (--batch-size {}) and at most "
        "the {} training images / np = {}",
        o.images_per_rank, batch, train_set.size(), np));
  }
  const std::size_t steps =
      o.images_per_rank > 0 ? o.images_per_rank / batch : train_set.size() / (batch * ranks);
  if (steps == 0) {
    throw UsageError(fmt::format(
        "{} training images are fewer than np x batch_size = {} x {}; lower --batch-size or "
        "use more images",
        train_set.size(), np, batch));
  }

  const Backend& backend = find_backend(o.backend);
  ModelSpec spec;
  spec.name = o.model;
  spec.input_size = train_set.shape.elements();
  spec.channels = train_set.shape.channels;
  spec.height = train_set.shape.height;
  spec.width = train_set.shape.width;
  spec.rank = dist::rank();
  spec.hidden = o.hidden;
  spec.classes = train_set.classes;
  spec.seed = o.seed;
  OptimizerOptions sgd;
  sgd.lr = o.lr * np;
  sgd.momentum = o.momentum;
  sgd.name = o.optimizer;
  sgd.weight_decay = o.weight_decay;
  BackendOptions backend_options;
  backend_options.threads = o.threads;
  backend_options.local_rank = dist::local_rank();
  backend_options.precision = o.precision;
  backend_options.cuda_graph = o.cuda_graph == OnOff::On;
  backend_options.deterministic = o.deterministic;
  backend_options.channels_last = o.memory_format == "channels_last";
  backend_options.conv_engine = o.conv_engine;
  backend_options.verbose = o.verbose;
  backend_options.activation_type = o.activation_type;
  std::unique_ptr<Model> model = backend.make_model(spec, sgd, backend_options);
  if (o.profile_ops && !model->start_op_timing()) {
    throw UsageError(
        fmt::format("--profile-ops: backend {} cannot time its operations", backend.name()));
  }
  // Every rank starts from rank 0's parameters (Horovod's broadcast_parameters).
  if (np > 1) {
    dist::broadcast(model->parameters());
    model->parameters_changed();
  }
  // A device model reduces on its device (NCCL); a host model's gradients go through MPI.
  std::unique_ptr<GradientAllreduce> reducer = model->make_gradient_allreduce(
      dist::process_group(), fusion_bytes(o), o.overlap == OnOff::On);
  if (!reducer) {
    reducer = std::make_unique<dist::GradientReducer>(model->gradients(), fusion_bytes(o),
                                                      o.overlap == OnOff::On);
  }
  if (reducer->overlap()) {
    model->set_gradients_ready(
        [r = reducer.get()](std::size_t offset) { r->gradients_ready(offset); });
  }

  TrainingSummary summary;
  RunInfo& info = summary.info;
  info.model = o.model;
  info.parameters = model->parameter_count();
  info.dataset = data.name;
  info.train_images = steps * batch * static_cast<std::size_t>(np);
  info.test_images = data.test ? data.test->size() : 0;
  info.np = np;
  info.batch_size = o.batch_size;
  info.lr = sgd.lr;
  info.seed = o.seed;
  info.threads = o.threads;
  info.backend = std::string(backend.name());
  info.precision = o.precision;
  info.cuda_graph = backend_options.cuda_graph;
  info.deterministic = backend_options.deterministic;
  info.channels_last = backend_options.channels_last;
  info.conv_engine_graph = backend_options.conv_engine == "graph";
  info.bf16_activations = backend_options.activation_type == "bf16";
  info.fusion_mb = o.fusion_mb;
  info.overlap = reducer->overlap();
  const std::vector<std::string> rank_hosts = dist::rank_host_names();
  info.hosts = dist::hosts_summary(rank_hosts);
  info.rank_hosts = dist::rank_hosts_runs(rank_hosts);
  info.emulated_compute_ms = o.emulated_compute_ms;
  print(format_header(info));

  const std::size_t n = train_set.shape.elements();
  const std::size_t per_rank = steps * batch;
  const std::size_t shard_begin = per_rank * static_cast<std::size_t>(dist::rank());
  std::vector<std::size_t> order(train_set.size());
  std::vector<float> batch_images(batch * n);
  std::vector<std::int32_t> batch_labels(batch);

  const bool emulated = o.emulated_compute_ms > 0;
  if (emulated) {
    const std::span<float> gradients = model->gradients();
    std::fill(gradients.begin(), gradients.end(), 1e-6F);
  }

  // --profile-ops leaves out the first step (plans, algorithm searches, lazy allocations).
  double timed_step_seconds = 0.0;
  std::int64_t timed_steps = 0;
  Clock::time_point epoch_start = Clock::now();
  print(format_epoch_start(1, o.epochs));
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    // The same permutation on every rank; each takes its own contiguous slice of it.
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::mt19937 shuffle_rng(o.seed + static_cast<std::uint32_t>(epoch));
    std::shuffle(order.begin(), order.end(), shuffle_rng);

    double metrics[kMetricCount] = {};
    for (std::size_t step = 0; step < steps; ++step) {
      // The loop's own step, for --profile-ops only (the epoch clock does not need it).
      const Clock::time_point step_start = o.profile_ops ? Clock::now() : Clock::time_point{};
      for (std::size_t j = 0; j < batch; ++j) {
        const std::size_t index = order[shard_begin + step * batch + j];
        const std::span<const float> image = train_set.image(index);
        std::copy(image.begin(), image.end(),
                  batch_images.begin() + static_cast<std::ptrdiff_t>(j * n));
        batch_labels[j] = train_set.labels[index];
      }
      if (o.warmup_epochs > 0) {
        // Goyal et al.: from the single-worker rate to lr × np, linearly in epochs done.
        const double done =
            static_cast<double>(epoch - 1) + static_cast<double>(step) / static_cast<double>(steps);
        const double f = std::min(1.0, done / o.warmup_epochs);
        model->set_learning_rate(o.lr + (sgd.lr - o.lr) * f);
      }
      const BatchStats stats = o.emulated_compute_ms > 0
                                   ? emulate_train_batch(*reducer, o.emulated_compute_ms)
                                   : model->train_batch(batch_images, batch_labels, batch);
      reducer->finish();  // the mean over ranks, whatever backward already reduced
      if (!emulated) model->optimizer_step();
      if (o.profile_ops) {
        if (epoch == 1 && step == 0) {
          (void)model->take_op_times();
        } else {
          timed_step_seconds += seconds_between(step_start, Clock::now());
          ++timed_steps;
        }
      }
      metrics[kLossSum] += stats.loss_sum;
      metrics[kCorrect] += static_cast<double>(stats.correct);
      metrics[kSeen] += static_cast<double>(batch);
    }
    if (data.test && o.emulated_compute_ms <= 0) {
      evaluate_shard(*model, *data.test, batch, &metrics[kTestCorrect], &metrics[kTestSeen]);
    }
    dist::allreduce_sum(metrics);

    EpochResult result;
    result.epoch = epoch;
    result.steps = steps;
    result.loss = metrics[kLossSum] / metrics[kSeen];
    result.accuracy = metrics[kCorrect] / metrics[kSeen];
    if (data.test && metrics[kTestSeen] > 0) {
      result.test_accuracy = metrics[kTestCorrect] / metrics[kTestSeen];
    }
    // This reading ends epoch y and starts epoch y+1 (docs/trainer-output.md).
    const Clock::time_point epoch_end = Clock::now();
    result.seconds = seconds_between(epoch_start, epoch_end);
    result.images_per_second = static_cast<double>(info.train_images) / result.seconds;
    epoch_start = epoch_end;
    print(format_epoch_end(result));
    if (epoch < o.epochs) print(format_epoch_start(epoch + 1, o.epochs));

    summary.seconds += result.seconds;
    summary.epochs.push_back(result);
  }
  summary.images_per_second =
      static_cast<double>(info.train_images) * static_cast<double>(o.epochs) / summary.seconds;
  print(format_done(summary));
  if (o.profile_ops && timed_steps > 0) {
    for (const std::string& line : op_profile_lines(
             *model, spec, info, timed_step_seconds / static_cast<double>(timed_steps))) {
      print(line);
    }
  } else if (o.profile_ops) {
    print("Per-operation profile: no step after the first was timed (train more than one step)");
  }
  return summary;
}

void run(const TrainOptions& options) {
  validate(options);
  // Fail on a missing backend before spending seconds on data.
  (void)find_backend(options.backend);
  const DataSplit data = load_data(options);
  train(options, data, [](std::string_view line) { dist::print0(line); });
}

}  // namespace scalebench::trainer
