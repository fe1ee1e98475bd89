#include "trainer/allreduce_bench.hpp"

#include <fmt/format.h>
#include <strings.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "trainer/backend_registry.hpp"
#include "trainer/distributed.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer {
namespace {

// POSIX strncasecmp over two views of equal length.
bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// The column layout shared by the `#` header lines and the rows. Fields are separated by at least
// one space whatever their width, so `grep -v '^#' | awk` and the orchestrator split them safely.
constexpr const char* kColumns = "{:>13} {:>13} {:>7} {:>7} {:>11} {:>9} {:>9} {:>7}";

std::string column_line(const char* a, const char* b, const char* c, const char* d, const char* e,
                        const char* f, const char* g, const char* h) {
  std::string line = fmt::format(fmt::runtime(kColumns), a, b, c, d, e, f, g, h);
  line[0] = '#';  // the size column is right-aligned in 13, so this is always a space
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

}  // namespace

std::size_t parse_size(std::string_view text, std::string_view option) {
  const auto bad = [&] {
    return UsageError(
        fmt::format("{}: '{}' is not a size in bytes (a positive integer, optionally with K, M or "
                    "G for powers of 1024: 8, 64K, 128M, 1G)",
                    option, text));
  };
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end == text.data() || value == 0) throw bad();
  std::string_view unit = text.substr(static_cast<std::size_t>(end - text.data()));
  int shift = 0;
  if (!unit.empty()) {
    switch (std::tolower(static_cast<unsigned char>(unit.front()))) {
      case 'k':
        shift = 10;
        break;
      case 'm':
        shift = 20;
        break;
      case 'g':
        shift = 30;
        break;
      default:
        break;
    }
    if (shift != 0) unit.remove_prefix(1);
    const bool bytes_suffix = unit.empty() || equals_ignoring_case(unit, "b") ||
                              (shift != 0 && equals_ignoring_case(unit, "ib"));
    if (!bytes_suffix) throw bad();
  }
  if (value > (std::numeric_limits<std::size_t>::max() >> shift)) throw bad();
  return value << shift;
}

std::vector<std::size_t> size_sequence(std::size_t min_bytes, std::size_t max_bytes, int factor) {
  std::vector<std::size_t> sizes;
  if (min_bytes == 0 || factor < 2) {
    if (min_bytes <= max_bytes) sizes.push_back(min_bytes);
    return sizes;
  }
  const auto f = static_cast<std::size_t>(factor);
  for (std::size_t size = min_bytes; size <= max_bytes; size *= f) {
    sizes.push_back(size);
    if (size > max_bytes / f) break;  // the next one is past max (or would overflow)
  }
  return sizes;
}

double algorithm_bandwidth_gbs(std::size_t bytes, double seconds) {
  if (!(seconds > 0.0)) return 0.0;
  return static_cast<double>(bytes) / 1.0e9 / seconds;
}

double allreduce_bus_bandwidth_gbs(double algbw_gbs, int ranks) {
  if (ranks < 1) return 0.0;
  const double n = ranks;
  return algbw_gbs * 2.0 * (n - 1.0) / n;
}

AllreduceSettings allreduce_settings(const TrainOptions& o) {
  AllreduceSettings s;
  s.min_bytes = o.min_bytes.value_or(kDefaultMinBytes);
  s.max_bytes = o.max_bytes.value_or(kDefaultMaxBytes);
  s.step_factor = o.step_factor.value_or(kDefaultStepFactor);
  s.iterations = o.iterations.value_or(kDefaultIterations);
  s.warmup_iterations = o.warmup_iterations.value_or(kDefaultWarmupIterations);
  if (s.min_bytes < sizeof(float)) {
    throw UsageError(fmt::format("--min-bytes {} is less than one float (4 bytes)", s.min_bytes));
  }
  if (s.max_bytes > kMaxAllreduceBytes) {
    throw UsageError(
        fmt::format("--max-bytes {} is more than 4G, the largest message", s.max_bytes));
  }
  if (s.max_bytes < s.min_bytes) {
    throw UsageError(
        fmt::format("--max-bytes {} is less than --min-bytes {}", s.max_bytes, s.min_bytes));
  }
  if (s.step_factor < 2) throw UsageError("--step-factor must be at least 2");
  if (s.iterations < 1) throw UsageError("--iterations must be at least 1");
  if (s.warmup_iterations < 0) throw UsageError("--warmup-iterations must not be negative");
  return s;
}

std::string format_allreduce_header(const AllreduceInfo& i) {
  const AllreduceSettings& s = i.settings;
  return fmt::format(
      "# scalebench-train benchmark=allreduce transport={} np={} backend={} type=float op=sum "
      "in_place=yes min_bytes={} max_bytes={} step_factor={} warmup_iterations={} iterations={} "
      "time=mean_over_ranks{}{}",
      i.transport, i.np, i.backend, s.min_bytes, s.max_bytes, s.step_factor, s.warmup_iterations,
      s.iterations, i.hosts.empty() ? "" : " hosts=" + i.hosts,
      i.rank_hosts.empty() ? "" : " rank_hosts=" + i.rank_hosts);
}

