#include "orchestrator/provenance.hpp"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "util/text.hpp"

extern char** environ;  // NOLINT: POSIX

namespace scalebench::orchestrator {
namespace {

namespace fs = std::filesystem;
using util::trim;

constexpr std::string_view kVariablePrefixes[] = {"OMP_",
                                                  "OMPI_MCA_",
                                                  "PMIX_MCA_",
                                                  "NCCL_",
                                                  "SLURM_",
                                                  "UCX_",
                                                  "KMP_",
                                                  "MKL_",
                                                  "DNNL_",
                                                  "ONEDNN_",
                                                  "MALLOC_",
                                                  "TORCH_",
                                                  "NVIDIA_TF32_OVERRIDE"};
constexpr std::string_view kVariableNames[] = {"CUDA_VISIBLE_DEVICES", "PYTHONUNBUFFERED",
                                               "LD_PRELOAD", "MASTER_ADDR", "MASTER_PORT"};
constexpr auto kToolTimeout = std::chrono::seconds(10);
constexpr std::size_t kMaxValueBytes = 4096;  // a provenance value is a version, not a log

// The first `lines` non-empty lines of a command's stdout, or why there are none.
struct ToolAnswer {
  bool ok = false;
  std::vector<std::string> lines;
  std::string why;
};

ToolAnswer ask(Executor& executor, std::vector<std::string> argv, std::size_t lines = 1) {
  ToolAnswer answer;
  LaunchSpec spec{std::move(argv), {}, kToolTimeout};
  std::string stderr_first;
  const auto outcome = executor.execute(spec, [&](StampedLine&& line) {
    const auto text = std::string(trim(line.text));
    if (text.empty()) return;
    if (line.stream == Stream::Stdout && answer.lines.size() < lines)
      answer.lines.push_back(text.substr(0, kMaxValueBytes));
    else if (line.stream == Stream::Stderr && stderr_first.empty())
      stderr_first = text.substr(0, 300);
  });
  if (!outcome.launch_error.empty())
    answer.why = outcome.launch_error;
  else if (outcome.timed_out)
    answer.why = fmt::format("no answer within {} s", kToolTimeout.count());
  else if (outcome.exit_code != 0)
    answer.why = fmt::format("exit code {}{}", outcome.exit_code.value_or(-1),
                             stderr_first.empty() ? "" : ": " + stderr_first);
  else if (answer.lines.empty())
    answer.why = "printed nothing";
  answer.ok = answer.why.empty();
  return answer;
}

std::string read_text(const std::string& path, std::size_t limit = 1 << 20) {
  std::ifstream in(path, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// "model name : Intel(R) Xeon(R) ..." -> the value of the first such line.
std::string field_of(const std::string& text, std::string_view key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon != std::string::npos && trim(std::string_view(line).substr(0, colon)) == key)
      return std::string(trim(std::string_view(line).substr(colon + 1)));
  }
  return "";
}

// The #define NAME value of a C header, "" when absent.
std::string define_of(const std::string& text, std::string_view name) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string hash, key, value;
    words >> hash >> key >> value;
    if (hash == "#define" && key == name) return value;
  }
  return "";
}

}  // namespace

std::vector<std::string> python_of(const std::string& program) {
  const auto name = fs::path(program).filename().string();
  if (name.rfind("python", 0) == 0) return {program};
  std::string first = read_text(program, 256);
  if (first.rfind("#!", 0) != 0) return {};
  first = first.substr(2, first.find('\n') - 2);
  std::istringstream words(first);
  std::vector<std::string> argv;
  for (std::string word; words >> word;) argv.push_back(word);
  if (argv.empty()) return {};
  const auto interpreter = fs::path(argv.back()).filename().string();
  if (interpreter.rfind("python", 0) != 0) return {};
  if (fs::path(argv[0]).filename() == "env") return {"/usr/bin/env", argv.back()};
  return {argv[0]};
}

