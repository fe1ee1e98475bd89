#include "orchestrator/instance_setup.hpp"

#include <unistd.h>

#include <filesystem>
#include <random>
#include <thread>

#include "orchestrator/executor.hpp"
#include "orchestrator/provenance.hpp"
#include "orchestrator/runner.hpp"

namespace scalebench::orchestrator {
namespace {

namespace fs = std::filesystem;

// The interpreter torchrun runs a script with: its own (the first line of the torchrun on PATH).
std::string torchrun_python() {
  const auto torchrun = find_on_path("torchrun");
  if (torchrun.empty()) return "python3";
  const auto python = python_of(torchrun.string());
  if (python.empty()) return "python3";
  return python.back();  // {"/usr/bin/python3"}, or {"/usr/bin/env", "python3"}: through PATH
}

std::string host_name() {
  char buffer[256] = {};
  ::gethostname(buffer, sizeof buffer - 1);
  return buffer;
}

}  // namespace

std::string shipped_program(const std::string& name) {
  std::error_code error;
  const auto self = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto sibling = self.parent_path() / name;
    if (fs::exists(sibling)) return sibling.string();
  }
  return name;
}

ExpandOptions machine_expand_options(std::size_t max_runs) {
  ExpandOptions expand{shipped_program("scalebench-train"), ::geteuid() == 0};
  expand.max_runs = max_runs;
  expand.tag_wrapper = shipped_program("scalebench-tag");
  expand.torchrun_python = torchrun_python();
  return expand;
}

std::optional<std::uint64_t> choose_order_seed(const Experiment& experiment,
                                               const db::Database* database) {
  if (experiment.order != RunOrder::Randomized || experiment.seed) return std::nullopt;
  if (database)
    if (const auto latest = database->latest_instance_of_spec(db::spec_hash(experiment.spec_json)))
      if (latest->order_seed) return static_cast<std::uint64_t>(*latest->order_seed);
  return std::uint64_t{std::random_device{}()} << 32 | std::random_device{}();
}

db::ExperimentRecord instance_record(const Experiment& experiment, const std::string& source_path,
                                     std::optional<std::uint64_t> seed) {
  db::ExperimentRecord record;
  record.name = experiment.name;
  record.source_path = source_path;
  record.spec_json = experiment.spec_json;
  record.started_at = now_iso8601_utc();
  record.host = host_name();
  record.cpu_count = static_cast<int>(std::thread::hardware_concurrency());
  record.scalebench_version = SCALEBENCH_VERSION;
  record.factors_json = factors_json(experiment);
  record.run_order = std::string(run_order_name(experiment.order));
  if (seed) record.order_seed = static_cast<long long>(*seed);
  return record;
}

}  // namespace scalebench::orchestrator
