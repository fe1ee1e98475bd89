#include "trainer/distributed.hpp"

// The C API only: skip the deprecated C++ bindings, which would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace scalebench::trainer::dist {
namespace {

struct State {
  bool mpi = false;
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  std::string host;
};
State g_state;

std::string read_host_name() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return "unknown-host";
  return buffer;
}

// Every MPI call goes through this: on failure, say which call, where, on which host and rank,
// then take the whole job down so that no other rank waits forever in a collective.
void check_mpi(int rc, const char* call, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(rc, message, &length) != MPI_SUCCESS) length = 0;
  std::fprintf(stderr, "scalebench-train: error: %s failed at %s:%d on host %s, rank %d: %.*s\n",
               call, file, line, g_state.host.c_str(), g_state.rank, length, message);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

#define SB_MPI_CHECK(call) check_mpi((call), #call, __FILE__, __LINE__)

long env_long(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return -1;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  return (end != nullptr && *end == '\0') ? parsed : -1;
}

int checked_count(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX)) {
    std::fprintf(stderr, "scalebench-train: error: MPI buffer of %zu elements exceeds INT_MAX\n",
                 n);
    abort_all(1);
  }
  return static_cast<int>(n);
}

}  // namespace

bool launcher_detected() {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr) return true;
  if (std::getenv("PMI_SIZE") != nullptr) return true;
  if (std::getenv("PMIX_RANK") != nullptr) return true;
  // A batch script has SLURM_NTASKS too; only srun's step variables mean we were launched.
  long tasks = env_long("SLURM_STEP_NUM_TASKS");
  if (tasks < 0 && std::getenv("SLURM_STEP_ID") != nullptr) tasks = env_long("SLURM_NTASKS");
  return tasks > 1;
}

void init(int* argc, char*** argv) {
  g_state = State{};
  g_state.host = read_host_name();
  if (!launcher_detected()) return;  // a plain single process: MPI is never touched

  SB_MPI_CHECK(MPI_Init(argc, argv));
  g_state.mpi = true;
  // Errors come back as codes so that check_mpi can name the call before aborting.
  SB_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  SB_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_state.rank));
  SB_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_state.size));

  MPI_Comm node_comm = MPI_COMM_NULL;
  SB_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_state.rank,
                                   MPI_INFO_NULL, &node_comm));
  SB_MPI_CHECK(MPI_Comm_rank(node_comm, &g_state.local_rank));
  SB_MPI_CHECK(MPI_Comm_free(&node_comm));
}

void finalize() {
  if (!g_state.mpi) return;
  int finalized = 0;
  SB_MPI_CHECK(MPI_Finalized(&finalized));
  if (!finalized) SB_MPI_CHECK(MPI_Finalize());
  g_state.mpi = false;
}

void abort_all(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (g_state.mpi) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

bool using_mpi() { return g_state.mpi; }
int rank() { return g_state.rank; }
int size() { return g_state.size; }
int local_rank() { return g_state.local_rank; }
const std::string& host_name() {
  if (g_state.host.empty()) g_state.host = read_host_name();
  return g_state.host;
}

std::vector<std::string> rank_host_names() {
  constexpr int kWidth = 256;  // gethostname's names are shorter (HOST_NAME_MAX is 64)
  if (g_state.size == 1) return {host_name()};
  std::vector<char> names(static_cast<std::size_t>(kWidth) * static_cast<std::size_t>(size()));
  std::string mine = host_name().substr(0, kWidth - 1);
  mine.resize(kWidth, '\0');
  SB_MPI_CHECK(
      MPI_Allgather(mine.data(), kWidth, MPI_CHAR, names.data(), kWidth, MPI_CHAR, MPI_COMM_WORLD));
  std::vector<std::string> out;
  for (int r = 0; r < size(); ++r)
    out.emplace_back(names.data() + static_cast<std::ptrdiff_t>(r) * kWidth);
  return out;
}

std::string hosts_summary(const std::vector<std::string>& rank_hosts) {
  std::vector<std::pair<std::string, int>> counts;
  for (const std::string& name : rank_hosts) {
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& entry) { return entry.first == name; });
    if (it == counts.end())
      counts.emplace_back(name, 1);
    else
      ++it->second;
  }
  std::string out;
  for (const auto& [name, count] : counts)
    out += (out.empty() ? "" : ",") + name + ":" + std::to_string(count);
  return out;
}

std::string rank_hosts_runs(const std::vector<std::string>& rank_hosts) {
  std::string out;
  for (std::size_t r = 0; r < rank_hosts.size();) {
    std::size_t end = r + 1;
    while (end < rank_hosts.size() && rank_hosts[end] == rank_hosts[r]) ++end;
    out += (out.empty() ? "" : ",") + rank_hosts[r];
    if (end - r > 1) out += "*" + std::to_string(end - r);
    r = end;
  }
  return out;
}

void broadcast(std::span<float> data) {
  if (g_state.size == 1) return;
  SB_MPI_CHECK(MPI_Bcast(data.data(), checked_count(data.size()), MPI_FLOAT, 0, MPI_COMM_WORLD));
}

void broadcast_bytes(std::span<std::byte> data) {
  if (g_state.size == 1) return;
  SB_MPI_CHECK(MPI_Bcast(data.data(), checked_count(data.size()), MPI_BYTE, 0, MPI_COMM_WORLD));
}

