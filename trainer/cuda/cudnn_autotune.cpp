// cuDNN's graph API for convolutions: the engine configurations the heuristics propose, their
// plans finalized and timed once per problem (like PyTorch's cudnn.benchmark), the fastest kept
// in a ConvPlanCache (trainer/cuda/cudnn_graph.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <utility>

#include "trainer/cuda/check.hpp"
#include "trainer/cuda/cudnn_graph.hpp"
#include "trainer/cuda/device.hpp"
#include "trainer/errors.hpp"

namespace scalebench::trainer::cuda {
namespace {

// Deprecated in cuDNN 9: libraries before 9.8 require it on a plan, later ones ignore it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
constexpr cudnnBackendAttributeName_t kPlanHandle = CUDNN_ATTR_EXECUTION_PLAN_HANDLE;
#pragma GCC diagnostic pop

// The engine configurations the heuristics of `mode` propose (none where the mode cannot
// handle the graph: that is said in the report, not thrown).
std::vector<BackendDescriptor> heuristic_configs(const BackendDescriptor& graph,
                                                 cudnnBackendHeurMode_t mode, const char* name,
                                                 AutotuneReport* report) {
  BackendDescriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heur.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  if (const cudnnStatus_t status = heur.try_finalize(); status != CUDNN_STATUS_SUCCESS) {
    if (report)
      report->lines.push_back(fmt::format("heuristics {}: {}", name, graph_status_text(status)));
    return {};
  }
  std::int64_t count = 0;
  SB_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
  std::vector<BackendDescriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(configs.back().get());
  }
  std::int64_t returned = 0;
  if (count > 0) {
    SB_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, raw.data()));
  }
  configs.resize(static_cast<std::size_t>(std::clamp<std::int64_t>(returned, 0, count)));
  return configs;
}

struct EngineInfo {
  std::int64_t index = -1;
  bool tensor_cores = false, down_converts = false, nondeterministic = false,
       runtime_compiled = false;
  std::string name() const {
    std::string notes;
    auto add = [&](bool on, const char* what) {
      if (on) notes += notes.empty() ? what : fmt::format(", {}", what);
    };
    add(tensor_cores, "tensor cores");
    add(runtime_compiled, "runtime compiled");
    add(nondeterministic, "nondeterministic");
    return notes.empty() ? fmt::format("engine {}", index)
                         : fmt::format("engine {} ({})", index, notes);
  }
};

EngineInfo engine_info(const BackendDescriptor& config) {
  BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = engine.get();
  std::int64_t count = 0;
  SB_CHECK(cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &raw));
  EngineInfo info;
  SB_CHECK(cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
                                    &count, &info.index));
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> numerical{};
  count = 0;
  if (cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               numerical.size(), &count,
                               numerical.data()) == CUDNN_STATUS_SUCCESS) {
    for (std::int64_t i = 0; i < std::min<std::int64_t>(count, numerical.size()); ++i) {
      info.tensor_cores |= numerical[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
      info.down_converts |= numerical[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
      info.nondeterministic |= numerical[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC;
    }
  }
  std::array<cudnnBackendBehaviorNote_t, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT> behavior{};
  count = 0;
  if (cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                               behavior.size(), &count, behavior.data()) == CUDNN_STATUS_SUCCESS) {
    for (std::int64_t i = 0; i < std::min<std::int64_t>(count, behavior.size()); ++i) {
      info.runtime_compiled |= behavior[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
    }
  }
  return info;
}

std::size_t workspace_limit(const AutotuneOptions& options) {
  if (options.workspace_limit > 0) return options.workspace_limit;
  std::size_t free_bytes = 0, total_bytes = 0;
  SB_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes / 2;
}

}  // namespace

std::vector<ConvPlan> candidate_plans(cudnnHandle_t handle, const ConvProblem& problem,
                                      const AutotuneOptions& options, AutotuneReport* report) {
  const std::string key = problem.key();  // validates
  if (report) report->key = key;
  std::shared_ptr<const GraphParts> graph = build_conv_graph(problem, handle);
  std::vector<BackendDescriptor> configs =
      heuristic_configs(graph->back(), CUDNN_HEUR_MODE_A, "mode A", report);
  const std::size_t from_heuristics = configs.size();
  for (BackendDescriptor& c :
       heuristic_configs(graph->back(), CUDNN_HEUR_MODE_FALLBACK, "fallback", report)) {
    configs.push_back(std::move(c));
  }
  if (report) {
    report->heuristic_configs = static_cast<int>(from_heuristics);
    report->fallback_configs = static_cast<int>(configs.size() - from_heuristics);
  }
  const std::size_t limit = workspace_limit(options);
  const bool plan_needs_handle = cudnnGetVersion() < 90800;
  std::set<std::int64_t> heuristic_engines;
  std::vector<ConvPlan> plans;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (static_cast<int>(plans.size()) >= options.max_candidates) break;
    const EngineInfo info = engine_info(configs[i]);
    const char* source = i < from_heuristics ? "mode A" : "fallback";
    auto skip = [&](const std::string& why) {
      if (report)
        report->lines.push_back(fmt::format("{} {}: skipped: {}", source, info.name(), why));
    };
    if (i < from_heuristics) {
      heuristic_engines.insert(info.index);
    } else if (heuristic_engines.count(info.index) > 0) {
      continue;  // the heuristics proposed this engine already
    }
    if (info.down_converts) {
      skip("converts its inputs to a narrower type");
      continue;
    }
    if (options.deterministic && info.nondeterministic) {
      skip("not deterministic");
      continue;
    }
    BackendDescriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    plan.set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[i]);
    if (plan_needs_handle) plan.set(kPlanHandle, CUDNN_TYPE_HANDLE, 1, &handle);
    if (const cudnnStatus_t status = plan.try_finalize(); status != CUDNN_STATUS_SUCCESS) {
      skip(fmt::format("cannot be finalized: {}", graph_status_text(status)));
      continue;
    }
    std::int64_t workspace = 0, count = 0;
    SB_CHECK(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                      CUDNN_TYPE_INT64, 1, &count, &workspace));
    if (workspace < 0 || static_cast<std::size_t>(workspace) > limit) {
      skip(fmt::format("needs {} bytes of workspace, over the limit of {}", workspace, limit));
      continue;
    }
    plans.emplace_back(problem, graph, std::move(configs[i]), std::move(plan), workspace,
                       info.name());
  }
  if (report) report->finalized = static_cast<int>(plans.size());
  if (plans.empty()) {
    throw BackendError(
        fmt::format("backend cuda: cuDNN's graph API has no plan for {} ({} "
                    "configurations from the heuristics, {} from the fallback list)",
                    key, from_heuristics, configs.size() - from_heuristics));
  }
  return plans;
}

