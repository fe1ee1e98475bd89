// trainer/distributed.cpp: launcher detection, and every collective as a no-op for one process.
// (The real multi-rank path runs in test_trainer_cli.cpp under mpirun.)
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "trainer/distributed.hpp"

namespace dist = scalebench::trainer::dist;

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
  dist::allreduce_average(values);
  CHECK(values == std::vector<float>{1.5f, -2.0f, 3.25f});
  std::vector<double> sums = {10.0, 0.5};
  dist::allreduce_sum(sums);
  CHECK(sums == std::vector<double>{10.0, 0.5});
  dist::barrier();
  dist::finalize();
  dist::finalize();  // a second call is harmless
}
