// trainer/trainer.cpp: the training loop and its output lines, in-process (one rank).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "trainer/distributed.hpp"
#include "trainer/errors.hpp"
#include "trainer/trainer.hpp"

using namespace scalebench::trainer;

namespace {

struct Run {
  TrainingSummary summary;
  std::vector<std::string> lines;
};

Run train_collecting(const TrainOptions& options, const DataSplit& data) {
  Run run;
  run.summary = train(options, data, [&](std::string_view line) { run.lines.emplace_back(line); });
  return run;
}

TrainOptions small_synthetic_options() {
  TrainOptions o;
  o.dataset = "synthetic";
  o.train_images = 1000;
  o.test_images = 200;
  o.classes = 4;
  o.input_shape = "1x8x8";
  o.hidden = {16};
  o.epochs = 3;
  o.batch_size = 50;
  o.lr = 0.05;
  o.seed = 3;
  return o;
}

// A CIFAR file of `records` records of `label_bytes` label bytes (label r mod 10) and pixels r.
void write_cifar(const std::filesystem::path& path, int records, int label_bytes) {
  std::ofstream out(path, std::ios::binary);
  for (int r = 0; r < records; ++r) {
    const std::string labels(static_cast<std::size_t>(label_bytes), static_cast<char>(r % 10));
    out << labels << std::string(3072, static_cast<char>(r));
  }
}

}  // namespace

TEST_CASE("output lines follow docs/trainer-output.md") {
  RunInfo info{"mlp", 101770, "fashion-mnist", 60000,  10000, 2,   128, 0.1,
               1,     1,      "cpu",           "fp32", 64,    true};
  CHECK(format_header(info) ==
        "scalebench-train model=mlp parameters=101770 dataset=fashion-mnist train_images=60000 "
        "test_images=10000 np=2 batch_size=128 lr=0.1 seed=1 threads=1 backend=cpu "
        "precision=fp32 fusion_mb=64 overlap=on");
  info.fusion_mb = 0.25;
  info.overlap = false;
  CHECK(format_header(info).ends_with(" backend=cpu precision=fp32 fusion_mb=0.25 overlap=off"));
  info.hosts = "node1:4,node2:4";
  CHECK(format_header(info).ends_with(" overlap=off hosts=node1:4,node2:4"));
  info.rank_hosts = "node1*4,node2*4";
  CHECK(format_header(info).ends_with(" hosts=node1:4,node2:4 rank_hosts=node1*4,node2*4"));
  info.hosts.clear();
  info.rank_hosts.clear();
  CHECK(format_epoch_start(1, 3) == "Epoch 1/3");
  EpochResult r{1, 469, 0.54321, 0.81, 0.84, 12345.6, 4.861234};
  CHECK(format_epoch_end(r) ==
        "469/469 - loss: 0.543210 - accuracy: 0.810000 - test_accuracy: 0.840000 - images/s: "
        "12345.6 - epoch_seconds: 4.861234");
  r.test_accuracy.reset();
  CHECK(format_epoch_end(r) ==
        "469/469 - loss: 0.543210 - accuracy: 0.810000 - images/s: 12345.6 - epoch_seconds: "
        "4.861234");
  TrainingSummary s;
  s.epochs.resize(3);
  s.seconds = 14.583702;
  s.images_per_second = 12341.0;
  CHECK(format_done(s) == "Training done: epochs=3 seconds=14.583702 images/s=12341.0");
}

TEST_CASE("a run prints header, Epoch and end-of-epoch lines in order") {
  const TrainOptions o = small_synthetic_options();
  const Run run = train_collecting(o, load_data(o));
  REQUIRE(run.lines.size() == 1 + 2 * 3 + 1);
  CHECK(run.lines[0] ==
        "scalebench-train model=mlp parameters=1108 dataset=synthetic train_images=1000 "
        "test_images=200 np=1 batch_size=50 lr=0.05 seed=3 threads=1 backend=cpu precision=fp32 "
        "fusion_mb=64 "
        "overlap=off hosts=" +
            dist::host_name() + ":1 rank_hosts=" + dist::host_name());
  const std::regex end_line(
      R"(20/20 - loss: \d+\.\d{6} - accuracy: \d\.\d{6} - test_accuracy: \d\.\d{6} - images/s: \d+\.\d - epoch_seconds: \d+\.\d{6})");
  for (int e = 1; e <= 3; ++e) {
    CHECK(run.lines[static_cast<std::size_t>(2 * e - 1)] == "Epoch " + std::to_string(e) + "/3");
    CHECK(std::regex_match(run.lines[static_cast<std::size_t>(2 * e)], end_line));
  }
  CHECK(run.lines.back().starts_with("Training done: epochs=3 seconds="));
  double sum = 0;
  for (const auto& e : run.summary.epochs) sum += e.seconds;
  CHECK(run.summary.seconds == doctest::Approx(sum));
  CHECK(run.summary.images_per_second == doctest::Approx(3000.0 / sum));
}

