#include "cli/progress.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "util/text.hpp"

namespace scalebench::cli {
namespace {

std::string levels_text(const orchestrator::RunPlan& plan) {
  std::string out;
  for (const auto& [factor, level] : plan.levels) out += fmt::format("{}={} ", factor, level);
  return util::escape_controls(out);
}

// Names from the experiment file and text from the trainer reach a terminal: escaped.
std::string shown(std::string_view text) { return util::escape_controls(text); }

}  // namespace

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

void ProgressPrinter::on_side_file(const std::filesystem::path& file, const std::string& why) {
  clear_line();
  fmt::print(err_,
             "scalebench: the database did not take the run ({}); stored in the side file {}\n",
             why, file.string());
}

void ProgressPrinter::on_run_lost(const std::string& why) {
  clear_line();
  fmt::print(err_, "scalebench: error: a run could not be stored anywhere: {}\n", shown(why));
}

void ProgressPrinter::on_run_start(const orchestrator::RunPlan& plan, std::size_t index,
                                   std::size_t total) {
  clear_line();
  last_line_at_ = -1;
  fmt::print(out_, "[{}/{}] {} {}np={} repetition {}: {}\n", index + 1, total,
             shown(plan.condition), levels_text(plan), plan.np, plan.repetition,
             shown(orchestrator::shell_join(plan.launch.argv)));
  out_.flush();
}

std::string ProgressPrinter::remaining(std::size_t index, std::size_t total, double elapsed) const {
  if (finished_runs_ == 0) return "";
  const double mean = finished_seconds_ / static_cast<double>(finished_runs_);
  // A precision rule's expected runs count this one; the matrix's count the runs after it.
  const double after = expected_runs_
                           ? static_cast<double>(*expected_runs_ > 0 ? *expected_runs_ - 1 : 0)
                           : static_cast<double>(total - index - 1);
  const double left = mean * after + std::max(0.0, mean - elapsed);
  return fmt::format("; about {} left in the matrix{}", format_duration(left),
                     expected_runs_ ? " (the runs the precision rule expects)" : "");
}

void ProgressPrinter::on_epoch(const orchestrator::RunPlan& plan, std::size_t index,
                               std::size_t total_runs, int epoch, int total_epochs,
                               double elapsed_seconds) {
  if (style_ == ProgressStyle::Quiet) return;
  const std::string of = total_epochs > 0 ? fmt::format("/{}", total_epochs) : "";
  if (style_ == ProgressStyle::Terminal) {
    // \r and "erase to the end of the line": the line is rewritten in place.
    fmt::print(err_, "\r\x1b[K[{}/{}] {} {}np={}: epoch {}{}, {} elapsed{}", index + 1, total_runs,
               shown(plan.condition), levels_text(plan), plan.np, epoch, of,
               format_duration(elapsed_seconds), remaining(index, total_runs, elapsed_seconds));
    err_.flush();
    line_showing_ = true;
    return;
  }
  const bool due = last_line_at_ < 0 || elapsed_seconds - last_line_at_ >= kLineInterval ||
                   (total_epochs > 0 && epoch == total_epochs);
  if (!due) return;
  last_line_at_ = elapsed_seconds;
  fmt::print(err_, "      epoch {}{} at {}{}\n", epoch, of, format_duration(elapsed_seconds),
             remaining(index, total_runs, elapsed_seconds));
  err_.flush();
}

void ProgressPrinter::clear_line() {
  if (!line_showing_) return;
  fmt::print(err_, "\r\x1b[K");
  err_.flush();
  line_showing_ = false;
}

void ProgressPrinter::on_run_end(const db::RunBundle& bundle, std::size_t, std::size_t) {
  clear_line();
  const auto& run = bundle.run;
  finished_seconds_ += run.wall_seconds;
  ++finished_runs_;
  double sum = 0;
  int measured = 0;
  for (const auto& epoch : bundle.epochs)
    if (epoch.duration_seconds) sum += *epoch.duration_seconds, ++measured;
  std::string detail = measured ? fmt::format("{} epochs, mean {:.3f} s", measured, sum / measured)
                                : std::string("no epoch measured");
  if (!bundle.allreduce.empty()) {
    // An allreduce benchmark has no epochs: its rows are the result.
    saw_allreduce_ = true;
    double peak = 0;
    for (const auto& row : bundle.allreduce) peak = std::max(peak, row.busbw_gbs);
    detail =
        fmt::format("{} allreduce sizes, peak busbw {:.2f} GB/s", bundle.allreduce.size(), peak);
  }
  if (run.images_per_second) detail += fmt::format(", {:.0f} images/s", *run.images_per_second);
  fmt::print(out_, "      {}{} in {:.2f} s: {}{}\n", db::to_string(run.status),
             run.attempt > 1 ? fmt::format(" (attempt {})", run.attempt) : "", run.wall_seconds,
             detail,
             run.status == db::RunStatus::Ok
                 ? ""
                 : " — " + shown(orchestrator::printable_excerpt(run.error, 2000)));
  out_.flush();
}

void ProgressPrinter::on_cell_decision(const orchestrator::RunPlan& plan,
                                       const stats::StopDecision& decision,
                                       const stats::PrecisionRule& rule) {
  clear_line();
  const std::string width = std::isfinite(decision.relative_half_width)
                                ? fmt::format("±{:.1f} %", decision.relative_half_width * 100)
                                : std::string("±n/a");
  std::string state;
  if (decision.stop)
    state = stats::stop_reason_text(decision, rule);
  else
    state = fmt::format("{} of target ±{:g} % after {}, about {} more", width, rule.precision * 100,
                        util::count_of(decision.runs, "run"), decision.expected_more);
  fmt::print(out_, "      cell {} {}np={}: {}\n", shown(plan.condition), levels_text(plan), plan.np,
             state);
  out_.flush();
}

}  // namespace scalebench::cli
