// The cuda backend through the trainer's own loop (trainer/trainer.cpp): it learns, it follows
// the CPU backend's loss curve, and under mpirun on two GPUs NCCL's bucketed, overlapped
// allreduce gives the same numbers as one blocking allreduce. Skipped (SCALEBENCH_SKIP) without a
// GPU, and the two-rank case without two GPUs or mpirun.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "trainer/cuda/cuda_kernels.hpp"
#include "trainer/trainer.hpp"

using namespace scalebench;
using namespace scalebench::trainer;

namespace {

std::optional<std::string> why_too_few_gpus(int count) {
  setenv("NVIDIA_TF32_OVERRIDE", "0", 1);  // fp32 against the CPU's fp32
  const int found = cuda::device_count();
  if (found >= count) return std::nullopt;
  return std::to_string(count) + " GPU(s) needed, " + std::to_string(found) + " found";
}

TrainOptions small_cnn(const std::string& backend) {
  TrainOptions o;
  o.backend = backend;
  o.model = "mnist_cnn";
  o.dataset = "synthetic";
  o.input_shape = "1x16x16";
  o.train_images = 2048;
  o.test_images = 512;
  o.batch_size = 64;
  o.epochs = 3;
  o.optimizer = "adam";
  o.lr = 0.001;
  return o;
}

// Runs a shell command; returns its exit code and stdout lines.
int run_shell(const std::string& command, std::vector<std::string>& out) {
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> chunk{};
  std::string line;
  while (std::fgets(chunk.data(), chunk.size(), pipe) != nullptr) {
    line += chunk.data();
    if (line.ends_with('\n')) {
      line.pop_back();
      out.push_back(line);
      line.clear();
    }
  }
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("cuda training: mnist_cnn learns, and follows the CPU backend's loss") {
  SCALEBENCH_SKIP_IF(why_too_few_gpus(1));
  const TrainOptions gpu_options = small_cnn("cuda");
  const DataSplit data = load_data(gpu_options);
  std::vector<std::string> lines;
  const TrainingSummary gpu =
      train(gpu_options, data, [&](std::string_view line) { lines.emplace_back(line); });
  REQUIRE(gpu.epochs.size() == 3);
  CHECK(lines.at(0).find("backend=cuda") != std::string::npos);
  CHECK(gpu.epochs[2].loss < gpu.epochs[0].loss);
  CHECK(gpu.epochs[2].test_accuracy.value_or(0) > 0.5);  // 10 classes: chance is 0.1

  const TrainingSummary cpu = train(small_cnn("cpu"), data, [](std::string_view) {});
  // Same initial parameters, batches and dropout masks: only rounding differs, so the first
  // epoch's mean loss agrees closely (later epochs drift apart as rounding compounds).
  CHECK(gpu.epochs[0].loss == doctest::Approx(cpu.epochs[0].loss).epsilon(0.02));
  CHECK(gpu.epochs[2].test_accuracy.value_or(0) ==
        doctest::Approx(cpu.epochs[2].test_accuracy.value_or(0)).epsilon(0.1));
}

TEST_CASE("cuda training: bf16 mixed precision learns as well as fp32") {
  SCALEBENCH_SKIP_IF(why_too_few_gpus(1));
  TrainOptions o = small_cnn("cuda");
  const DataSplit data = load_data(o);
  const TrainingSummary fp32 = train(o, data, [](std::string_view) {});
  o.precision = "bf16";
  std::vector<std::string> lines;
  const TrainingSummary bf16 =
      train(o, data, [&](std::string_view line) { lines.emplace_back(line); });
  CHECK(lines.at(0).find("precision=bf16") != std::string::npos);
  CHECK(bf16.epochs[2].loss < bf16.epochs[0].loss);
  CHECK(bf16.epochs[2].test_accuracy.value_or(0) > fp32.epochs[2].test_accuracy.value_or(0) - 0.05);
}

TEST_CASE("cuda training: mpirun -np 2 on two GPUs, NCCL buckets and overlap change no digit") {
  SCALEBENCH_SKIP_IF(why_too_few_gpus(2));
  std::vector<std::string> ignored;
  if (run_shell("command -v mpirun >/dev/null", ignored) != 0) {
    SCALEBENCH_SKIP("mpirun not found");
  }
  // Two ranks: each element's mean is (a + b)/2 whichever bucket carries it and whenever it is
  // sent, so every configuration must print the same losses and accuracies, bit for bit.
  std::vector<std::vector<std::string>> metrics;
  for (const char* options : {" --fusion-mb 64 --overlap off", " --fusion-mb 0.5 --overlap off",
                              " --fusion-mb 0.5 --overlap on"}) {
    INFO(options);
    std::vector<std::string> out;
    const int code = run_shell(
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --bind-to none '" +
            (test::binary_dir() / "scalebench-train").string() +
            "' --backend cuda --model mnist_cnn --dataset synthetic --input-shape 1x16x16 "
            "--train-images 2048 --test-images 256 --batch-size 32 --epochs 2 --optimizer adam "
            "--lr 0.001 --deterministic" +
            options,
        out);
    REQUIRE(code == 0);
    REQUIRE(out.size() == 6);  // header, Epoch 1/2, its result, Epoch 2/2, its result, done
    CHECK(out[0].find("np=2") != std::string::npos);
    std::vector<std::string> m;
    for (const std::size_t i : {std::size_t{2}, std::size_t{4}}) {
      m.push_back(out[i].substr(0, out[i].find(" - images/s:")));
    }
    metrics.push_back(m);
  }
  for (std::size_t i = 1; i < metrics.size(); ++i) CHECK(metrics[i] == metrics[0]);
}

TEST_CASE("cuda --profile-ops: CUDA events time every operation, and timing changes no number") {
  SCALEBENCH_SKIP_IF(why_too_few_gpus(1));
  TrainOptions o = small_cnn("cuda");
  o.epochs = 2;
  o.deterministic = true;
  const DataSplit data = load_data(o);
  std::vector<std::string> plain, profiled;
  const TrainingSummary a =
      train(o, data, [&](std::string_view line) { plain.emplace_back(line); });
  o.profile_ops = true;
  const TrainingSummary b =
      train(o, data, [&](std::string_view line) { profiled.emplace_back(line); });
  // Events only observe: the same losses to the last printed digit.
  REQUIRE(a.epochs.size() == b.epochs.size());
  for (std::size_t e = 0; e < a.epochs.size(); ++e) CHECK(a.epochs[e].loss == b.epochs[e].loss);
  std::size_t title = 0;
  while (title < profiled.size() && profiled[title].rfind("Per-operation profile:", 0) != 0)
    ++title;
  REQUIRE(title < profiled.size());
  // 2048 / 64 = 32 steps an epoch, 2 epochs, the first step left out.
  CHECK(profiled[title].find("backend=cuda precision=fp32 steps=63 clock=CUDA events") !=
        std::string::npos);
  int rows = 0, timed = 0;
  for (std::size_t i = title; i < profiled.size(); ++i) {
    const std::string& line = profiled[i];
    const bool table_row = line.rfind("| ", 0) == 0 && line.rfind("| # ", 0) != 0 &&
                           line.rfind("| ---", 0) != 0 && line.rfind("| |", 0) != 0;
    if (!table_row) continue;
    ++rows;
    // "| r | operation | nodes | ms/step | ...": every row took some device time.
    std::vector<std::string> cells;
    for (std::size_t at = 1; at < line.size();) {
      const std::size_t next = line.find('|', at);
      if (next == std::string::npos) break;
      cells.push_back(line.substr(at, next - at));
      at = next + 1;
    }
    if (cells.size() > 3 && std::stod(cells[3]) > 0.0) ++timed;
  }
  // mnist_cnn's 9 operations, the input copy, the loss and the optimizer step.
  CHECK(rows == 12);
  CHECK(timed == rows);
}