TEST_CASE("the remainder of an epoch is dropped so that every rank runs the same steps") {
  TrainOptions o = small_synthetic_options();
  o.batch_size = 300;  // 1000 images: 3 steps of 300, 100 dropped
  o.epochs = 1;
  const Run run = train_collecting(o, load_data(o));
  CHECK(run.summary.info.train_images == 900);
  CHECK(run.summary.epochs[0].steps == 3);
  o.batch_size = 2000;
  CHECK_THROWS_AS(train_collecting(o, load_data(o)), UsageError);
}

TEST_CASE("the same seed gives identical losses and another seed different ones") {
  TrainOptions o = small_synthetic_options();
  o.momentum = 0.9;
  const DataSplit data = load_data(o);
  const Run a = train_collecting(o, data);
  const Run b = train_collecting(o, data);
  for (std::size_t e = 0; e < a.summary.epochs.size(); ++e) {
    CHECK(a.summary.epochs[e].loss == b.summary.epochs[e].loss);  // bitwise, not approximately
    CHECK(a.summary.epochs[e].accuracy == b.summary.epochs[e].accuracy);
    CHECK(a.summary.epochs[e].test_accuracy == b.summary.epochs[e].test_accuracy);
  }
  o.seed = 4;
  const Run c = train_collecting(o, data);
  CHECK(c.summary.epochs[0].loss != a.summary.epochs[0].loss);
}

TEST_CASE("the MLP learns: a 2000-image subset gets far above chance in a few epochs") {
  TrainOptions o;
  o.epochs = 4;
  o.batch_size = 32;
  o.lr = 0.05;
  o.momentum = 0.9;
  o.train_limit = 2000;
  if (!std::filesystem::exists(o.data_dir + "/train-images-idx3-ubyte.gz")) {
    MESSAGE("Fashion-MNIST is not installed; using synthetic data");
    o = small_synthetic_options();
    o.train_images = 2000;
    o.classes = 10;
  }
  const Run run = train_collecting(o, load_data(o));
  for (const auto& line : run.lines) MESSAGE(line);
  const auto& epochs = run.summary.epochs;
  CHECK(epochs.back().loss < epochs.front().loss);
  REQUIRE(epochs.back().test_accuracy.has_value());
  CHECK(*epochs.back().test_accuracy > 0.65);  // chance is 0.10
}

TEST_CASE("mnist_cnn learns: one epoch on 1024 Fashion-MNIST images gets clearly above chance") {
  // About 2 s on 2 idle cores: 1024 images × 72 MFLOP, then 512 test images forward.
  TrainOptions o;
  o.model = "mnist_cnn";
  o.optimizer = "adadelta";
  o.lr = 1.0;  // Keras's Adadelta default, as in the Databricks notebook
  o.epochs = 1;
  o.batch_size = 32;
  o.threads = 2;
  DataSplit data;
  if (std::filesystem::exists(o.data_dir + "/train-images-idx3-ubyte.gz")) {
    data = load_data(o);
  } else {
    MESSAGE("Fashion-MNIST is not installed; using synthetic data");
    o.dataset = "synthetic";
    o.train_images = 1024;
    o.test_images = 512;
    data = load_data(o);
  }
  data.train.truncate(1024);
  data.test->truncate(512);
  const Run run = train_collecting(o, data);
  for (const auto& line : run.lines) MESSAGE(line);
  CHECK(run.summary.info.parameters == 1199882);
  REQUIRE(run.summary.epochs.back().test_accuracy.has_value());
  CHECK(*run.summary.epochs.back().test_accuracy > 0.4);  // chance is 0.10
}

