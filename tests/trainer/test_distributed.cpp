// trainer/distributed.cpp: launcher detection, every collective as a no-op for one process, the
// gradient buckets' arithmetic, and the GradientReducer under a real `mpirun -np 2`
// (tests/trainer/mpi/reducer_check.cpp). The trainer's own multi-rank path runs in
// test_trainer_cli.cpp.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "trainer/distributed.hpp"

namespace dist = scalebench::trainer::dist;
using dist::Bucket;

namespace {

constexpr const char* kLauncherVariables[] = {
    "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",      "PMIX_RANK",
    "SLURM_STEP_NUM_TASKS", "SLURM_STEP_ID", "SLURM_NTASKS"};

// Clears the launcher variables for the test's lifetime and restores them afterwards.
class CleanEnvironment {
 public:
  CleanEnvironment() {
    for (const char* name : kLauncherVariables) {
      const char* value = std::getenv(name);
      saved_.emplace_back(value ? std::optional<std::string>(value) : std::nullopt);
      ::unsetenv(name);
    }
  }
  ~CleanEnvironment() {
    for (std::size_t i = 0; i < saved_.size(); ++i) {
      if (saved_[i]) {
        ::setenv(kLauncherVariables[i], saved_[i]->c_str(), 1);
      } else {
        ::unsetenv(kLauncherVariables[i]);
      }
    }
  }

 private:
  std::vector<std::optional<std::string>> saved_;
};

}  // namespace

TEST_CASE("launchers are recognised by their environment") {
  CleanEnvironment clean;
  CHECK_FALSE(dist::launcher_detected());
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  CHECK(dist::launcher_detected());
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::setenv("PMI_SIZE", "4", 1);
  CHECK(dist::launcher_detected());
  ::unsetenv("PMI_SIZE");
  ::setenv("PMIX_RANK", "0", 1);
  CHECK(dist::launcher_detected());
  ::unsetenv("PMIX_RANK");

  // A batch script's SLURM_NTASKS alone is not a launch; srun's step variables are.
  ::setenv("SLURM_NTASKS", "4", 1);
  CHECK_FALSE(dist::launcher_detected());
  ::setenv("SLURM_STEP_NUM_TASKS", "1", 1);
  CHECK_FALSE(dist::launcher_detected());
  ::setenv("SLURM_STEP_NUM_TASKS", "4", 1);
  CHECK(dist::launcher_detected());
}

TEST_CASE("without a launcher the process is rank 0 of 1 and collectives change nothing") {
  CleanEnvironment clean;
  int argc = 1;
  char name[] = "test";
  char* args[] = {name, nullptr};
  char** argv = args;
  dist::init(&argc, &argv);
  CHECK_FALSE(dist::using_mpi());
  CHECK(dist::rank() == 0);
  CHECK(dist::size() == 1);
  CHECK(dist::local_rank() == 0);
  CHECK_FALSE(dist::host_name().empty());

  std::vector<float> values = {1.5f, -2.0f, 3.25f};
  dist::broadcast(values);
  CHECK(values == std::vector<float>{1.5f, -2.0f, 3.25f});
  std::vector<double> sums = {10.0, 0.5};
  dist::allreduce_sum(sums);
  CHECK(sums == std::vector<double>{10.0, 0.5});
  dist::barrier();
  dist::finalize();
  dist::finalize();  // a second call is harmless
}

