#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>

#include "orchestrator/run_analysis.hpp"
#include "stamped_lines.hpp"

using namespace scalebench;
using namespace scalebench::orchestrator;

namespace {

constexpr std::int64_t kStart = 5'000'000'000;

StampedLine at(double seconds, std::string text, Stream stream = Stream::Stdout) {
  return test::stamped(kStart, seconds, std::move(text), stream);
}

}  // namespace

TEST_CASE("epoch rule: first `Epoch y/z` of any rank, last epoch ends at Training done") {
  const std::vector<StampedLine> lines = {
      at(0.10, "[1,0]<stdout>:scalebench-train model=mlp train_images=1000 np=2"),
      at(0.50, "[1,1]<stdout>:Epoch 1/3"),  // rank 1 first: any rank counts
      at(0.52, "[1,0]<stdout>:Epoch 1/3"),
      at(1.40, "[1,0]<stdout>:10/10 - loss: 0.9 - accuracy: 0.5 - epoch_seconds: 0.899"),
      at(1.50, "[1,0]<stdout>:Epoch 2/3"),
      at(1.60, "[1,1]<stderr>:some warning"),
      at(2.25, "[1,1]<stdout>:Epoch 2/3"),  // a late duplicate does not move the start
      at(2.70, "[1,0]<stdout>:10/10 - loss: 0.5 - accuracy: 0.7 - epoch_seconds: 1.2"),
      at(2.75, "[1,0]<stdout>:Epoch 3/3"),
      at(3.70, "[1,0]<stdout>:10/10 - loss: 0.4 - accuracy: 0.8 - epoch_seconds: 0.95"),
      at(3.75, "[1,0]<stdout>:Training done: epochs=3 seconds=3.25"),
  };
  const auto analysis = analyze_run(lines, kStart);
  CHECK(analysis.problems.empty());
  CHECK(analysis.total_epochs == 3);
  CHECK(analysis.train_images == 1000);
  CHECK(*analysis.startup_seconds == doctest::Approx(0.5));
  REQUIRE(analysis.epochs.size() == 3);
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(1.0));
  CHECK(*analysis.epochs[1].duration_seconds == doctest::Approx(1.25));
  CHECK(*analysis.epochs[2].duration_seconds == doctest::Approx(1.0));
  CHECK(analysis.epochs[1].start_offset_seconds == doctest::Approx(1.5));
  CHECK(*analysis.epochs[0].trainer_seconds == doctest::Approx(0.899));
  CHECK(*analysis.epochs[1].loss == doctest::Approx(0.5));
  CHECK(*analysis.epochs[2].accuracy == doctest::Approx(0.8));

  REQUIRE(analysis.lines.size() == lines.size());
  CHECK(analysis.lines[5].stream == "stderr");
  CHECK(analysis.lines[5].rank == 1);
  CHECK(analysis.lines[5].text == "some warning");
  CHECK(analysis.lines[5].seq == 5);
  CHECK(analysis.lines[5].offset_seconds == doctest::Approx(1.6));
}

TEST_CASE("a run that dies mid-epoch: that epoch has no duration and the run is incomplete") {
  const std::vector<StampedLine> lines = {at(0.2, "Epoch 1/3"), at(1.2, "Epoch 2/3"),
                                          at(1.9, "Traceback: boom", Stream::Stderr)};
  const auto analysis = analyze_run(lines, kStart);
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(1.0));
  CHECK(!analysis.epochs[1].duration_seconds);
  // Epoch 2 is not the last one, so nothing but `Epoch 3/3` could end it.
  REQUIRE(analysis.problems.size() == 1);
  CHECK(analysis.problems[0] == "no `Epoch 3/3` line");
}

TEST_CASE("no epochs at all, garbage and empty lines") {
  const std::vector<StampedLine> lines = {at(0.1, ""), at(0.2, "\xff\xfe garbage"),
                                          at(0.3, "[1,0]<stdout>:"), at(0.4, "Epoch 9/3")};
  const auto analysis = analyze_run(lines, kStart);
  CHECK(analysis.epochs.empty());
  CHECK(!analysis.startup_seconds);
  CHECK(analysis.problems == std::vector<std::string>{"no `Epoch y/z` line"});
  CHECK(analysis.lines[1].text == "\xEF\xBF\xBD\xEF\xBF\xBD garbage");
  CHECK(analysis.lines[2].text.empty());
  CHECK(analysis.lines[2].rank == 0);
}

