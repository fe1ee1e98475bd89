// trainer/allreduce_bench.cpp: sizes, the sequence of sizes, nccl-tests' bandwidth formulas, the
// printed lines, and the benchmark loop over a scripted AllreduceBenchmark (one process).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "trainer/allreduce_bench.hpp"
#include "trainer/backend_registry.hpp"
#include "trainer/errors.hpp"

using namespace scalebench::trainer;

TEST_CASE("sizes: plain bytes and K, M, G as powers of 1024, either case, with B or iB") {
  CHECK(parse_size("8") == 8);
  CHECK(parse_size("1K") == 1024);
  CHECK(parse_size("1k") == 1024);
  CHECK(parse_size("64K") == 65536);
  CHECK(parse_size("128M") == 134217728);
  CHECK(parse_size("1G") == 1073741824);
  CHECK(parse_size("4MB") == 4194304);
  CHECK(parse_size("1KiB") == 1024);
  CHECK(parse_size("16B") == 16);
  for (const char* bad : {"", "0", "0K", "-1", "+8", "1.5M", "1T", "M", "1 K", "1KK", "8iB", "1Kx",
                          " 8", "99999999999999999999", "17179869184G"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS((void)parse_size(bad), UsageError);
  }
  try {
    (void)parse_size("1.5M", "--max-bytes");
    FAIL("no error");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()) ==
          "--max-bytes: '1.5M' is not a size in bytes (a positive integer, optionally with K, M "
          "or G for powers of 1024: 8, 64K, 128M, 1G)");
  }
}

TEST_CASE("size sequence: min times factor^k up to and including max") {
  CHECK(size_sequence(8, 64, 2) == std::vector<std::size_t>{8, 16, 32, 64});
  CHECK(size_sequence(8, 100, 2) == std::vector<std::size_t>{8, 16, 32, 64});
  CHECK(size_sequence(8, 4194304, 4) ==
        std::vector<std::size_t>{8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288, 2097152});
  CHECK(size_sequence(6, 100, 2) == std::vector<std::size_t>{6, 12, 24, 48, 96});
  CHECK(size_sequence(8, 8, 2) == std::vector<std::size_t>{8});
  CHECK(size_sequence(16, 8, 2).empty());
  // nccl-tests' -b 8 -e 128M -f 2: 25 sizes.
  const auto defaults = size_sequence(kDefaultMinBytes, kDefaultMaxBytes, kDefaultStepFactor);
  CHECK(defaults.size() == 25);
  CHECK(defaults.back() == 134217728);
  // No overflow at the top of size_t.
  const auto all = size_sequence(1, std::numeric_limits<std::size_t>::max(), 2);
  CHECK(all.size() == 64);
  CHECK(all.back() == std::size_t{1} << 63);
}

