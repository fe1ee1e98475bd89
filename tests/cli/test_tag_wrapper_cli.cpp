// scalebench-tag, the torchrun launcher's per-worker wrapper (orchestrator/tag_wrapper.cpp, its
// main cli/tag_main.cpp), as a process: each chunk of the worker's stdout and stderr on its own
// stdout with Open MPI's tag, the worker's exit status (a signal as a signal), and a worker that
// cannot start said on a tagged stderr line.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_support.hpp"

namespace {

struct Result {
  std::string out;
  int status = -1;  // as the shell reports it: the exit code, or 128 + signal
};

Result tag(const std::string& arguments) {
  const std::string command = std::string(SCALEBENCH_BINARY_DIR) + "/scalebench-tag " + arguments +
                              " 2>/dev/null; echo \"status=$?\"";
  Result result;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    result.out.append(buffer, n);
  ::pclose(pipe);
  const auto at = result.out.rfind("status=");
  REQUIRE(at != std::string::npos);
  result.status = std::stoi(result.out.substr(at + 7));
  result.out.erase(at);
  return result;
}

}  // namespace

TEST_CASE("scalebench-tag: both streams tagged on stdout, chunk by chunk, the worker's status") {
  const auto result =
      tag("--rank 3 -- sh -c 'printf \"Epoch 1\"; sleep 0.2; printf \"\\rEpoch 1 done\\n\"; "
          "sleep 0.2; echo oops >&2; exit 5'");
  // The partial line and its redraw are two chunks, each with its tag, as mpirun writes them.
  CHECK(result.out == "[1,3]<stdout>:Epoch 1[1,3]<stdout>:\rEpoch 1 done\n[1,3]<stderr>:oops\n");
  CHECK(result.status == 5);
}

TEST_CASE("scalebench-tag: the rank from RANK, a program after no '--', a signal passed on") {
  const auto result = tag("sh -c 'echo hi; kill -TERM $$'");
  CHECK(result.out == "[1,0]<stdout>:hi\n");
  CHECK(result.status == 128 + 15);  // ended by the worker's signal
  FILE* pipe = ::popen(
      ("RANK=7 " + std::string(SCALEBENCH_BINARY_DIR) + "/scalebench-tag echo seven").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[256] = {};
  const auto n = std::fread(buffer, 1, sizeof buffer - 1, pipe);
  ::pclose(pipe);
  CHECK(std::string(buffer, n) == "[1,7]<stdout>:seven\n");
}

TEST_CASE("scalebench-tag: a worker that cannot start is a tagged stderr line and status 127") {
  const auto missing = tag("--rank 1 -- /nonexistent/train --epochs 3");
  CHECK(missing.out ==
        "[1,1]<stderr>:scalebench-tag: cannot run /nonexistent/train: No such file or "
        "directory\n");
  CHECK(missing.status == 127);
  // Usage errors: nothing to run, an unknown option, a bad rank.
  CHECK(tag("--").status == 127);
  CHECK(tag("--bogus -- true").status == 127);
  CHECK(tag("--rank -1 -- true").status == 127);
}

TEST_CASE("scalebench-tag: a descendant holding the pipes does not keep it, nor it the worker") {
  // The worker exits while a background child of it still holds stdout: the wrapper ends (not
  // after the child's 29 s), with the worker's status.
  const auto held = tag("-- sh -c 'sleep 29.0417 & echo hi; exit 3'");
  CHECK(held.out == "[1,0]<stdout>:hi\n");
  CHECK(held.status == 3);
  std::system("pkill -f '^sleep 29.0417'");
  // The wrapper killed outright (torchrun's SIGKILL to the worker's pid lands on it): the worker
  // dies with it instead of running on without a parent.
  const std::string script = "B='" + std::string(SCALEBENCH_BINARY_DIR) +
                             "'; \"$B/scalebench-tag\" sleep 28.0419 >/dev/null & W=$!; "
                             "sleep 0.5; kill -9 $W; sleep 0.5; ! pgrep -f '^sleep 28.0419'";
  const int gone = std::system(script.c_str());
  std::system("pkill -f '^sleep 28.0419'");
  CHECK(gone == 0);
}