TEST_CASE("an epoch count that changes mid-run is reported, not trusted") {
  const std::vector<StampedLine> lines = {at(0.1, "Epoch 1/2"), at(1.1, "Epoch 2/5"),
                                          at(2.1, "Epoch 2/2"), at(3.1, "Training done: epochs=2")};
  const auto analysis = analyze_run(lines, kStart);
  REQUIRE(analysis.problems.size() == 1);
  CHECK(analysis.problems[0].find("`Epoch 2/5` disagrees with 2 epochs") != std::string::npos);
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(2.0));
}

// ---- allreduce benchmark runs -----------------------------------------------------------------

namespace {

std::vector<StampedLine> benchmark_lines(bool finished, int wrong = 0) {
  std::vector<StampedLine> lines = {
      at(0.05, "[1,0]<stdout>:8 2 float sum 9.0 0.0009 0.0009 0"),  // before the header: ignored
      at(0.10,
         "[1,0]<stdout>:# scalebench-train benchmark=allreduce transport=mpi np=2 "
         "backend=cpu type=float op=sum"),
      at(0.11, "[1,0]<stdout>:#"),
      at(0.12, "[1,0]<stdout>:#        size         count    type   redop        time"),
      at(0.20,
         "[1,0]<stdout>:            8             2   float     sum       0.823    0.0097"
         "    0.0097       0"),
      at(0.21, "[1,1]<stderr>:a warning from rank 1"),
      at(0.30,
         "[1,0]<stdout>:           32             8   float     sum       0.657    0.0487"
         "    0.0487       " +
             std::to_string(wrong)),
  };
  if (finished) {
    lines.push_back(at(0.31, "[1,0]<stdout>:# Out of bounds values : 0 OK"));
    lines.push_back(at(0.32, "[1,0]<stdout>:# Avg bus bandwidth    : 0.0292"));
    lines.push_back(at(0.33, "[1,0]<stdout>:16 4 float sum 1.0 0.016 0.016 0"));  // after: ignored
  }
  return lines;
}

}  // namespace

TEST_CASE("allreduce benchmark run: rows stored with their line, no epochs expected") {
  const auto analysis = analyze_run(benchmark_lines(true), kStart);
  CHECK(analysis.problems.empty());
  CHECK(analysis.benchmark == "allreduce");
  CHECK(analysis.benchmark_done);
  CHECK(analysis.epochs.empty());
  CHECK(analysis.total_epochs == 0);
  CHECK_FALSE(analysis.startup_seconds);
  CHECK_FALSE(analysis.train_images);
  REQUIRE(analysis.allreduce.size() == 2);
  CHECK(analysis.allreduce[0].seq == 4);
  CHECK(analysis.allreduce[0].transport == "mpi");
  CHECK(analysis.allreduce[0].bytes == 8);
  CHECK(analysis.allreduce[0].time_us == 0.823);
  CHECK(analysis.allreduce[1].seq == 6);
  CHECK(analysis.allreduce[1].count == 8);
  CHECK(analysis.allreduce[1].busbw_gbs == 0.0487);
  CHECK(analysis.lines.size() == 10);  // every line is kept, rows too
  CHECK(analysis.lines[4].text.find("float") != std::string::npos);
}

TEST_CASE("allreduce benchmark run: unfinished, empty or wrong is incomplete") {
  const auto unfinished = analyze_run(benchmark_lines(false), kStart);
  CHECK(unfinished.allreduce.size() == 2);
  CHECK(unfinished.problems ==
        std::vector<std::string>{"no `# Avg bus bandwidth` line, so the benchmark did not finish"});

  const auto wrong = analyze_run(benchmark_lines(true, 3), kStart);
  CHECK(wrong.problems == std::vector<std::string>{"3 wrong elements in the allreduce results"});

  const auto empty = analyze_run({at(0.1, "# scalebench-train benchmark=allreduce transport=nccl"),
                                  at(0.2, "# Avg bus bandwidth    : 0.0000")},
                                 kStart);
  CHECK(empty.problems ==
        std::vector<std::string>{"no allreduce result row after the benchmark header"});

  const auto other = analyze_run({at(0.1, "# scalebench-train benchmark=broadcast")}, kStart);
  REQUIRE(other.problems.size() == 1);
  CHECK(other.problems[0].find("unknown benchmark `broadcast`") == 0);
}

