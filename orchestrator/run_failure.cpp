// Why a run failed, from what its stderr says (RunAnalyzer::note_stderr, failure_reason): the
// program's own error line, the launcher's message, the node it names. run_analysis.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "orchestrator/run_analysis.hpp"
#include "util/text.hpp"

namespace scalebench::orchestrator {
namespace {

// Open MPI frames its own messages with a line of dashes (or '=' in some components); such a
// line is never the reason a run failed.
bool is_separator(std::string_view text) {
  if (text.size() < 3) return false;
  for (char c : text)
    if (c != '-' && c != '=') return false;
  return true;
}

// "error" or "errors" in any case, ending a word (ValueError:, scalebench-train: error:, srun:
// error:): the words a program uses for the cause of a failure. Not inside a word: MPI_Abort's
// "with errorcode 1." names no cause and must not hide the program's own error line.
bool mentions_error(std::string_view text) {
  constexpr std::string_view kWord = "error";
  const auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  const auto letter = [&](std::size_t at) {
    return at < text.size() && std::isalpha(static_cast<unsigned char>(text[at])) != 0;
  };
  for (auto it = text.begin();; ++it) {
    it = std::search(it, text.end(), kWord.begin(), kWord.end(),
                     [&](char a, char b) { return lower(a) == b; });
    if (it == text.end()) return false;
    std::size_t after = static_cast<std::size_t>(it - text.begin()) + kWord.size();
    if (after < text.size() && lower(text[after]) == 's') ++after;
    if (!letter(after)) return true;
  }
}

// A line that reports a consequence of the failure, or says how to see more, never its cause:
// Open MPI's help aggregation ("1 more process has sent help message ...", "Set MCA parameter
// \"orte_base_help_aggregate\" to 0 to see all help / error messages"), the end of its segfault
// handler's backtrace ("*** End of error message ***"), its "Primary job terminated normally, but
// 1 process returned a non-zero exit code" preamble, and Slurm's cancellation of the other tasks
// ("*** STEP 1.0 ON node1 CANCELLED AT ...", "task 0: Terminated", "Force Terminated", "Job step
// aborted"). Each mentions "error" or stands last, so it was quoted instead of the cause.
bool is_consequence(std::string_view text) {
  for (const std::string_view phrase :
       {"to see all help / error messages", "has sent help message", "have sent help message",
        "*** End of error message ***", "Primary job  terminated normally",
        "Primary job terminated normally", "Per user-direction, the job has been aborted",
        " CANCELLED AT ", "Force Terminated", "Job step aborted", "_step_signal: Terminating",
        "mpirun detected that one or more processes exited with non-zero status"})
    if (text.find(phrase) != std::string_view::npos) return true;
  // srun's line for a task it stopped itself (the others, after one failed).
  return text.starts_with("srun: error: ") && text.find(": task") != std::string_view::npos &&
         text.ends_with(": Terminated");
}

// A line naming a fatal signal (Open MPI's handler: "Signal: Segmentation fault (11)"; a shell's
// "Segmentation fault (core dumped)"): as telling as an error line.
bool names_fatal_signal(std::string_view text) {
  for (const std::string_view signal : {"Segmentation fault", "Bus error", "Illegal instruction",
                                        "Floating point exception", "Aborted (core dumped)"})
    if (text.find(signal) != std::string_view::npos) return true;
  return false;
}

// A launcher's line that names the node a failure came from, most telling first: Open MPI's
// "Remote daemon: [[j,0],2] on node 10.0.0.2" (a lost node), "mpirun noticed that process rank
// 1 with PID 9 on node n2 exited on signal 9", Slurm's "srun: error: n2: task 1: Killed" and
// "Node failure on n2". The HNP line names mpirun's own host, not the failed one. A plain
// " on node " counts only from the launcher (its dashed block, or a line of mpirun's or prterun's
// own), not from a program's message. 0: none.
int node_line_rank(std::string_view text, bool in_launcher_block) {
  if (text.find("HNP daemon") != std::string_view::npos) return 0;
  if (text.find("Remote daemon") != std::string_view::npos &&
      text.find(" on node ") != std::string_view::npos)
    return 4;
  if (text.find("srun: error: Node failure on ") != std::string_view::npos) return 4;
  const bool launchers_own = in_launcher_block || text.starts_with("mpirun ") ||
                             text.starts_with("prterun ") || text.starts_with("mpiexec ");
  if (launchers_own && text.find(" on node ") != std::string_view::npos) return 3;
  if (text.starts_with("srun: error: ") && text.find(": task ") != std::string_view::npos &&
      (text.ends_with("Killed") || text.find("signal") != std::string_view::npos ||
       names_fatal_signal(text)))
    return 2;
  return 0;
}

bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

// A stderr paragraph of one rank (or of the launcher) ended: the first that speaks of PMI/PMIx
// is the reason a direct launch failed (Open MPI under srun without --mpi=pmix).
void RunAnalyzer::end_paragraph(int rank) {
  const auto it = paragraphs_.find(rank);
  if (it == paragraphs_.end()) return;
  if (pmi_reason_.empty() && it->second.find("PMI") != std::string::npos)
    pmi_reason_ = it->second.substr(0, 300);
  paragraphs_.erase(it);
}

// What a stderr line says about why a run failed (see finish).
void RunAnalyzer::note_stderr(const std::string& text, bool rank_tagged, int rank_key) {
  if (is_separator(text)) {
    end_paragraph(rank_key);
    if (!rank_tagged) {
      if (in_block_ && !block_reason_.empty()) block_reason_done_ = true;
      in_block_ = !in_block_;
    }
  } else if (is_consequence(text)) {
    // Not a cause, nor a last word: a block made of it gives no reason (the next one's does).
  } else if (!is_blank(text)) {
    if (rank_tagged) last_rank_stderr_ = text.substr(0, 1000);
    last_stderr_ = text.substr(0, 1000);
    if (in_block_ && !rank_tagged && !block_reason_done_ && block_reason_.size() < 300)
      block_reason_ +=
          (block_reason_.empty() ? "" : " ") + std::string(util::trim(text)).substr(0, 300);
    if (mentions_error(text) || names_fatal_signal(text))
      (rank_tagged ? last_rank_error_ : last_error_) = text.substr(0, 1000);
    if (!rank_tagged && node_line_rank(text, in_block_) > node_line_rank(node_line_, true))
      node_line_ = std::string(util::trim(text)).substr(0, 300);
    if (pmi_reason_.empty() && (paragraphs_.size() < 1000 || paragraphs_.contains(rank_key))) {
      std::string& paragraph = paragraphs_[rank_key];
      if (paragraph.size() < 300) paragraph += (paragraph.empty() ? "" : " ") + text.substr(0, 300);
    }
  } else {
    end_paragraph(rank_key);
    // The first paragraph of the block is the message; one that ends in ':' goes on into the
    // next ("... could not access or execute an executable:" / "Executable: /x Node: n1").
    if (in_block_ && !block_reason_.empty() && !block_reason_.ends_with(':'))
      block_reason_done_ = true;
  }
}

// The line that names the cause first: MPI's word on the process manager (a direct launch
// without PMI support), then the program's own error, then the launcher's; else the last words
// of the program, mpirun's message, the last stderr line. Across nodes the cause is often a
// node; the launcher names it apart from its message.
std::string RunAnalyzer::failure_reason() {
  std::string reason;
  while (!paragraphs_.empty()) end_paragraph(paragraphs_.begin()->first);
  if (!pmi_reason_.empty())
    reason = pmi_reason_;
  else if (!last_rank_error_.empty())
    reason = last_rank_error_;
  else if (!last_error_.empty())
    reason = last_error_;
  else if (!last_rank_stderr_.empty())
    reason = last_rank_stderr_;
  else if (!block_reason_.empty())
    reason = block_reason_;
  else
    reason = last_stderr_;
  if (pmi_reason_.empty() && !node_line_.empty() && reason.find(node_line_) == std::string::npos)
    reason += (reason.empty() ? "" : " ") + ("[" + node_line_ + "]");

  return reason;
}

}  // namespace scalebench::orchestrator
