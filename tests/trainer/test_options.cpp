// trainer/options.cpp: the command line of scalebench-train.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "trainer/errors.hpp"
#include "trainer/options.hpp"

using namespace scalebench::trainer;

namespace {

TrainOptions parse(std::vector<std::string> args) {
  TrainOptions options;
  CLI::App app;
  add_options(app, options);
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  app.parse(args);
  return options;
}

}  // namespace

TEST_CASE("defaults") {
  const TrainOptions o = parse({});
  CHECK(o.model == "mlp");
  CHECK(o.hidden == std::vector<int>{128});
  CHECK(o.dataset == "fashion-mnist");
  CHECK(o.data_dir == "/usr/share/datasets/fashion-mnist");
  CHECK(o.epochs == 3);
  CHECK(o.batch_size == 128);
  CHECK(o.lr == doctest::Approx(0.05));
  CHECK(o.momentum == 0.0);
  CHECK(o.seed == 1);
  CHECK(o.threads == 1);
  CHECK(o.backend == "cpu");
  CHECK(o.train_limit == 0);
  CHECK_FALSE(o.classes.has_value());
  CHECK(o.fusion_mb == 64.0);  // Horovod's fusion threshold
  CHECK(fusion_bytes(o) == 67108864);
  CHECK(o.overlap == OnOff::Off);  // it did not pay (bench/README.md)
  CHECK_NOTHROW(validate(o));
}

TEST_CASE("every option parses") {
  const TrainOptions o =
      parse({"--model",        "mlp",    "--hidden",      "256,64", "--dataset",     "synthetic",
             "--data-dir",     "/tmp/x", "--input-shape", "3x8x8",  "--classes",     "5",
             "--train-images", "1000",   "--test-images", "0",      "--train-limit", "500",
             "--epochs",       "2",      "--batch-size",  "32",     "--lr",          "0.1",
             "--momentum",     "0.9",    "--seed",        "7",      "--threads",     "2",
             "--backend",      "cpu",    "--fusion-mb",   "0.5",    "--overlap",     "on"});
  CHECK(o.hidden == std::vector<int>{256, 64});
  CHECK(o.dataset == "synthetic");
  CHECK(*o.input_shape == "3x8x8");
  CHECK(*o.classes == 5);
  CHECK(*o.train_images == 1000);
  CHECK(*o.test_images == 0);
  CHECK(o.train_limit == 500);
  CHECK(o.epochs == 2);
  CHECK(o.batch_size == 32);
  CHECK(o.lr == doctest::Approx(0.1));
  CHECK(o.momentum == doctest::Approx(0.9));
  CHECK(o.seed == 7);
  CHECK(o.threads == 2);
  CHECK(o.fusion_mb == 0.5);
  CHECK(fusion_bytes(o) == 524288);
  CHECK(o.overlap == OnOff::On);
  CHECK_NOTHROW(validate(o));
}

TEST_CASE("bad values are rejected by the parser") {
  CHECK_THROWS_AS(parse({"--model", "resnet"}), CLI::ParseError);
  CHECK_THROWS_AS(parse({"--dataset", "cifar"}), CLI::ParseError);
  CHECK_THROWS_AS(parse({"--epochs", "0"}), CLI::ParseError);
  CHECK_THROWS_AS(parse({"--batch-size", "-1"}), CLI::ParseError);
  CHECK_THROWS_AS(parse({"--hidden", "128,0"}), CLI::ParseError);
  CHECK_THROWS_AS(parse({"--momentum", "1.5"}), CLI::ParseError);
  CHECK_THROWS_AS(parse({"--fusion-mb", "0"}), CLI::ParseError);
  CHECK_THROWS_AS(parse({"--fusion-mb", "1e9"}), CLI::ParseError);
  CHECK_THROWS_AS(parse({"--overlap", "yes"}), CLI::ParseError);
  CHECK_THROWS_AS(parse({"--no-such-option"}), CLI::ParseError);
  // Options filled in code bypass CLI11: validate() checks them too.
  TrainOptions o;
  o.fusion_mb = 0.0;
  CHECK_THROWS_AS(validate(o), UsageError);
  o.fusion_mb = 1.0;
  o.precision = "fp16";
  CHECK_THROWS_AS(validate(o), UsageError);
}

TEST_CASE("synthetic-only options need --dataset synthetic") {
  for (const char* option : {"--input-shape", "--classes", "--train-images", "--test-images"}) {
    INFO(option);
    const TrainOptions o = parse({option, std::string(option) == "--input-shape" ? "1x2x2" : "3"});
    try {
      validate(o);
      FAIL("no error");
    } catch (const UsageError& e) {
      CHECK(std::string(e.what()).find(option) != std::string::npos);
    }
  }
}

TEST_CASE("CIFAR datasets parse, need --data-dir, and only cifar100 takes --coarse-labels") {
  const TrainOptions c10 = parse({"--dataset", "cifar10", "--data-dir", "/data/cifar"});
  CHECK(c10.dataset == "cifar10");
  CHECK_FALSE(c10.coarse_labels);
  CHECK_NOTHROW(validate(c10));
  const TrainOptions c100 =
      parse({"--dataset", "cifar100", "--data-dir", "/data/cifar", "--coarse-labels"});
  CHECK(c100.coarse_labels);
  CHECK_NOTHROW(validate(c100));

  for (const char* name : {"cifar10", "cifar100"}) {
    INFO(name);
    try {
      validate(parse({"--dataset", name}));  // still Fashion-MNIST's default directory
      FAIL("no error");
    } catch (const UsageError& e) {
      CHECK(std::string(e.what()).find("needs --data-dir") != std::string::npos);
    }
  }
  CHECK_THROWS_AS(validate(parse({"--dataset", "cifar10", "--data-dir", "/d", "--coarse-labels"})),
                  UsageError);
  CHECK_THROWS_AS(
      validate(parse({"--input-shape", "3x32x32", "--dataset", "cifar10", "--data-dir", "/d"})),
      UsageError);
}