namespace {

std::string uname_text() {
  struct utsname u {};
  if (::uname(&u) != 0) return "unknown";
  return fmt::format("{} {} {}", u.sysname, u.release, u.machine);
}

// Does any run start our trainer with --backend cuda?
bool uses_cuda_backend(const std::vector<RunPlan>& plans) {
  for (const auto& plan : plans) {
    const auto& argv = plan.launch.argv;
    for (std::size_t i = 0; i < argv.size(); ++i)
      if (argv[i] == "--backend=cuda" ||
          (argv[i] == "--backend" && i + 1 < argv.size() && argv[i + 1] == "cuda"))
        return true;
  }
  return false;
}

// CUDA's, cuDNN's and NCCL's versions from the toolkit's files, where present.
void add_cuda_libraries(const ProvenanceSources& sources, std::map<std::string, std::string>& out) {
  if (const auto version = read_text(sources.cuda_root + "/version.json"); !version.empty()) {
    const auto json = nlohmann::json::parse(version, nullptr, false);
    if (!json.is_discarded() && json.contains("cuda") && json["cuda"].contains("version") &&
        json["cuda"]["version"].is_string())
      out["cuda"] = json["cuda"]["version"].get<std::string>();
  }
  for (const auto* header : {"/include/cudnn_version.h", "/include/cudnn.h"}) {
    const auto text = read_text(sources.cuda_root + header);
    const auto major = define_of(text, "CUDNN_MAJOR");
    if (!major.empty()) {
      out["cudnn"] =
          major + "." + define_of(text, "CUDNN_MINOR") + "." + define_of(text, "CUDNN_PATCHLEVEL");
      break;
    }
  }
  if (const auto text = read_text(sources.cuda_root + "/include/nccl.h"); !text.empty()) {
    const auto major = define_of(text, "NCCL_MAJOR");
    if (!major.empty())
      out["nccl"] =
          major + "." + define_of(text, "NCCL_MINOR") + "." + define_of(text, "NCCL_PATCH");
  }
}

}  // namespace

std::string local_host_name() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0 || buffer[0] == '\0') return "unknown-host";
  return buffer;
}

bool is_provenance_variable(std::string_view name) {
  for (const auto prefix : kVariablePrefixes)
    if (name.substr(0, prefix.size()) == prefix) return true;
  return std::find(std::begin(kVariableNames), std::end(kVariableNames), name) !=
         std::end(kVariableNames);
}