TEST_CASE("a training run's rows-looking lines are not allreduce results") {
  const auto analysis = analyze_run({at(0.1, "scalebench-train model=mlp train_images=10"),
                                     at(0.2, "8 2 float sum 9.0 0.0009 0.0009 0")},
                                    kStart);
  CHECK_FALSE(analysis.benchmark);
  CHECK(analysis.allreduce.empty());
  CHECK(analysis.problems == std::vector<std::string>{"no `Epoch y/z` line"});
}

// ---- issue "Results you can trust": lines that used to lose the run or exhaust memory ----------

TEST_CASE("epochs out of order are a problem, never a negative duration") {
  const auto analysis = analyze_run({at(0.1, "Epoch 1/3"), at(0.2, "Epoch 3/3"),
                                     at(0.3, "Epoch 2/3"), at(0.4, "Training done: epochs=3")},
                                    kStart);
  for (const auto& epoch : analysis.epochs)
    if (epoch.duration_seconds) CHECK(*epoch.duration_seconds >= 0);
  REQUIRE(analysis.problems.size() == 2);
  CHECK(analysis.problems[0] == "line 2: `Epoch 2/3` arrived after `Epoch 3/3` (out of order)");
  CHECK(analysis.problems[1] == "no `Epoch 2/3` line");
}

TEST_CASE("`Training done:` before the last epoch began leaves that epoch unmeasured") {
  const auto analysis = analyze_run(
      {at(0.1, "Epoch 1/2"), at(0.2, "Training done: epochs=1"), at(0.3, "Epoch 2/2")}, kStart);
  REQUIRE(analysis.epochs.size() == 2);
  CHECK(*analysis.epochs[0].duration_seconds == doctest::Approx(0.2));
  CHECK_FALSE(analysis.epochs[1].duration_seconds);
  CHECK(analysis.problems ==
        std::vector<std::string>{"`Training done:` arrived before `Epoch 2/2`"});
}

TEST_CASE("an absurd total gives one range, not one message per missing epoch") {
  const auto analysis =
      analyze_run({at(0.1, "Epoch 1/100000000"), at(0.2, "Epoch 5/100000000")}, kStart);
  REQUIRE(analysis.problems.size() == 2);
  CHECK(analysis.problems[0] == "no `Epoch 2/100000000` … `Epoch 4/100000000` lines (3 missing)");
  CHECK(analysis.problems[1] ==
        "no `Epoch 6/100000000` … `Epoch 100000000/100000000` lines (99999995 missing)");
}

TEST_CASE("problems are capped: a million disagreeing totals make 21 messages") {
  RunAnalyzer analyzer(kStart);
  analyzer.add(at(0.1, "Epoch 1/2"));
  for (int i = 0; i < 1'000'000; ++i) analyzer.add(at(0.2, "Epoch 1/3"));
  const auto analysis = analyzer.finish();
  REQUIRE(analysis.problems.size() == kMaxProblems + 1);
  CHECK(analysis.problems.back() ==
        fmt::format("and {} more problems", 1'000'000 + 1 - kMaxProblems));
  CHECK(analysis.line_count == 1'000'001);
}