TEST_CASE("buckets are cut from the end of the buffer, the remainder at the start") {
  // 16 bytes = 4 floats.
  CHECK(dist::make_buckets(10, 16) == std::vector<Bucket>{{6, 10}, {2, 6}, {0, 2}});
  CHECK(dist::make_buckets(8, 16) == std::vector<Bucket>{{4, 8}, {0, 4}});
  CHECK(dist::make_buckets(4, 16) == std::vector<Bucket>{{0, 4}});
  CHECK(dist::make_buckets(3, 16) == std::vector<Bucket>{{0, 3}});
  CHECK(dist::make_buckets(0, 16).empty());
  // Fewer bytes than a float still make one-float buckets; partial floats are dropped.
  CHECK(dist::make_buckets(3, 1) == std::vector<Bucket>{{2, 3}, {1, 2}, {0, 1}});
  CHECK(dist::make_buckets(5, 11) == std::vector<Bucket>{{3, 5}, {1, 3}, {0, 1}});
  // mnist_cnn's 1,199,882 gradients: one bucket at the 64 MiB default, five at 1 MiB.
  CHECK(dist::make_buckets(1199882, dist::kDefaultFusionBytes) ==
        std::vector<Bucket>{{0, 1199882}});
  CHECK(dist::make_buckets(1199882, 1 << 20) ==
        std::vector<Bucket>{
            {937738, 1199882}, {675594, 937738}, {413450, 675594}, {151306, 413450}, {0, 151306}});
}

TEST_CASE("a bucket is complete once every gradient from its start on is final") {
  const std::vector<Bucket> b = dist::make_buckets(10, 16);  // [6,10) [2,6) [0,2)
  CHECK(dist::complete_buckets(b, 11) == 0);
  CHECK(dist::complete_buckets(b, 10) == 0);
  CHECK(dist::complete_buckets(b, 7) == 0);
  CHECK(dist::complete_buckets(b, 6) == 1);
  CHECK(dist::complete_buckets(b, 3) == 1);
  CHECK(dist::complete_buckets(b, 2) == 2);
  CHECK(dist::complete_buckets(b, 1) == 2);
  CHECK(dist::complete_buckets(b, 0) == 3);
  CHECK(dist::complete_buckets({}, 0) == 0);
}

TEST_CASE("without a launcher the gradient reducer changes nothing and starts nothing") {
  CleanEnvironment clean;
  int argc = 1;
  char name[] = "test";
  char* args[] = {name, nullptr};
  char** argv = args;
  dist::init(&argc, &argv);
  std::vector<float> gradients = {1.5f, -2.0f, 3.25f, 7.0f, 0.125f};
  for (const bool overlap : {false, true}) {
    dist::GradientReducer reducer(gradients, 8, overlap);
    CHECK(reducer.buckets() == std::vector<Bucket>{{3, 5}, {1, 3}, {0, 1}});
    reducer.gradients_ready(3);
    reducer.gradients_ready(0);
    CHECK(reducer.launched() == 0);
    reducer.finish();
    CHECK(reducer.launched_early() == 0);
    CHECK(gradients == std::vector<float>{1.5f, -2.0f, 3.25f, 7.0f, 0.125f});
  }
  dist::finalize();
}

TEST_CASE("without a launcher the MPI allreduce benchmark is the sum over one rank: no transport") {
  CleanEnvironment clean;
  int argc = 1;
  char name[] = "test";
  char* args[] = {name, nullptr};
  char** argv = args;
  dist::init(&argc, &argv);
  const auto benchmark = dist::make_mpi_allreduce_benchmark();
  CHECK(benchmark->name() == "none");
  CHECK(benchmark->check(1000) == 0);  // every element is 1 = 1·2/2
  CHECK(benchmark->check(10) == 0);    // a smaller size reuses the buffer
  CHECK(benchmark->time(1000, 2, 3) >= 0.0);
  CHECK(benchmark->time(1000, 0, 0) >= 0.0);  // no iterations: no division by zero
  dist::finalize();
}

TEST_CASE(
    "mpirun -np 2: the reducer leaves the mean for every bucket size, with and without overlap") {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    SCALEBENCH_SKIP("mpirun not found");
  }
  // Root needs Open MPI's two opt-in variables; --oversubscribe lets 2 ranks run on 1 core.
  const std::string command =
      "env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_RANK -u SLURM_STEP_NUM_TASKS "
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --oversubscribe "
      "--bind-to none '" SCALEBENCH_REDUCER_CHECK "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), chunk.size(), pipe) != nullptr) output += chunk.data();
  const int status = ::pclose(pipe);
  INFO(output);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(output == "reducer_check: np=2 24 configurations ok\n");
}