TEST_CASE("mnist_cnn: the same seed gives the same loss curve, dropout included") {
  TrainOptions o = small_synthetic_options();
  o.model = "mnist_cnn";
  o.input_shape = "1x12x12";
  o.train_images = 256;
  o.test_images = 64;
  o.batch_size = 32;
  o.epochs = 2;
  o.optimizer = "adam";
  o.lr = 0.001;
  o.threads = 2;
  const DataSplit data = load_data(o);
  const Run a = train_collecting(o, data);
  const Run b = train_collecting(o, data);
  for (std::size_t e = 0; e < a.summary.epochs.size(); ++e) {
    CHECK(a.summary.epochs[e].loss == b.summary.epochs[e].loss);
    CHECK(a.summary.epochs[e].test_accuracy == b.summary.epochs[e].test_accuracy);
  }
}

TEST_CASE("warm-up and every optimizer run end to end") {
  for (const char* name : {"sgd", "momentum", "nesterov", "adadelta", "rmsprop", "adam", "radam"}) {
    TrainOptions o = small_synthetic_options();
    o.optimizer = name;
    o.lr = 0.01;
    o.weight_decay = 1e-4;
    o.warmup_epochs = 1;
    o.epochs = 2;
    const Run run = train_collecting(o, load_data(o));
    INFO(name);
    CHECK(std::isfinite(run.summary.epochs.back().loss));
  }
}

TEST_CASE("load_data reads CIFAR-10 and CIFAR-100 from --data-dir, and a run trains on them") {
  scalebench::test::TempDir dir;
  std::filesystem::create_directories(dir / "cifar-10-batches-bin");
  for (int b = 1; b <= 5; ++b) {
    write_cifar(dir / "cifar-10-batches-bin" / ("data_batch_" + std::to_string(b) + ".bin"), 20, 1);
  }
  write_cifar(dir / "cifar-10-batches-bin" / "test_batch.bin", 10, 1);
  write_cifar(dir / "train.bin", 40, 2);
  write_cifar(dir / "test.bin", 10, 2);

  TrainOptions o;
  o.dataset = "cifar10";
  o.data_dir = dir.path().string();
  o.hidden = {8};
  o.epochs = 1;
  o.batch_size = 20;
  o.train_limit = 60;
  const Run c10 = train_collecting(o, load_data(o));
  // 3072 → 8 → 10: 3072·8 + 8 + 8·10 + 10 parameters; 60 of the 100 training images.
  CHECK(c10.lines[0] ==
        "scalebench-train model=mlp parameters=24674 dataset=cifar10 train_images=60 "
        "test_images=10 np=1 batch_size=20 lr=0.05 seed=1 threads=1 backend=cpu precision=fp32 "
        "fusion_mb=64 "
        "overlap=off hosts=" +
            dist::host_name() + ":1 rank_hosts=" + dist::host_name());

  o.dataset = "cifar100";
  o.train_limit = 0;
  const DataSplit fine = load_data(o);
  CHECK(fine.train.size() == 40);
  CHECK(fine.train.classes == 100);
  o.coarse_labels = true;
  const Run coarse = train_collecting(o, load_data(o));
  // 20 coarse classes: 3072·8 + 8 + 8·20 + 20 parameters.
  CHECK(coarse.lines[0].starts_with(
      "scalebench-train model=mlp parameters=24764 dataset=cifar100-coarse train_images=40 "));
}

TEST_CASE("the header names cuda_graph=on only when a run uses CUDA graphs") {
  RunInfo info;
  info.model = "mnist_cnn";
  info.backend = "cuda";
  CHECK(format_header(info).ends_with(" overlap=off"));
  info.cuda_graph = true;
  CHECK(format_header(info).ends_with(" overlap=off cuda_graph=on"));
}

TEST_CASE("the header names deterministic=on only when asked for") {
  RunInfo info;
  info.deterministic = true;
  CHECK(format_header(info).ends_with(" overlap=off deterministic=on"));
}

TEST_CASE("--images-per-rank: an epoch of that many images per rank (weak scaling)") {
  TrainOptions o = small_synthetic_options();
  o.images_per_rank = 150;  // 3 batches of 50 out of 1000 images
  const DataSplit data = load_data(o);
  const Run run = train_collecting(o, data);
  CHECK(run.lines[0].find(" train_images=150 ") != std::string::npos);
  CHECK(run.lines[2].rfind("3/3 - loss: ", 0) == 0);
  o.images_per_rank = 120;  // not whole batches
  CHECK_THROWS_WITH_AS(train_collecting(o, data), doctest::Contains("whole number of batches"),
                       UsageError);
  o.images_per_rank = 1050;  // more than the data set
  CHECK_THROWS_AS(train_collecting(o, data), UsageError);
}

