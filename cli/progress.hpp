// What `scalebench run` prints while it runs: a line when a run starts and when it ends (stdout),
// and progress (stderr): the current run's epoch and elapsed time and the matrix's remaining
// time, on one updating line when stderr is a terminal, as plain lines otherwise (CI logs), or
// nothing with --quiet.
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

#include "orchestrator/runner.hpp"

namespace scalebench::cli {

enum class ProgressStyle { Terminal, Lines, Quiet };

// "42s", "3m20s", "1h02m".
std::string format_duration(double seconds);

class ProgressPrinter final : public orchestrator::RunObserver {
 public:
  // Plain progress lines come at most every kLineInterval seconds of a run (and for its first
  // and last epoch), so that a 1,000-epoch run does not flood a CI log.
  static constexpr double kLineInterval = 10.0;

  ProgressPrinter(std::ostream& out, std::ostream& err, ProgressStyle style)
      : out_(out), err_(err), style_(style) {}
  void on_side_file(const std::filesystem::path& file, const std::string& why) override;
  void on_run_lost(const std::string& why) override;
  void on_run_start(const orchestrator::RunPlan& plan, std::size_t index,
                    std::size_t total) override;
  void on_epoch(const orchestrator::RunPlan& plan, std::size_t index, std::size_t total_runs,
                int epoch, int total_epochs, double elapsed_seconds) override;
  void on_run_end(const db::RunBundle& bundle, std::size_t index, std::size_t total) override;
  void on_cell_decision(const orchestrator::RunPlan& plan, const stats::StopDecision& decision,
                        const stats::PrecisionRule& rule) override;
  void on_expected_runs(std::size_t remaining) override { expected_runs_ = remaining; }

  bool saw_allreduce() const { return saw_allreduce_; }

 private:
  // The matrix's remaining time from the runs finished so far, "" before the first.
  std::string remaining(std::size_t index, std::size_t total, double elapsed) const;
  void clear_line();

  std::ostream& out_;
  std::ostream& err_;
  ProgressStyle style_;
  bool saw_allreduce_ = false;
  bool line_showing_ = false;    // a terminal progress line waits to be cleared
  double last_line_at_ = -1;     // elapsed time of the last plain progress line
  double finished_seconds_ = 0;  // wall seconds of the runs finished in this invocation
  std::size_t finished_runs_ = 0;
  // With a precision rule: the runs it still expects (the ETA's count instead of the matrix's).
  std::optional<std::size_t> expected_runs_;
};

}  // namespace scalebench::cli
