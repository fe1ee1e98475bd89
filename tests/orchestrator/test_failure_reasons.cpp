// Failure reasons a user can act on (issue 35, item 7): what mpirun and srun really printed for
// each fault the emulated cluster can make (tests/data/orchestrator/failures, captured by its
// capture.sh), replayed through the run analyzer: the reason names the cause and the node, never
// a line that only reports a consequence ("Set MCA parameter ... to see all help", "*** End of
// error message ***", a cancelled step).
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "orchestrator/run_analysis.hpp"
#include "stamped_lines.hpp"
#include "test_support.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;

namespace {

constexpr std::int64_t kStart = 9'000'000'000;

// The capture's stdout, then its stderr, one line each, as the executor stamps them.
std::vector<StampedLine> replay(const std::string& name) {
  std::vector<StampedLine> lines;
  const auto dir = test::data_dir() / "orchestrator" / "failures";
  double at = 0.1;
  for (const auto& [suffix, stream] :
       {std::pair{".stdout", Stream::Stdout}, std::pair{".stderr", Stream::Stderr}}) {
    std::ifstream in(dir / (name + suffix));
    REQUIRE(in);
    for (std::string line; std::getline(in, line); at += 0.001)
      lines.push_back(test::stamped(kStart, at, line, stream));
  }
  return lines;
}

std::string reason_of(const std::string& name) {
  TagOptions tags;
  tags.rank_colon_prefix = name.starts_with("srun");  // srun --label
  return analyze_run(replay(name), kStart, tags).failure_reason;
}

StampedLine err(double seconds, std::string text) {
  return test::stamped(kStart, seconds, std::move(text), Stream::Stderr);
}

}  // namespace

TEST_CASE("failure reasons from captured faults: mpirun across emulated nodes") {
  // A node's link down: Open MPI's message, and the node apart.
  CHECK(reason_of("mpirun-link-down") ==
        "ORTE has lost communication with a remote daemon. [Remote daemon: [[9681,0],2] on node "
        "10.231.0.2]");
  // A rank's segfault: the line naming the rank, node and signal, not the "Primary job
  // terminated normally" preamble before it.
  CHECK(reason_of("mpirun-segfault") ==
        "mpirun noticed that process rank 1 with PID 18312 on node 10.231.0.2 exited on signal 11 "
        "(Segmentation fault).");
  // A missing program: the message goes on past its ':' to the executable and node.
  CHECK(reason_of("mpirun-missing") ==
        "mpirun was unable to launch the specified application as it could not access or execute "
        "an executable: Executable: /nonexistent/train Node: 10.231.0.1");
  // A node's daemons killed: Open MPI 4.1 says only that a daemon could not be kept.
  CHECK(reason_of("mpirun-node-killed")
            .find("ORTE was unable to reliably start one or more "
                  "daemons.") == 0);
}

TEST_CASE("failure reasons from captured faults: srun across emulated nodes") {
  // A task's segfault, not the cancellation of the others ("*** STEP 1.0 ON node1 CANCELLED").
  CHECK(reason_of("srun-segfault") == "srun: error: node2: task 1: Segmentation fault");
  CHECK(reason_of("srun-missing") ==
        "slurmstepd-node2: error: execve(): /nonexistent/train: No such file or directory");
  CHECK(reason_of("srun-node-killed") == "srun: error: Node failure on node2");
}

TEST_CASE("failure reasons: help aggregation and a handler's last line are no cause") {
  const char* dashes = "--------------------------------------------------------------------------";
  // Open MPI after a lost node, with its aggregated help lines last (each mentions "error").
  const auto lost = analyze_run(
      {err(1.0, dashes), err(1.0, "ORTE has lost communication with a remote daemon."),
       err(1.0, ""), err(1.0, "  HNP daemon   : [[51,0],0] on node vm"),
       err(1.0, "  Remote daemon: [[51,0],2] on node node2"), err(1.0, dashes),
       err(1.1,
           "[vm:04242] 1 more process has sent help message help-errmgr-base.txt / "
           "node-died"),
       err(1.1,
           "[vm:04242] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help "
           "/ error messages")},
      kStart);
  CHECK(lost.failure_reason ==
        "ORTE has lost communication with a remote daemon. [Remote daemon: [[51,0],2] on node "
        "node2]");
  // Open MPI's segfault handler in a rank under srun: the signal, not "End of error message".
  TagOptions srun;
  srun.rank_colon_prefix = true;
  const auto segv = analyze_run(
      {err(1.0, "1: [node2:01234] *** Process received signal ***"),
       err(1.0, "1: [node2:01234] Signal: Segmentation fault (11)"),
       err(1.0, "1: [node2:01234] Signal code: Address not mapped (1)"),
       err(1.0, "1: [node2:01234] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f]"),
       err(1.0, "1: [node2:01234] *** End of error message ***"),
       err(1.1, "srun: error: node2: task 1: Segmentation fault (core dumped)"),
       err(1.2, "srun: error: node1: task 0: Terminated")},
      kStart, srun);
  CHECK(segv.failure_reason ==
        "[node2:01234] Signal: Segmentation fault (11) [srun: error: node2: task 1: Segmentation "
        "fault (core dumped)]");
}