TEST_CASE("the failure reason: the trainer's last stderr words, else mpirun's own message") {
  const std::vector<StampedLine> mpirun_failed = {
      at(0.1, "--------------------------------------------------------------------------",
         Stream::Stderr),
      at(0.1, "mpirun was unable to launch the specified application as it could not access",
         Stream::Stderr),
      at(0.1, "or execute an executable:", Stream::Stderr),
      at(0.1, "", Stream::Stderr),
      at(0.1, "Executable: /nonexistent", Stream::Stderr),
      at(0.1, "--------------------------------------------------------------------------",
         Stream::Stderr),
  };
  CHECK(analyze_run(mpirun_failed, kStart).failure_reason ==
        "mpirun was unable to launch the specified application as it could not access or execute "
        "an executable: Executable: /nonexistent");
  const std::vector<StampedLine> trainer_failed = {
      at(0.1, "[1,0]<stderr>:Traceback (most recent call last):"),
      at(0.1, "[1,0]<stderr>:ValueError: bad batch size"),
      at(0.2, "--------------------------------------------------------------------------",
         Stream::Stderr),
      at(0.2, "Primary job  terminated normally, but 1 process returned", Stream::Stderr),
      at(0.2, "--------------------------------------------------------------------------",
         Stream::Stderr),
  };
  CHECK(analyze_run(trainer_failed, kStart).failure_reason == "ValueError: bad batch size");
  CHECK(analyze_run({at(0.1, "oops", Stream::Stderr), at(0.2, "-----", Stream::Stderr)}, kStart)
            .failure_reason == "oops");  // a separator line is never the reason
}