TEST_CASE("--emulated-compute-ms: each step sleeps instead of computing, the parameters stay") {
  auto o = small_synthetic_options();
  o.epochs = 2;
  o.batch_size = 100;  // 10 steps per epoch
  o.emulated_compute_ms = 15;
  const auto data = load_data(o);
  const auto run = train_collecting(o, data);
  REQUIRE(run.summary.epochs.size() == 2);
  for (const auto& epoch : run.summary.epochs) {
    CHECK(epoch.steps == 10);
    CHECK(epoch.seconds >= 10 * 0.015);  // never faster than the emulated accelerator
    CHECK(epoch.loss == 0);              // nothing computed
    CHECK_FALSE(epoch.test_accuracy);    // no evaluation either
  }
  CHECK(run.lines.front().find(" emulated_compute_ms=15") != std::string::npos);

  TrainOptions bad = o;
  bad.backend = "cuda";
  CHECK_THROWS_WITH_AS(validate(bad),
                       doctest::Contains("--emulated-compute-ms needs --backend cpu"), UsageError);
  bad = o;
  bad.emulated_compute_ms = -1;
  CHECK_THROWS_AS(validate(bad), UsageError);
}

TEST_CASE("each rank's host: counted per host, and in rank order with runs as HOST*COUNT") {
  using V = std::vector<std::string>;
  CHECK(dist::hosts_summary(V{"a"}) == "a:1");
  CHECK(dist::rank_hosts_runs(V{"a"}) == "a");
  // Block placement (--map-by node with slots, srun --ntasks-per-node).
  const V blocks{"node1", "node1", "node2", "node2"};
  CHECK(dist::hosts_summary(blocks) == "node1:2,node2:2");
  CHECK(dist::rank_hosts_runs(blocks) == "node1*2,node2*2");
  // Round robin: the counts are the same, the ranks' nodes are not.
  const V round_robin{"node1", "node2", "node1", "node2"};
  CHECK(dist::hosts_summary(round_robin) == "node1:2,node2:2");
  CHECK(dist::rank_hosts_runs(round_robin) == "node1,node2,node1,node2");
  CHECK(dist::rank_hosts_runs(V{"b", "a", "a", "a", "b"}) == "b,a*3,b");
  CHECK(dist::rank_hosts_runs(V{}).empty());
}

TEST_CASE("--memory-format channels_last: in the header when on, refused off the cuda backend") {
  RunInfo info;
  info.model = "resnet50";
  info.backend = "cuda";
  info.deterministic = true;
  info.channels_last = true;
  info.hosts = "gpu1:1";
  const std::string header = format_header(info);
  CHECK(header.find(" deterministic=on memory_format=channels_last hosts=gpu1:1") !=
        std::string::npos);
  info.channels_last = false;
  CHECK(format_header(info).find("memory_format") == std::string::npos);
  TrainOptions o;
  o.memory_format = "channels_last";
  CHECK_THROWS_WITH_AS(validate(o),
                       "--memory-format channels_last needs --backend cuda (oneDNN picks the cpu "
                       "backend's layouts itself)",
                       UsageError);
  o.backend = "cuda";
  CHECK_NOTHROW(validate(o));
  o.memory_format = "nhwc";
  CHECK_THROWS_AS(validate(o), UsageError);
}

TEST_CASE("--conv-engine graph: in the header when on, refused off the cuda backend") {
  RunInfo info;
  info.backend = "cuda";
  info.channels_last = true;
  info.conv_engine_graph = true;
  CHECK(format_header(info).find(" memory_format=channels_last conv_engine=graph") !=
        std::string::npos);
  TrainOptions o;
  o.conv_engine = "graph";
  CHECK_THROWS_WITH_AS(validate(o), "--conv-engine graph needs --backend cuda (cuDNN's graph API)",
                       UsageError);
  o.backend = "cuda";
  CHECK_NOTHROW(validate(o));
}

TEST_CASE("--activation-type bf16: in the header when on, only with cuda and bf16 precision") {
  RunInfo info;
  info.backend = "cuda";
  info.precision = "bf16";
  info.conv_engine_graph = true;
  info.bf16_activations = true;
  CHECK(format_header(info).find(" conv_engine=graph activation_type=bf16") != std::string::npos);
  TrainOptions o;
  o.backend = "cuda";
  o.activation_type = "bf16";
  CHECK_THROWS_WITH_AS(validate(o),
                       "--activation-type bf16 needs --backend cuda --precision bf16 (parameters, "
                       "gradients and the optimizer stay fp32)",
                       UsageError);
  o.precision = "bf16";
  CHECK_NOTHROW(validate(o));
}