db::Provenance collect_instance_provenance(const Experiment& experiment,
                                           const std::vector<RunPlan>& plans, Executor& executor,
                                           const ProvenanceSources& sources) {
  std::map<std::string, std::string> out;
  out["host"] = local_host_name();
  out["os"] = uname_text();
  out["scalebench_version"] = SCALEBENCH_VERSION;
  const auto cpuinfo = read_text(sources.cpuinfo);
  if (auto model = field_of(cpuinfo, "model name"); !model.empty()) out["cpu_model"] = model;
  out["cpu_count"] = std::to_string(::sysconf(_SC_NPROCESSORS_ONLN));
  if (const auto total = field_of(read_text(sources.meminfo), "MemTotal"); !total.empty()) {
    // "131072000 kB"
    out["memory_bytes"] = std::to_string(std::stoll("0" + total.substr(0, total.find(' '))) * 1024);
  }

  // Launchers and interpreters the matrix uses, each asked once.
  std::set<std::string> launchers;
  std::set<std::vector<std::string>> pythons;
  for (const auto& plan : plans) {
    if (plan.launch.argv.empty()) continue;
    const auto tool = fs::path(plan.launch.argv[0]).filename().string();
    if (tool == "mpirun" || tool == "mpiexec" || tool == "srun" || tool == "torchrun")
      launchers.insert(tool);
    // The program: the first argument that names a file after the launcher's options is not
    // known in general; the plan's trainer program is what the file said.
    for (const auto& arg : plan.launch.argv) {
      if (arg.find('/') == std::string::npos || !fs::is_regular_file(arg)) continue;
      if (auto python = python_of(arg); !python.empty()) pythons.insert(python);
      break;
    }
  }
  for (const auto& tool : launchers) {
    const auto key = tool == "srun" ? "slurm" : tool == "torchrun" ? "torchrun" : "mpi";
    if (tool == "torchrun") continue;  // its version is torch's (below)
    const auto answer = ask(executor, {tool, "--version"});
    out[key] = answer.ok ? answer.lines[0] : "unknown (" + tool + " --version: " + answer.why + ")";
  }
  for (const auto& python : pythons) {
    auto argv = python;
    argv.insert(argv.end(), {"-c",
                             "import platform\nprint(platform.python_version())\ntry:\n"
                             "  import torch\n  print(torch.__version__)\nexcept Exception:\n"
                             "  print('not installed')"});
    const auto answer = ask(executor, argv, 2);
    const auto where = fmt::format("{}", fmt::join(python, " "));
    const auto add = [&](const std::string& key, const std::string& value) {
      auto& slot = out[key];
      slot += (slot.empty() ? "" : "; ") + value;
    };
    if (answer.ok && answer.lines.size() == 2) {
      add("python", answer.lines[0] + " (" + where + ")");
      add("torch", answer.lines[1] + " (" + where + ")");
    } else {
      add("python", "unknown (" + where + ": " + answer.why + ")");
    }
  }

  // GPUs, when the machine has the driver's tool; CUDA's libraries from their headers.
  if (fs::exists("/usr/bin/nvidia-smi") || fs::exists("/usr/local/bin/nvidia-smi")) {
    const auto answer = ask(
        executor, {"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"}, 64);
    if (answer.ok) out["gpus"] = fmt::format("{}", fmt::join(answer.lines, "; "));
  }
  // CUDA's libraries only where a run uses our trainer's cuda backend: CPU runs do not depend on
  // them, and other programs bring their own (PyTorch's wheels).
  if (uses_cuda_backend(plans)) add_cuda_libraries(sources, out);

  // The commit of the experiment file's repository, "-dirty" when tracked files changed.
  if (!experiment.source_path.empty()) {
    const auto dir = fs::absolute(experiment.source_path).parent_path().string();
    const auto head = ask(executor, {"git", "-C", dir, "rev-parse", "HEAD"});
    if (head.ok) {
      // `status --porcelain` prints a line per changed tracked file: any line means dirty.
      const auto changed =
          ask(executor, {"git", "-C", dir, "status", "--porcelain", "--untracked-files=no"});
      out["git_commit"] = head.lines[0] + (changed.ok ? "-dirty" : "");
    }
  }

  std::vector<std::string> environment = sources.environment;
  if (environment.empty())
    for (char** entry = environ; entry && *entry; ++entry) environment.emplace_back(*entry);
  for (const auto& entry : environment) {
    const auto equals = entry.find('=');
    if (equals == std::string::npos) continue;
    const auto name = entry.substr(0, equals);
    if (is_provenance_variable(name)) out["env." + name] = entry.substr(equals + 1, kMaxValueBytes);
  }
  return db::Provenance(out.begin(), out.end());
}

db::Provenance run_provenance(const RunPlan& plan, const RunAnalysis& analysis,
                              const std::string& local_host) {
  db::Provenance out;
  for (const auto& [name, value] : plan.launch.env)
    if (is_provenance_variable(name))
      out.emplace_back("env." + name, value.substr(0, kMaxValueBytes));
  if (analysis.hosts)
    out.emplace_back("hosts", analysis.hosts->substr(0, kMaxValueBytes));
  else if (plan.launcher == Launcher::Single || plan.launcher == Launcher::Torchrun)
    out.emplace_back("hosts", fmt::format("{}:{}", local_host, plan.np));
  if (analysis.rank_hosts)
    out.emplace_back("rank_hosts", analysis.rank_hosts->substr(0, kMaxValueBytes));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace scalebench::orchestrator