std::vector<std::string> format_allreduce_columns() {
  return {column_line("size", "count", "type", "redop", "time", "algbw", "busbw", "#wrong"),
          column_line("(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "")};
}

std::string format_allreduce_row(const AllreduceRow& r) {
  return fmt::format(fmt::runtime(kColumns), r.bytes, r.count, "float", "sum",
                     fmt::format("{:.3f}", r.seconds * 1e6), fmt::format("{:.4f}", r.algbw_gbs),
                     fmt::format("{:.4f}", r.busbw_gbs), r.wrong);
}

std::vector<std::string> format_allreduce_footer(const AllreduceSummary& s) {
  return {fmt::format("# Out of bounds values : {} {}", s.wrong, s.wrong == 0 ? "OK" : "FAILED"),
          fmt::format("# Avg bus bandwidth    : {:.4f}", s.average_busbw_gbs)};
}

AllreduceSummary benchmark_allreduce(AllreduceBenchmark& benchmark, const AllreduceInfo& info,
                                     const std::function<void(std::string_view)>& print) {
  const AllreduceSettings& s = info.settings;
  const int np = dist::size();
  AllreduceSummary summary;
  summary.info = info;
  print(format_allreduce_header(info));
  print("#");
  for (const std::string& line : format_allreduce_columns()) print(line);

  const std::vector<std::size_t> sizes = size_sequence(s.min_bytes, s.max_bytes, s.step_factor);
  // nccl-tests' warm-up before the first row: the largest size (buffers allocated and touched,
  // the transport's large-message path set up), then the smallest.
  if (!sizes.empty()) {
    (void)benchmark.time(sizes.back() / sizeof(float), s.warmup_iterations, 1);
    (void)benchmark.time(sizes.front() / sizeof(float), s.warmup_iterations, 1);
  }
  double busbw_sum = 0.0;
  for (const std::size_t size : sizes) {
    AllreduceRow row;
    row.count = size / sizeof(float);
    row.bytes = row.count * sizeof(float);
    // Checked first: the check's allreduce also brings the buffer into memory before timing.
    const std::size_t wrong = benchmark.check(row.count);
    const double seconds = benchmark.time(row.count, s.warmup_iterations, s.iterations);
    // nccl-tests' default (-a 1): the time is the mean of the ranks' times; #wrong is the total.
    double sums[2] = {seconds, static_cast<double>(wrong)};
    dist::allreduce_sum(sums);
    row.seconds = sums[0] / np;
    row.wrong = static_cast<std::size_t>(std::llround(sums[1]));
    row.algbw_gbs = algorithm_bandwidth_gbs(row.bytes, row.seconds);
    row.busbw_gbs = allreduce_bus_bandwidth_gbs(row.algbw_gbs, np);
    print(format_allreduce_row(row));
    summary.wrong += row.wrong;
    busbw_sum += row.busbw_gbs;
    summary.rows.push_back(row);
  }
  if (!summary.rows.empty()) {
    summary.average_busbw_gbs = busbw_sum / static_cast<double>(summary.rows.size());
  }
  for (const std::string& line : format_allreduce_footer(summary)) print(line);
  return summary;
}

std::unique_ptr<AllreduceBenchmark> make_allreduce_benchmark(const Backend& backend,
                                                             const ProcessGroup& group) {
  std::unique_ptr<AllreduceBenchmark> benchmark = backend.make_allreduce_benchmark(group);
  if (benchmark) return benchmark;
  if (backend.name() == "cpu") return dist::make_mpi_allreduce_benchmark();
  throw BackendError(fmt::format(
      "backend '{}' has no allreduce benchmark of its own; use --backend cpu to time MPI over "
      "host memory",
      backend.name()));
}

AllreduceSummary run_allreduce_benchmark(const TrainOptions& options) {
  validate(options);
  AllreduceInfo info;
  info.settings = allreduce_settings(options);
  const Backend& backend = find_backend(options.backend);
  const std::unique_ptr<AllreduceBenchmark> benchmark =
      make_allreduce_benchmark(backend, dist::process_group());
  info.transport = std::string(benchmark->name());
  info.backend = std::string(backend.name());
  info.np = dist::size();
  const std::vector<std::string> rank_hosts = dist::rank_host_names();
  info.hosts = dist::hosts_summary(rank_hosts);
  info.rank_hosts = dist::rank_hosts_runs(rank_hosts);
  AllreduceSummary summary =
      benchmark_allreduce(*benchmark, info, [](std::string_view line) { dist::print0(line); });
  if (summary.wrong > 0) {
    throw TrainerError(fmt::format(
        "allreduce benchmark: {} elements were wrong after the sum (each should be np(np+1)/2 = "
        "{}); the {} allreduce is broken on this machine",
        summary.wrong, info.np * (info.np + 1) / 2, info.transport));
  }
  return summary;
}

}  // namespace scalebench::trainer