// The shipped experiment files turn their "trainer" objects into these options ("k": v becomes
// --k v, true becomes --k; docs/experiment-file.md): every one must parse and validate here, so
// that a typo in a file fails in CI, not an hour into someone's run.
TEST_CASE("every experiments/*.json gives scalebench-train options it accepts") {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(scalebench::test::source_dir() / "experiments")) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    CAPTURE(entry.path().string());
    std::ifstream in(entry.path());
    const nlohmann::json spec = nlohmann::json::parse(in);
    auto to_args = [](const nlohmann::json& object, std::vector<std::string>& args) {
      for (const auto& [key, value] : object.items()) {
        if (value.is_boolean()) {
          if (value.get<bool>()) args.push_back("--" + key);
        } else {
          args.push_back("--" + key);
          args.push_back(value.is_string() ? value.get<std::string>() : value.dump());
        }
      }
    };
    std::vector<std::string> base;
    if (spec.contains("trainer")) to_args(spec["trainer"], base);
    for (const auto& condition : spec.at("conditions")) {
      std::vector<std::string> args = base;
      if (condition.contains("trainer")) to_args(condition["trainer"], args);
      CAPTURE(condition.value("name", ""));
      TrainOptions options;
      CHECK_NOTHROW(options = parse(args));
      CHECK_NOTHROW(validate(options));
    }
  }
  CHECK(files >= 3);
}

TEST_CASE("--benchmark allreduce and its settings: sizes with K, M, G") {
  const TrainOptions o =
      parse({"--benchmark", "allreduce", "--min-bytes", "1K", "--max-bytes", "128M",
             "--step-factor", "4", "--iterations", "50", "--warmup-iterations", "0"});
  CHECK(o.benchmark == "allreduce");
  CHECK(o.min_bytes == 1024);
  CHECK(o.max_bytes == 134217728);
  CHECK(o.step_factor == 4);
  CHECK(o.iterations == 50);
  CHECK(o.warmup_iterations == 0);
  CHECK_NOTHROW(validate(o));
  // Unset: training, and nccl-tests' defaults when benchmarking.
  const TrainOptions d = parse({});
  CHECK_FALSE(d.benchmark);
  CHECK_FALSE(d.min_bytes);

  CHECK_THROWS_AS(parse({"--benchmark", "alltoall"}), CLI::ValidationError);
  CHECK_THROWS_AS(parse({"--benchmark", "allreduce", "--min-bytes", "1.5M"}), CLI::ValidationError);
  CHECK_THROWS_AS(parse({"--benchmark", "allreduce", "--max-bytes", "0"}), CLI::ValidationError);
  CHECK_THROWS_AS(parse({"--benchmark", "allreduce", "--step-factor", "1"}), CLI::ValidationError);
  CHECK_THROWS_AS(parse({"--benchmark", "allreduce", "--iterations", "0"}), CLI::ValidationError);
}

TEST_CASE("benchmark settings without --benchmark, or out of order, are usage errors") {
  for (const char* option :
       {"--min-bytes", "--max-bytes", "--step-factor", "--iterations", "--warmup-iterations"}) {
    CAPTURE(option);
    try {
      validate(parse({option, "8"}));
      FAIL("no error");
    } catch (const UsageError& e) {
      CHECK(std::string(e.what()) ==
            std::string(option) + " applies to --benchmark allreduce only");
    }
  }
  CHECK_THROWS_AS(
      validate(parse({"--benchmark", "allreduce", "--min-bytes", "1M", "--max-bytes", "1K"})),
      UsageError);
  TrainOptions o;
  o.benchmark = "broadcast";  // past CLI11's check
  CHECK_THROWS_AS(validate(o), UsageError);
}

TEST_CASE("--precision and --cuda-graph: values, and the combinations validate() refuses") {
  CHECK(parse({}).precision == "fp32");
  CHECK(parse({"--precision", "bf16"}).precision == "bf16");
  CHECK_THROWS_AS(parse({"--precision", "fp16"}), CLI::ParseError);
  CHECK(parse({}).cuda_graph == OnOff::Off);
  CHECK_FALSE(parse({}).deterministic);
  CHECK(parse({"--deterministic"}).deterministic);
  CHECK_THROWS_AS(parse({"--cuda-graph", "yes"}), CLI::ParseError);
  CHECK_NOTHROW(validate(parse({"--backend", "cuda", "--cuda-graph", "on"})));
  auto message = [](const TrainOptions& o) {
    try {
      validate(o);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message(parse({"--cuda-graph", "on"})) == "--cuda-graph on needs --backend cuda");
  CHECK(
      message(parse({"--precision", "bf16"})).starts_with("--precision bf16 needs --backend cuda"));
  CHECK(message(parse({"--precision", "bf16", "--backend", "cuda"})) == "no error");
  CHECK(message(parse({"--backend", "cuda", "--cuda-graph", "on", "--overlap", "on"}))
            .starts_with("--cuda-graph on needs --overlap off"));
}
