// scalebench compare on real runs of a small quickstart (the acceptance of "What people publish",
// item 4): unchanged instances give no difference, a deliberately slowed condition is slower and
// trips --fail-if-slower. A suite of its own, run serially (tests/CMakeLists.txt): the load of
// other tests during one instance would be a real difference.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/cli_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

// The quickstart, smaller (3 epochs on 12 000 images, one process count): seconds per instance.
std::string small_quickstart(const std::string& mpirun_extra) {
  return R"({
  "name": "quickstart-small",
  "repetitions": 5,
  "timeout_seconds": 120,
  "trainer": {"model": "mlp", "dataset": "fashion-mnist",
              "data-dir": "/usr/share/datasets/fashion-mnist", "epochs": 3, "batch-size": 128,
              "lr": 0.05, "threads": 1, "seed": 1, "train-limit": 12000},
  "np": [1],
  "conditions": [{"name": "single", "launcher": "single"},
                 {"name": "mpirun", "launcher": "mpirun")" +
         mpirun_extra + R"(}]
})";
}

std::optional<std::string> why_not_runnable() {
  if (!fs::exists(test::binary_dir() / "scalebench-train"))
    return "needs the scalebench-train binary";
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) return "needs mpirun";
  if (!fs::exists("/usr/share/datasets/fashion-mnist"))
    return "needs Fashion-MNIST (Debian dataset-fashion-mnist)";
  return std::nullopt;
}

}  // namespace

TEST_CASE("compare on the quickstart: nothing changed is no difference, batch 2 is slower") {
  SCALEBENCH_SKIP_IF(why_not_runnable());
  test::TempDir dir;
  const auto db = (dir / "results.db").string();
  const auto base = dir / "base.json", slow = dir / "slow.json";
  std::ofstream(base) << small_quickstart("");
  // The deliberate slowdown: batch 2 instead of 128 in the mpirun condition (several times slower
  // per epoch, so that five noisy runs on a loaded 2-core CI machine still show it).
  std::ofstream(slow) << small_quickstart(R"(, "trainer": {"batch-size": 2})");
  for (const auto& file : {base, base, slow}) {
    const auto run = test::run_binary({"run", file.string(), "--db", db, "--quiet"});
    INFO(run.out, run.err);
    REQUIRE(run.status == 0);
  }
  // Two instances of the same file: no cell slower or faster. The threshold is 50%: on a shared
  // 2-core CI machine running other tests beside this one, these sub-second epochs moved by up
  // to 46% between instances (seen), so a smaller one would flag noise.
  const auto same = test::invoke({"compare", "--db", db, "--instance", "1", "--to-instance", "2",
                                  "--threshold", "50", "--fail-if-slower", "50", "--json"});
  INFO(same.out, same.err);
  CHECK(same.status == 0);
  const auto parsed = nlohmann::json::parse(same.out);  // alive through the loop
  for (const auto& cell : parsed["cells"]) CHECK(cell["verdict"] == "no difference");
  // The slowed instance: its mpirun cell is slower, the gate exits 3 and names it.
  const auto slower = test::invoke({"compare", "--db", db, "--instance", "1", "--to-instance", "3",
                                    "--threshold", "50", "--fail-if-slower", "50"});
  INFO(slower.out, slower.err);
  CHECK(slower.status == 3);
  CHECK(slower.err.find("mpirun np=1 (+") != std::string::npos);
  CHECK(slower.err.find("single") == std::string::npos);
}