TEST_CASE("printable_excerpt shows control characters instead of sending them to a terminal") {
  CHECK(printable_excerpt("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(printable_excerpt(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(printable_excerpt("tab\there\x7f") == "tab here\\x7f");
  CHECK(printable_excerpt("\xc2\x9b"
                          "2J") == "\\x9b2J");  // C1 CSI
  CHECK(printable_excerpt("grüße") == "grüße");
  CHECK(printable_excerpt(std::string(500, 'x'), 10) == std::string(10, 'x') + "…");
}

TEST_CASE(
    "the failure reason names the cause: PMI before MPI's abort line, errors before the rest") {
  // Our trainer under srun without --mpi=pmix (Open MPI 4.1, srun --label): Open MPI's help
  // message names the cause; its last line ("Local abort before MPI_INIT ...") does not.
  TagOptions srun;
  srun.rank_colon_prefix = true;
  const char* dashes = "--------------------------------------------------------------------------";
  const std::vector<StampedLine> no_pmix = {
      at(0.1, std::string("0: ") + dashes, Stream::Stderr),
      at(0.1, "0: The application appears to have been direct launched using \"srun\",",
         Stream::Stderr),
      at(0.1, "0: but OMPI was not built with SLURM's PMI support and therefore cannot",
         Stream::Stderr),
      at(0.1, "0: execute. There are several options for building PMI support under",
         Stream::Stderr),
      at(0.1, "0: SLURM, depending upon the SLURM version you are using:", Stream::Stderr),
      at(0.1, "0: ", Stream::Stderr),
      at(0.1, "0:   version 16.05 or later: you can use SLURM's PMIx support. This",
         Stream::Stderr),
      at(0.1, std::string("0: ") + dashes, Stream::Stderr),
      at(0.1, "0: *** An error occurred in MPI_Init", Stream::Stderr),
      at(0.1, "0: *** on a NULL communicator", Stream::Stderr),
      at(0.1,
         "0: [node:4242] Local abort before MPI_INIT completed completed successfully, but am not "
         "able to aggregate error messages, and not able to guarantee that all other processes "
         "were killed!",
         Stream::Stderr),
      at(0.2, "srun: error: node: task 0: Exited with exit code 1", Stream::Stderr),
  };
  const auto reason = analyze_run(no_pmix, kStart, srun).failure_reason;
  CHECK(reason.find("The application appears to have been direct launched using \"srun\", but "
                    "OMPI was not built with SLURM's PMI support") == 0);
  CHECK(reason.size() <= 300);
  // Without a PMI paragraph: the program's own error line beats its last words...
  const std::vector<StampedLine> python = {
      at(0.1, "[1,0]<stderr>:RuntimeError: NCCL error: unhandled system error"),
      at(0.1, "[1,0]<stderr>:  (see the log above)"),
  };
  CHECK(analyze_run(python, kStart).failure_reason ==
        "RuntimeError: NCCL error: unhandled system error");
  // ...and the launcher's error beats its other lines.
  CHECK(analyze_run({at(0.1, "srun: error: node: task 1: Killed", Stream::Stderr),
                     at(0.2, "srun: Terminating StepId=12.0", Stream::Stderr)},
                    kStart)
            .failure_reason == "srun: error: node: task 1: Killed");
}

TEST_CASE("across nodes the failure reason names the node the launcher says failed") {
  const char* dashes = "--------------------------------------------------------------------------";
  // mpirun when a node's link went down (Open MPI 4.1, the emulated cluster): the message, then
  // the node apart; mpirun's own host (the HNP line) is not the one that failed.
  const std::vector<StampedLine> lost = {
      at(0.1, "[1,0]<stdout>:Epoch 1/100"),
      at(5.0, dashes, Stream::Stderr),
      at(5.0, "ORTE has lost communication with a remote daemon.", Stream::Stderr),
      at(5.0, "", Stream::Stderr),
      at(5.0, "  HNP daemon   : [[20615,0],0] on node vm", Stream::Stderr),
      at(5.0, "  Remote daemon: [[20615,0],2] on node 10.241.0.2", Stream::Stderr),
      at(5.0, "", Stream::Stderr),
      at(5.0, "This is usually due to either a failure of the TCP network", Stream::Stderr),
      at(5.0, dashes, Stream::Stderr),
  };
  CHECK(analyze_run(lost, kStart).failure_reason ==
        "ORTE has lost communication with a remote daemon. [Remote daemon: [[20615,0],2] on node "
        "10.241.0.2]");
  // A rank killed on a node: the program's last words, then where.
  const std::vector<StampedLine> killed = {
      at(0.1, "[1,1]<stderr>:worker stopping"),
      at(1.0, dashes, Stream::Stderr),
      at(1.0,
         "mpirun noticed that process rank 1 with PID 0 on node 10.241.0.2 exited on signal 9 "
         "(Killed).",
         Stream::Stderr),
      at(1.0, dashes, Stream::Stderr),
  };
  CHECK(analyze_run(killed, kStart).failure_reason ==
        "worker stopping [mpirun noticed that process rank 1 with PID 0 on node 10.241.0.2 "
        "exited on signal 9 (Killed).]");
  // Slurm: the node's failure beats a task's exit line; a line already naming it is not repeated.
  CHECK(analyze_run({at(0.1, "[1,0]<stderr>:RuntimeError: connection reset"),
                     at(0.2, "srun: error: Node failure on node2", Stream::Stderr),
                     at(0.3, "srun: error: node1: task 0: Killed", Stream::Stderr)},
                    kStart)
            .failure_reason ==
        "RuntimeError: connection reset [srun: error: Node failure on node2]");
  // A program's own untagged line (a plain launch) that says "on node" is not the launcher's.
  CHECK(analyze_run({at(0.1, "Traceback: RuntimeError: gradient overflow", Stream::Stderr),
                     at(0.2, "checkpoint skipped on node n3 (read-only)", Stream::Stderr)},
                    kStart)
            .failure_reason.find("[checkpoint skipped") == std::string::npos);
  // A task's plain exit code names no failed node.
  CHECK(
      analyze_run({at(0.1, "[1,0]<stderr>:ValueError: x"),
                   at(0.2, "srun: error: node1: task 0: Exited with exit code 1", Stream::Stderr)},
                  kStart)
          .failure_reason == "ValueError: x");
}

TEST_CASE("MPI_Abort's 'with errorcode 1.' does not hide the program's own error line") {
  const char* dashes = "--------------------------------------------------------------------------";
  const std::vector<StampedLine> aborted = {
      at(0.1, "[1,1]<stderr>:scalebench-train: error: no such file: /data/train (rank 1 on n2)"),
      at(0.2, std::string("[1,1]<stderr>:") + dashes),
      at(0.2, "[1,1]<stderr>:MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD"),
      at(0.2, "[1,1]<stderr>:with errorcode 1."),
      at(0.2, "[1,1]<stderr>:"),
      at(0.2, "[1,1]<stderr>:NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes."),
      at(0.2, std::string("[1,1]<stderr>:") + dashes),
  };
  CHECK(analyze_run(aborted, kStart).failure_reason ==
        "scalebench-train: error: no such file: /data/train (rank 1 on n2)");
  // Plural and capitalised forms still count.
  CHECK(analyze_run({at(0.1, "[1,0]<stderr>:2 Errors found"), at(0.2, "[1,0]<stderr>:bye")}, kStart)
            .failure_reason == "2 Errors found");
}