namespace {

// The median of `runs` timed executions of `plan` after one untimed one; negative when it
// fails to run (the reason in `why`).
float time_plan(cudnnHandle_t handle, cudaStream_t stream, const ConvPlan& plan,
                const ConvBuffers& buffers, void* workspace, std::size_t workspace_bytes, int runs,
                std::string& why) {
  cudaEvent_t start = nullptr, stop = nullptr;
  SB_CHECK(cudaEventCreate(&start));
  SB_CHECK(cudaEventCreate(&stop));
  std::vector<float> times;
  try {
    plan.execute(handle, buffers, workspace, workspace_bytes);
    for (int i = 0; i < runs; ++i) {
      SB_CHECK(cudaEventRecord(start, stream));
      plan.execute(handle, buffers, workspace, workspace_bytes);
      SB_CHECK(cudaEventRecord(stop, stream));
      SB_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      SB_CHECK(cudaEventElapsedTime(&ms, start, stop));
      times.push_back(ms);
    }
  } catch (const BackendError& e) {
    why = e.what();
    times.clear();
  }
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  if (times.empty()) return -1.0f;
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

ConvPlan fastest_plan(cudnnHandle_t handle, std::vector<ConvPlan> candidates,
                      const ConvBuffers& buffers, const AutotuneOptions& options,
                      AutotuneReport* report) {
  if (candidates.empty()) throw BackendError("conv graph: no candidate plan to time");
  cudaStream_t stream = nullptr;
  SB_CHECK(cudnnGetStream(handle, &stream));
  SB_CHECK(cudaStreamSynchronize(stream));
  std::size_t most = 0;
  for (const ConvPlan& p : candidates) most = std::max(most, p.workspace_bytes());
  DeviceArray<unsigned char> workspace(most);
  std::size_t best = candidates.size();
  float best_ms = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    std::string why;
    const float ms = time_plan(handle, stream, candidates[i], buffers, workspace.data(),
                               workspace.bytes(), std::max(1, options.timing_runs), why);
    if (ms < 0) {
      if (report)
        report->lines.push_back(fmt::format("{}: failed to run: {}", candidates[i].engine(), why));
      continue;
    }
    if (report) {
      ++report->timed;
      report->lines.push_back(fmt::format("{}: {:.4f} ms, workspace {} bytes",
                                          candidates[i].engine(), ms,
                                          candidates[i].workspace_bytes()));
    }
    if (best == candidates.size() || ms < best_ms) {
      best = i;
      best_ms = ms;
    }
  }
  if (best == candidates.size()) {
    throw BackendError(fmt::format("conv graph {}: none of {} finalized plans ran",
                                   candidates.front().problem().key(), candidates.size()));
  }
  ConvPlan chosen = std::move(candidates[best]);
  chosen.set_tuned_ms(best_ms);
  if (report) report->lines.push_back(fmt::format("chosen: {}", chosen.engine()));
  return chosen;
}

// ---- the cache ----

std::shared_ptr<const ConvPlan> ConvPlanCache::get(cudnnHandle_t handle, const ConvProblem& problem,
                                                   const ConvBuffers& buffers,
                                                   const AutotuneOptions& options) {
  int device = 0;
  SB_CHECK(cudaGetDevice(&device));
  const std::string key =
      fmt::format("{}:{}{}", device, problem.key(), options.deterministic ? " deterministic" : "");
  const std::lock_guard lock(mutex_);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second;
  AutotuneReport report;
  std::vector<ConvPlan> candidates = candidate_plans(handle, problem, options, &report);
  auto plan = std::make_shared<const ConvPlan>(
      fastest_plan(handle, std::move(candidates), buffers, options, &report));
  ++autotunes_;
  reports_.push_back(std::move(report));
  return plans_.emplace(key, std::move(plan)).first->second;
}

std::size_t ConvPlanCache::size() const {
  const std::lock_guard lock(mutex_);
  return plans_.size();
}

int ConvPlanCache::autotunes() const {
  const std::lock_guard lock(mutex_);
  return autotunes_;
}

std::vector<AutotuneReport> ConvPlanCache::reports() const {
  const std::lock_guard lock(mutex_);
  return reports_;
}

}  // namespace scalebench::trainer::cuda