ProcessGroup process_group() {
  ProcessGroup group;
  group.rank = rank();
  group.size = size();
  group.local_rank = local_rank();
  group.broadcast = [](std::span<std::byte> data) { broadcast_bytes(data); };
  return group;
}

void allreduce_sum(std::span<double> data) {
  if (g_state.size == 1) return;
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data.data(), checked_count(data.size()), MPI_DOUBLE,
                             MPI_SUM, MPI_COMM_WORLD));
}

void barrier() {
  if (g_state.size == 1) return;
  SB_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

struct GradientReducer::Requests {
  std::vector<MPI_Request> pending;  // one per bucket launched by MPI_Iallreduce this step
};

GradientReducer::GradientReducer(std::span<float> gradients, std::size_t bucket_bytes, bool overlap)
    : gradients_(gradients),
      buckets_(make_buckets(gradients.size(), bucket_bytes)),
      overlap_(overlap),
      requests_(std::make_unique<Requests>()) {
  requests_->pending.reserve(buckets_.size());
  // Fail at construction, not in the middle of a step, on a bucket MPI's int count cannot hold.
  if (g_state.size > 1 && !buckets_.empty())
    (void)checked_count(buckets_[0].end - buckets_[0].begin);
}

GradientReducer::~GradientReducer() {
  // A step abandoned by an exception: its requests still write into the buffer, so let them end
  // before the buffer can go away. Errors are moot here (the job is being torn down).
  if (!requests_->pending.empty() && g_state.mpi) {
    MPI_Waitall(static_cast<int>(requests_->pending.size()), requests_->pending.data(),
                MPI_STATUSES_IGNORE);
  }
}

void GradientReducer::gradients_ready(std::size_t offset) {
  if (!overlap_ || g_state.size == 1) return;
  const std::size_t complete = complete_buckets(buckets_, offset);
  for (; launched_ < complete; ++launched_) {
    const Bucket& b = buckets_[launched_];
    MPI_Request& request = requests_->pending.emplace_back(MPI_REQUEST_NULL);
    SB_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, gradients_.data() + b.begin,
                                checked_count(b.end - b.begin), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                &request));
  }
  // Open MPI progresses non-blocking collectives only inside MPI calls (no progress thread), so
  // each layer's callback gives the outstanding ones a turn.
  if (!requests_->pending.empty()) {
    int done = 0;
    SB_MPI_CHECK(MPI_Testall(static_cast<int>(requests_->pending.size()), requests_->pending.data(),
                             &done, MPI_STATUSES_IGNORE));
  }
}

void GradientReducer::finish() {
  if (g_state.size == 1) return;
  launched_early_ = launched_;
  if (overlap_) {
    // Whatever backward did not report (a model without the callback reports nothing) goes now,
    // all buckets in flight at once.
    gradients_ready(0);
    SB_MPI_CHECK(MPI_Waitall(static_cast<int>(requests_->pending.size()), requests_->pending.data(),
                             MPI_STATUSES_IGNORE));
  } else {
    for (const Bucket& b : buckets_) {
      SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, gradients_.data() + b.begin,
                                 checked_count(b.end - b.begin), MPI_FLOAT, MPI_SUM,
                                 MPI_COMM_WORLD));
    }
  }
  requests_->pending.clear();
  launched_ = 0;
  const float scale = 1.0f / static_cast<float>(g_state.size);
  for (float& x : gradients_) x *= scale;
}

namespace {

class MpiAllreduceBenchmark final : public AllreduceBenchmark {
 public:
  // A plain single process has no MPI: no transport at all.
  std::string_view name() const override { return g_state.mpi ? "mpi" : "none"; }

  std::size_t check(std::size_t n) override {
    float* data = buffer(n);
    std::fill(data, data + n, static_cast<float>(g_state.rank + 1));
    allreduce(data, n);
    // Small integers are exact in float: 1 + 2 + ... + size for any realistic size.
    const auto expected = static_cast<float>(g_state.size * (g_state.size + 1) / 2);
    return static_cast<std::size_t>(
        std::count_if(data, data + n, [&](float x) { return x != expected; }));
  }

  double time(std::size_t n, int warmup, int iterations) override {
    float* data = buffer(n);
    // Zeros stay zeros under any number of sums (repeated sums of the check's values would grow
    // to infinity for many ranks).
    std::fill(data, data + n, 0.0f);
    for (int i = 0; i < warmup; ++i) allreduce(data, n);
    barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) allreduce(data, n);
    const auto end = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(end - start).count() / std::max(1, iterations);
  }

 private:
  float* buffer(std::size_t n) {
    if (buffer_.size() < n) buffer_.resize(n);
    return buffer_.data();
  }
  static void allreduce(float* data, std::size_t n) {
    if (!g_state.mpi) return;  // one plain process: the sum over one rank is the data itself
    SB_MPI_CHECK(
        MPI_Allreduce(MPI_IN_PLACE, data, checked_count(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
  }

  std::vector<float> buffer_;
};

}  // namespace

std::unique_ptr<AllreduceBenchmark> make_mpi_allreduce_benchmark() {
  return std::make_unique<MpiAllreduceBenchmark>();
}

void print0(std::string_view line) {
  if (g_state.rank != 0) return;
  std::string whole(line);
  whole += '\n';
  std::fwrite(whole.data(), 1, whole.size(), stdout);
  std::fflush(stdout);
}

}  // namespace scalebench::trainer::dist