TEST_CASE("bandwidths: nccl-tests' algbw = bytes / time and busbw = algbw * 2(n-1)/n") {
  CHECK(algorithm_bandwidth_gbs(1'000'000'000, 1.0) == 1.0);
  CHECK(algorithm_bandwidth_gbs(500'000'000, 0.25) == 2.0);
  CHECK(algorithm_bandwidth_gbs(8, 0.0) == 0.0);  // no time, no bandwidth (not infinity)
  CHECK(algorithm_bandwidth_gbs(8, -1.0) == 0.0);
  // 128 MiB in 10 ms: 13.4217728 GB/s.
  CHECK(algorithm_bandwidth_gbs(134217728, 0.01) == doctest::Approx(13.4217728).epsilon(1e-15));

  CHECK(allreduce_bus_bandwidth_gbs(10.0, 1) == 0.0);   // one rank moves nothing
  CHECK(allreduce_bus_bandwidth_gbs(10.0, 2) == 10.0);  // 2·1/2 = 1
  CHECK(allreduce_bus_bandwidth_gbs(12.0, 4) == 18.0);  // 2·3/4 = 1.5
  CHECK(allreduce_bus_bandwidth_gbs(8.0, 8) == 14.0);   // 2·7/8 = 1.75
  CHECK(allreduce_bus_bandwidth_gbs(10.0, 0) == 0.0);
}

TEST_CASE("settings: defaults are nccl-tests', and sizes out of order or range are refused") {
  TrainOptions o;
  o.benchmark = "allreduce";
  const AllreduceSettings d = allreduce_settings(o);
  CHECK(d.min_bytes == 8);
  CHECK(d.max_bytes == 134217728);
  CHECK(d.step_factor == 2);
  CHECK(d.iterations == 20);
  CHECK(d.warmup_iterations == 5);

  const auto error = [](auto change) {
    TrainOptions options;
    options.benchmark = "allreduce";
    change(options);
    try {
      (void)allreduce_settings(options);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  CHECK(error([](TrainOptions& x) { x.min_bytes = 2; }) ==
        "--min-bytes 2 is less than one float (4 bytes)");
  CHECK(error([](TrainOptions& x) { x.min_bytes = 64, x.max_bytes = 32; }) ==
        "--max-bytes 32 is less than --min-bytes 64");
  CHECK(error([](TrainOptions& x) { x.max_bytes = (std::size_t{4} << 30) + 1; }) ==
        "--max-bytes 4294967297 is more than 4G, the largest message");
  CHECK(error([](TrainOptions& x) { x.step_factor = 1; }) == "--step-factor must be at least 2");
  CHECK(error([](TrainOptions& x) { x.iterations = 0; }) == "--iterations must be at least 1");
  CHECK(error([](TrainOptions& x) { x.warmup_iterations = -1; }) ==
        "--warmup-iterations must not be negative");
  CHECK(error([](TrainOptions& x) { x.min_bytes = 4, x.max_bytes = 4, x.warmup_iterations = 0; }) ==
        "<no error>");
}

TEST_CASE("the printed lines: a # header, # column lines, fixed-width rows, # footer") {
  AllreduceInfo info;
  info.transport = "mpi";
  info.backend = "cpu";
  info.np = 2;
  info.settings.max_bytes = 1048576;
  CHECK(format_allreduce_header(info) ==
        "# scalebench-train benchmark=allreduce transport=mpi np=2 backend=cpu type=float op=sum "
        "in_place=yes min_bytes=8 max_bytes=1048576 step_factor=2 warmup_iterations=5 "
        "iterations=20 time=mean_over_ranks");
  info.hosts = "node1:1,node2:1";
  info.rank_hosts = "node1,node2";
  CHECK(format_allreduce_header(info).ends_with(
      " time=mean_over_ranks hosts=node1:1,node2:1 rank_hosts=node1,node2"));
  CHECK(format_allreduce_columns() ==
        std::vector<std::string>{
            "#        size         count    type   redop        time     algbw     busbw  #wrong",
            "#         (B)    (elements)                        (us)    (GB/s)    (GB/s)"});

  AllreduceRow row;
  row.bytes = 1048576;
  row.count = 262144;
  row.seconds = 123.4564e-6;
  row.algbw_gbs = 8.49341;
  row.busbw_gbs = 8.49349;
  CHECK(format_allreduce_row(row) ==
        "      1048576        262144   float     sum     123.456    8.4934    8.4935       0");
  // Wider values push the columns right but never run two fields together.
  row.bytes = 4294967296;
  row.count = 1073741824;
  row.seconds = 12345.678;
  row.algbw_gbs = 123456.5;
  row.busbw_gbs = 0.0;
  row.wrong = 1073741824;
  CHECK(format_allreduce_row(row) ==
        "   4294967296    1073741824   float     sum 12345678000.000 123456.5000    0.0000 "
        "1073741824");

  AllreduceSummary ok;
  ok.average_busbw_gbs = 2.55136;
  CHECK(format_allreduce_footer(ok) == std::vector<std::string>{"# Out of bounds values : 0 OK",
                                                                "# Avg bus bandwidth    : 2.5514"});
  AllreduceSummary failed;
  failed.wrong = 3;
  CHECK(format_allreduce_footer(failed)[0] == "# Out of bounds values : 3 FAILED");
}

namespace {

// An allreduce that takes 1 ns per float (4 GB/s) and reports the elements it was told to get
// wrong, recording every call.
class ScriptedAllreduce final : public AllreduceBenchmark {
 public:
  std::size_t wrong_at = 0;  // count whose check reports one wrong element
  std::vector<std::string> calls;

  std::string_view name() const override { return "scripted"; }
  std::size_t check(std::size_t n) override {
    calls.push_back("check " + std::to_string(n));
    return n == wrong_at ? 1 : 0;
  }
  double time(std::size_t n, int warmup, int iterations) override {
    calls.push_back("time " + std::to_string(n) + " " + std::to_string(warmup) + " " +
                    std::to_string(iterations));
    return static_cast<double>(n) * 1e-9;
  }
};

}  // namespace

TEST_CASE("the loop: warm-up at max and min, then check and time each size, rows and footer") {
  AllreduceInfo info;
  info.transport = "scripted";
  info.backend = "cpu";
  info.settings.min_bytes = 10;  // rounded down to 2 floats = 8 bytes
  info.settings.max_bytes = 160;
  info.settings.step_factor = 4;
  info.settings.iterations = 3;
  info.settings.warmup_iterations = 1;
  ScriptedAllreduce bench;
  std::vector<std::string> lines;
  const AllreduceSummary s =
      benchmark_allreduce(bench, info, [&](std::string_view l) { lines.emplace_back(l); });

  CHECK(bench.calls == std::vector<std::string>{"time 40 1 1", "time 2 1 1", "check 2",
                                                "time 2 1 3", "check 10", "time 10 1 3", "check 40",
                                                "time 40 1 3"});
  REQUIRE(s.rows.size() == 3);
  CHECK(s.rows[0].bytes == 8);
  CHECK(s.rows[0].count == 2);
  CHECK(s.rows[1].bytes == 40);
  CHECK(s.rows[2].bytes == 160);
  CHECK(s.rows[2].seconds == doctest::Approx(40e-9));
  CHECK(s.rows[2].algbw_gbs == doctest::Approx(4.0));
  CHECK(s.rows[2].busbw_gbs == 0.0);  // one process
  CHECK(s.wrong == 0);
  CHECK(s.average_busbw_gbs == 0.0);

  REQUIRE(lines.size() == 9);
  CHECK(lines[0] == format_allreduce_header(info));
  CHECK(lines[1] == "#");
  CHECK(lines[2] == format_allreduce_columns()[0]);
  CHECK(lines[3] == format_allreduce_columns()[1]);
  CHECK(lines[4] ==
        "            8             2   float     sum       0.002    4.0000    0.0000       0");
  CHECK(lines[6] ==
        "          160            40   float     sum       0.040    4.0000    0.0000       0");
  CHECK(lines[7] == "# Out of bounds values : 0 OK");
  CHECK(lines[8] == "# Avg bus bandwidth    : 0.0000");

  ScriptedAllreduce broken;
  broken.wrong_at = 10;
  lines.clear();
  const AllreduceSummary bad =
      benchmark_allreduce(broken, info, [&](std::string_view l) { lines.emplace_back(l); });
  CHECK(bad.wrong == 1);
  CHECK(bad.rows[1].wrong == 1);
  CHECK(lines[5].substr(lines[5].size() - 2) == " 1");
  CHECK(lines[7] == "# Out of bounds values : 1 FAILED");
}

namespace {

class FakeBackend final : public Backend {
 public:
  explicit FakeBackend(bool has_benchmark) : has_benchmark_(has_benchmark) {}
  std::string_view name() const override { return "fake"; }
  std::string description() const override { return "a test backend"; }
  int device_count() const override { return 1; }
  void scale(std::span<float>, float) const override {}
  std::unique_ptr<Model> make_model(const ModelSpec&, const SgdOptions&,
                                    const BackendOptions&) const override {
    return nullptr;
  }
  std::unique_ptr<AllreduceBenchmark> make_allreduce_benchmark(const ProcessGroup&) const override {
    if (!has_benchmark_) return nullptr;
    return std::make_unique<ScriptedAllreduce>();
  }

 private:
  bool has_benchmark_;
};

}  // namespace

TEST_CASE("which allreduce: the backend's own, MPI for cpu, a clear error otherwise") {
  const ProcessGroup group;
  CHECK(make_allreduce_benchmark(FakeBackend(true), group)->name() == "scripted");
  // The cpu backend has none of its own: MPI over host memory ("none" without a launcher).
  CHECK(make_allreduce_benchmark(find_backend("cpu"), group)->name() == "none");
  try {
    (void)make_allreduce_benchmark(FakeBackend(false), group);
    FAIL("no error");
  } catch (const BackendError& e) {
    CHECK(std::string(e.what()) ==
          "backend 'fake' has no allreduce benchmark of its own; use --backend cpu to time MPI "
          "over host memory");
  }
}

TEST_CASE("run_allreduce_benchmark in one process: every size right, the summary returned") {
  TrainOptions o;
  o.benchmark = "allreduce";
  o.max_bytes = 1024;
  o.step_factor = 4;
  o.iterations = 2;
  o.warmup_iterations = 1;
  const AllreduceSummary s = run_allreduce_benchmark(o);
  CHECK(s.info.transport == "none");
  CHECK(s.info.backend == "cpu");
  CHECK(s.info.np == 1);
  CHECK(s.rows.size() == 4);  // 8, 32, 128, 512
  CHECK(s.wrong == 0);
}
