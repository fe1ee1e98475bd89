#include "orchestrator/run_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "orchestrator/line_forms.hpp"
#include "util/terminal.hpp"
#include "util/text.hpp"

namespace scalebench::orchestrator {
namespace {

std::optional<long long> to_long(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  long long value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc{} || end != text->data() + text->size() || value < 0) return std::nullopt;
  return value;
}

// "no `Epoch 2/9` line" or "no `Epoch 2/9` … `Epoch 7/9` lines (6 missing)".
std::string missing_range(int first, int last, int total) {
  if (first == last) return fmt::format("no `Epoch {}/{}` line", first, total);
  return fmt::format("no `Epoch {}/{}` … `Epoch {}/{}` lines ({} missing)", first, total, last,
                     total, static_cast<long long>(last) - first + 1);
}

}  // namespace

std::string printable_excerpt(std::string_view text, std::size_t max_bytes) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && out.size() < max_bytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    // U+0080..U+009F (C1) are 0xC2 0x80..0x9F in UTF-8.
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[++i]));
    } else if (c < 0x20 || c == 0x7F) {
      out += c == '\t' ? std::string(" ") : fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (out.size() >= max_bytes && text.size() > max_bytes) out += "…";
  return out;
}

RunAnalyzer::RunAnalyzer(std::int64_t start_monotonic_ns, TagOptions tags, RunExpectations expected)
    : start_ns_(start_monotonic_ns), tags_(tags), expected_(expected) {}

// Our trainer's header names the MPI size it found. Launched N times by a foreign MPI it runs N
// independent trainings of size 1: the run is something else than the np it is stored under.
void RunAnalyzer::check_np(const std::optional<std::string>& reported, std::int64_t seq) {
  if (np_checked_ || !reported || !expected_.np) return;
  np_checked_ = true;
  const auto np = to_long(reported);
  if (np && *np != *expected_.np)
    problem(fmt::format(
        "line {}: the trainer reports np={} but the run was launched for np={} (a launcher whose "
        "MPI the trainer does not share starts independent processes)",
        seq, *np, *expected_.np));
}

void RunAnalyzer::problem(std::string text) {
  if (analysis_.problems.size() < kMaxProblems)
    analysis_.problems.push_back(std::move(text));
  else
    ++dropped_problems_;
}

// `Epoch y/z` (or a line form's start) from a rank at `at`: the epoch's first arrival starts it.
void RunAnalyzer::on_marker(const EpochMarker& marker, std::int64_t seq, double at, int rank_key) {
  if (analysis_.total_epochs == 0) analysis_.total_epochs = marker.total;
  if (marker.total != analysis_.total_epochs && marker.total != 0) {
    problem(fmt::format("line {}: `Epoch {}/{}` disagrees with {} epochs", seq, marker.epoch,
                        marker.total, analysis_.total_epochs));
  } else if (epoch_start_.contains(marker.epoch)) {
    // The same epoch from another rank: the first arrival counts. The same epoch started again
    // by one rank (a restarted loop, two trainings in one output) would make the epoch span
    // both copies: a problem. Untagged lines of np > 1 ranks cannot be told apart: there, more
    // starts than ranks is the problem. A line form's start is a bar redrawn: not counted.
    note_rank_start(marker.epoch, rank_key, at);
    if (!expected_.line_forms && rank_entries_ < kMaxRankEntries) {
      const int starts = ++rank_start_count_[{marker.epoch, rank_key}];
      const int allowed = rank_key == kUntagged ? std::max(1, expected_.np.value_or(1)) : 1;
      if (starts == allowed + 1) {
        const auto shown = marker.total > 0
                               ? fmt::format("`Epoch {}/{}`", marker.epoch, marker.total)
                               : fmt::format("epoch {}", marker.epoch);
        problem(rank_key == kUntagged
                    ? fmt::format("line {}: {} started again (the same epoch started twice)", seq,
                                  shown)
                    : fmt::format("line {}: {} started again by rank {} (the same epoch started "
                                  "twice)",
                                  seq, shown, rank_key));
      }
    }
  } else if (marker.epoch < max_started_epoch_) {
    problem(marker.total > 0
                ? fmt::format("line {}: `Epoch {}/{}` arrived after `Epoch {}/{}` (out of order)",
                              seq, marker.epoch, marker.total, max_started_epoch_, marker.total)
                : fmt::format("line {}: epoch {} began after epoch {} (out of order)", seq,
                              marker.epoch, max_started_epoch_));
  } else if (analysis_.total_epochs > 0 && marker.epoch > analysis_.total_epochs) {
    problem(fmt::format("line {}: epoch {} of {}", seq, marker.epoch, analysis_.total_epochs));
  } else if (epoch_start_.size() >= kMaxTrackedEpochs) {
    if (!epoch_limit_reported_)
      problem(fmt::format("line {}: more than {} epochs; the rest are not measured", seq,
                          kMaxTrackedEpochs));
    epoch_limit_reported_ = true;
  } else {
    epoch_start_[marker.epoch] = at;
    note_rank_start(marker.epoch, rank_key, at);
    if (!expected_.line_forms && rank_entries_ < kMaxRankEntries)
      ++rank_start_count_[{marker.epoch, rank_key}];
    max_started_epoch_ = marker.epoch;
    if (last_marker_at_) longest_marker_gap_ = std::max(longest_marker_gap_, at - *last_marker_at_);
    last_marker_at_ = at;
  }
}

// A line form's metrics (the latest of the rank's lines) go to the epoch the rank is in.
void RunAnalyzer::attach_form_metrics(int rank_key) {
  const auto metrics = form_metrics_.find(rank_key);
  if (metrics == form_metrics_.end() || !current_epoch_.contains(rank_key)) return;
  set_metrics(epoch_end_[current_epoch_[rank_key]], metrics->second);
  form_metrics_.erase(metrics);
}

void RunAnalyzer::set_metrics(EpochEnd& values,
                              const std::vector<std::pair<std::string, double>>& metrics) {
  for (const auto& [name, value] : metrics) {
    if (name == "loss") values.loss = value;
    if (name == "accuracy") values.accuracy = value;
    if (name == "test_accuracy") values.test_accuracy = value;
    if (name == "validation_accuracy") values.validation_accuracy = value;
    if (name == "images_per_second") values.images_per_second = value;
  }
}

// For a run without `Epoch y/z`: the first line a preset would take for an epoch's start or end.
std::optional<std::string> RunAnalyzer::hint_for(std::string_view text) const {
  static const auto presets = [] {
    std::vector<std::shared_ptr<const LineForms>> out;
    for (const auto name : kLineFormNames)
      if (auto forms = line_forms_named(name)) out.push_back(std::move(forms));
    return out;
  }();
  // A launcher's prefix the run was not told of ("line_tags") hides `Epoch y/z` behind it.
  for (const auto name : kLineTagNames) {
    if (name == "openmpi") continue;
    const auto tagged = parse_tagged_line(text, tag_options_named(name));
    if (tagged.rank && parse_epoch_marker(tagged.payload))
      return fmt::format(
          "`{}` has a launcher's prefix: try \"line_tags\": \"{}\" "
          "(docs/launchers.md)",
          printable_excerpt(text, 60), name);
  }
  for (const auto& forms : presets) {
    const FormMatch match = match_line_forms(*forms, text);
    if (match.start || match.ends)
      return fmt::format(
          "`{}` looks like an epoch marker: try \"line_forms\": \"{}\" "
          "(docs/measuring-your-script.md)",
          printable_excerpt(text, 60), forms->name);
  }
  return std::nullopt;
}

// A rank's line that is not finished yet (no newline of its own so far), and when its first
// chunk arrived; bounded per rank.
void RunAnalyzer::hold_partial(int rank, Stream stream, std::string_view text,
                               std::optional<double> at) {
  if (partial_lines_.size() >= 100'000 && !partial_lines_.contains({rank, stream})) return;
  auto [it, inserted] = partial_lines_.try_emplace({rank, stream}, PartialLine{{}, at});
  std::string& held = it->second.text;
  held.append(text.substr(0, kMaxLineBytes - std::min(kMaxLineBytes, held.size())));
}

std::optional<RunAnalyzer::PartialLine> RunAnalyzer::take_partial(int rank, Stream stream) {
  const auto it = partial_lines_.find({rank, stream});
  if (it == partial_lines_.end()) return std::nullopt;
  PartialLine held = std::move(it->second);
  partial_lines_.erase(it);
  return held;
}

// When the byte at `at` of the line's raw text arrived (seconds from the start): the line's
// first byte, or the later chunk that brought it; absent when the executor did not say.
std::optional<double> RunAnalyzer::arrival_of(const StampedLine& stamped, std::size_t at) const {
  if (stamped.first_byte_ns <= 0 || stamped.first_byte_ns > stamped.monotonic_ns)
    return std::nullopt;
  std::int64_t ns = stamped.first_byte_ns;
  const auto later = std::upper_bound(
      stamped.arrivals.begin(), stamped.arrivals.end(), at,
      [](std::size_t offset, const ByteArrival& mark) { return offset < mark.offset; });
  if (later != stamped.arrivals.begin()) ns = std::prev(later)->ns;
  return static_cast<double>(ns - start_ns_) * 1e-9;
}

// Rank `rank` began `epoch` at `at` (its first marker for it): that rank's end lines belong to
// it from now on, and its start ends its previous epoch for the per-rank end times.
void RunAnalyzer::note_rank_start(int epoch, int rank, double at) {
  auto& current = current_epoch_[rank];
  current = std::max(current, epoch);
  if (rank_entries_ < kMaxRankEntries && rank_start_at_[epoch].try_emplace(rank, at).second)
    ++rank_entries_;
}

// Each rank's own line: under mpirun, ranks that write partial lines interleave within one
// physical line (see split_tagged_chunks), and a rank's line ends with the physical line that
// carries its newline. `text` is set only when the line was put together from chunks; `began`
// is when the rank's line's first chunk arrived (its own tag's arrival, kept with the held part
// across physical lines), so that a progress bar's epoch starts at its first byte under mpirun.
RunAnalyzer::RankLine RunAnalyzer::rank_line(const StampedLine& stamped, const TaggedLine& tagged,
                                             Stream stream) {
  RankLine out{tagged.rank, stream, std::nullopt, arrival_of(stamped, 0)};
  if (!tagged.rank) return out;
  if (tagged.payload.find("]<std") != std::string_view::npos) {
    const auto chunks = split_tagged_chunks(tagged.payload);
    // A chunk's tag begins where the previous chunk's text ends (the first: the line's start).
    const auto chunk_arrival = [&](std::size_t i) -> std::optional<double> {
      if (i == 0) return arrival_of(stamped, 0);
      const auto& before = chunks[i - 1].text;
      return arrival_of(
          stamped, static_cast<std::size_t>(before.data() - stamped.text.data()) + before.size());
    };
    for (std::size_t i = 0; i + 1 < chunks.size(); ++i)
      hold_partial(chunks[i].rank.value_or(*tagged.rank), chunks[i].stream.value_or(stream),
                   chunks[i].text, chunk_arrival(i));
    const auto& last = chunks.back();
    out.rank = last.rank.value_or(*tagged.rank);
    out.stream = last.stream.value_or(stream);
    auto held = take_partial(*out.rank, out.stream);
    out.began = held ? held->began : chunk_arrival(chunks.size() - 1);
    out.text = sanitize_utf8((held ? held->text : std::string()) + std::string(last.text));
  } else if (!partial_lines_.empty()) {
    if (auto held = take_partial(*tagged.rank, stream)) {
      out.text = sanitize_utf8(held->text + std::string(tagged.payload));
      out.began = held->began;
    }
  }
  return out;
}

// What a line says about epochs under the experiment's line_forms; its metrics are kept for the
// rank's epoch.
RunAnalyzer::EpochLine RunAnalyzer::read_form_line(const std::string& text, int rank_key) {
  const LineForms& forms = *expected_.line_forms;
  const FormMatch match = match_line_forms(forms, text);
  EpochLine out{match.start, std::nullopt, std::nullopt};
  if (match.ends) {
    out.end = EpochEnd{};
    const int epoch = match.end_epoch.value_or(0) > 0
                          ? *match.end_epoch
                          : (current_epoch_.contains(rank_key) ? current_epoch_[rank_key] : 0);
    // A form with ends only: the epoch began where the previous one ended (or at the start).
    if (!forms.epoch_start && epoch > 0 && !epoch_start_.contains(epoch)) {
      const auto previous = epoch_end_line_at_.find(epoch - 1);
      out.marker = EpochMarker{epoch, forms.total_epochs.value_or(0)};
      out.marker_at = previous == epoch_end_line_at_.end() ? 0.0 : previous->second.begin()->second;
    }
  }
  if (!match.metrics.empty()) {
    // The latest per rank, for the rank's epoch; or the epoch the line says (Hugging Face).
    if (match.metrics_epoch &&
        (epoch_end_.size() < kMaxTrackedEpochs || epoch_end_.contains(*match.metrics_epoch)))
      set_metrics(epoch_end_[*match.metrics_epoch], match.metrics);
    else
      form_metrics_[rank_key] = match.metrics;
  }
  if (!match.previous_epoch_metrics.empty()) {
    // On a line that starts a new epoch they are the previous epoch's; on a repeated start line
    // of the same epoch (the bar's last redraw), its own.
    const bool starts_new = match.start && !epoch_start_.contains(match.start->epoch);
    if (starts_new && match.start->epoch > 1)
      set_metrics(epoch_end_[match.start->epoch - 1], match.previous_epoch_metrics);
    else if (!starts_new)
      form_metrics_[rank_key].insert(form_metrics_[rank_key].end(),
                                     match.previous_epoch_metrics.begin(),
                                     match.previous_epoch_metrics.end());
  }
  return out;
}

// Starts and ends of epochs; true when the line was one. `began`: when the line's first byte
// arrived, which dates a start; absent for a redrawn line whose first byte is undated (its
// newline dates it, and the epoch it starts says so).
bool RunAnalyzer::read_epoch_line(const std::string& text, std::int64_t seq, double offset,
                                  std::optional<double> began, int rank_key) {
  EpochLine line;
  if (expected_.line_forms) {
    line = read_form_line(text, rank_key);
  } else if (!(line.marker = parse_epoch_marker(text))) {
    line.end = parse_epoch_end(text);
    if (!line.end && !form_hint_ && !analysis_.benchmark && seq < 10'000 && max_started_epoch_ == 0)
      form_hint_ = hint_for(text);
  }
  if (line.marker) {
    const bool fresh = !epoch_start_.contains(line.marker->epoch);
    on_marker(*line.marker, seq, line.marker_at.value_or(began.value_or(offset)), rank_key);
    if (fresh && !began && !line.marker_at && epoch_start_.contains(line.marker->epoch) &&
        undated_starts_.size() < kMaxProblems)
      undated_starts_.emplace(line.marker->epoch, seq);
  }
  if (expected_.line_forms) attach_form_metrics(rank_key);
  if (line.end && current_epoch_.contains(rank_key)) {
    // A rank's end line ends that rank's epoch, never another's (every rank may print).
    const int epoch = rank_key == kUntagged ? untagged_end_epoch(current_epoch_[rank_key], offset)
                                            : current_epoch_[rank_key];
    if (!expected_.line_forms) epoch_end_.try_emplace(epoch, *line.end);
    if (rank_entries_ < kMaxRankEntries &&
        epoch_end_line_at_[epoch].try_emplace(rank_key, offset).second)
      ++rank_entries_;
    // Untagged lines of several printing ranks: the epoch ends at the last of their end lines.
    if (rank_key == kUntagged && ++untagged_ends_[epoch] <= untagged_printers(epoch))
      epoch_end_line_at_[epoch][kUntagged] = offset;
  }
  return line.marker || line.end;
}

// How many ranks printed `Epoch y/z` for `epoch` without a tag (1 when not counted: a line
// form's start is a bar redrawn, so its starts are not ranks).
int RunAnalyzer::untagged_printers(int epoch) const {
  const auto it = rank_start_count_.find({epoch, kUntagged});
  return it == rank_start_count_.end() ? 1 : std::max(1, it->second);
}

// The epoch an untagged end line ends. With every rank printing and nothing telling the ranks
// apart, a slower rank's end line of epoch y can arrive after a faster rank began y + 1: while
// epoch y has fewer end lines than ranks that printed its `Epoch y/z`, a line that arrives in
// the first half of y + 1 (ranks in lock-step are milliseconds apart) is y's. Later, it is
// y + 1's own (a script whose ranks all print `Epoch` but only rank 0 its end lines).
int RunAnalyzer::untagged_end_epoch(int current, double at) const {
  const int previous = current - 1;
  if (previous < 1 || untagged_printers(previous) < 2) return current;
  const auto began = epoch_start_.find(current);
  const auto before = epoch_start_.find(previous);
  if (began == epoch_start_.end() || before == epoch_start_.end() ||
      at - began->second > 0.5 * (began->second - before->second))
    return current;
  const auto ends = untagged_ends_.find(previous);
  const int seen = ends == untagged_ends_.end() ? 0 : ends->second;
  return seen < untagged_printers(previous) ? previous : current;
}

// Our trainer's header and last line, and the allreduce benchmark's lines.
void RunAnalyzer::read_trainer_line(const std::string& text, std::int64_t seq, double offset) {
  if (const auto header = parse_trainer_header(text); header) {
    if (!analysis_.train_images) analysis_.train_images = to_long(header->get("train_images"));
    if (!analysis_.hosts) analysis_.hosts = header->get("hosts");
    if (!analysis_.rank_hosts) analysis_.rank_hosts = header->get("rank_hosts");
    check_np(header->get("np"), seq);
  } else if (parse_training_done(text) && !done_at_) {
    done_at_ = offset;
    analysis_.training_done = true;
  } else if (const auto bench = parse_benchmark_header(text); bench) {
    if (!analysis_.benchmark) {
      analysis_.benchmark = bench->get("benchmark");
      transport_ = bench->get("transport").value_or("");
      if (!analysis_.hosts) analysis_.hosts = bench->get("hosts");
      if (!analysis_.rank_hosts) analysis_.rank_hosts = bench->get("rank_hosts");
    }
    check_np(bench->get("np"), seq);
  } else if (analysis_.benchmark == "allreduce" && !analysis_.benchmark_done) {
    // Rows count only between the benchmark's header and its last line, so that a table some
    // other program prints is never taken for one.
    if (const auto row = parse_allreduce_row(text)) {
      if (analysis_.allreduce.size() < kMaxAllreduceRows) {
        db::AllreduceRecord result;
        result.seq = seq;
        result.transport = transport_;
        result.bytes = row->bytes;
        result.count = row->count;
        result.type = row->type;
        result.redop = row->redop;
        result.time_us = row->time_us;
        result.algbw_gbs = row->algbw_gbs;
        result.busbw_gbs = row->busbw_gbs;
        result.wrong = row->wrong;
        analysis_.allreduce.push_back(std::move(result));
      } else if (analysis_.allreduce.size() == kMaxAllreduceRows) {
        problem(fmt::format("line {}: more than {} allreduce rows; the rest are not read", seq,
                            kMaxAllreduceRows));
      }
    } else if (parse_average_bus_bandwidth(text)) {
      analysis_.benchmark_done = true;
    }
  }
}

db::LineRecord RunAnalyzer::add(const StampedLine& stamped) {
  const std::int64_t seq = seq_++;
  const double offset = static_cast<double>(stamped.monotonic_ns - start_ns_) * 1e-9;
  const auto tagged = parse_tagged_line(stamped.text, tags_);
  db::LineRecord record;
  record.seq = seq;
  record.offset_seconds = offset;
  const Stream stream = tagged.tag_stream.value_or(stamped.stream);
  record.stream = std::string(stream_name(stream));
  record.rank = tagged.rank;
  if (tagged.worker_pid && worker_index_.size() < 100'000) {
    // Ray names workers by pid: they are numbered in order of first appearance.
    const auto [it, inserted] =
        worker_index_.try_emplace(*tagged.worker_pid, static_cast<int>(worker_index_.size()));
    record.rank = it->second;
  }
  // A launcher tag in the middle of the payload is a chunk boundary, not text (Open MPI tags
  // every chunk it reads: `[1,0]<stdout>:Epoch 2/3[1,0]<stdout>:` under python -u).
  // The common line has no `]<std` at all: no copy for it on this path (every line comes here).
  record.text = tagged.payload.find("]<std") == std::string_view::npos
                    ? sanitize_utf8(tagged.payload)
                    : sanitize_utf8(remove_embedded_tags(tagged.payload));
  // What is analysed is each rank's own line, as a terminal shows it (progress bars redraw with
  // \r and \b, in colour); the stored text stays as it arrived.
  RankLine own = rank_line(stamped, tagged, stream);
  if (!tagged.rank) own.rank = record.rank;  // Ray's workers
  const std::string& line_text = own.text ? *own.text : record.text;
  const bool redrawn = util::needs_terminal_view(line_text);
  const std::string shown = redrawn ? util::terminal_view(line_text) : std::string();
  const std::string& text = redrawn ? shown : line_text;
  last_line_at_ = offset;
  const int rank_key = own.rank.value_or(kUntagged);
  if (own.stream == Stream::Stderr) note_stderr(text, tagged.rank.has_value(), rank_key);
  // A line that starts an epoch marks it from its first byte: a progress bar's line (Lightning's
  // `Epoch 1: ...`, tqdm's) begins when the epoch does and ends with the epoch's training. Under
  // a launcher that tags each chunk, the rank's own first chunk (rank_line). A line that arrived
  // whole needs none; a redrawn one without it is undated.
  const auto began = own.began ? std::optional(std::min(*own.began, offset))
                     : redrawn ? std::nullopt
                               : std::optional(offset);
  if (!read_epoch_line(text, seq, offset, began, rank_key)) read_trainer_line(text, seq, offset);
  return record;
}

RunAnalysis RunAnalyzer::finish(std::optional<double> exit_offset_seconds) {
  RunAnalysis& analysis = analysis_;
  analysis.line_count = seq_;
  if (!analysis.train_images) analysis.train_images = expected_.train_images;
  analysis.failure_reason = failure_reason();

  // A line form that does not say how many epochs: as many as began.
  if (analysis.total_epochs == 0 && expected_.line_forms && !epoch_start_.empty())
    analysis.total_epochs = epoch_start_.rbegin()->first;
  if (!epoch_start_.empty() && epoch_start_.begin()->first == 1)
    analysis.startup_seconds = epoch_start_.begin()->second;
  bool last_epoch_unended = false;
  for (const auto& [epoch, start] : epoch_start_) {
    db::EpochRecord record;
    record.epoch = epoch;
    record.total_epochs = analysis.total_epochs;
    record.start_offset_seconds = start;
    std::optional<double> duration;
    const char* rule = nullptr;
    const auto ends_at = [&](double at, const char* name) {
      duration = at - start;
      rule = name;
    };
    if (const auto next = epoch_start_.find(epoch + 1); next != epoch_start_.end()) {
      ends_at(next->second, "next_epoch");
    } else if (epoch == analysis.total_epochs) {
      // The last epoch: our trainer's end line, else the program's own end-of-epoch line, else
      // the last line it printed, else its exit (a script that prints only `Epoch y/z`).
      // With every rank printing, the epoch ends when the last of them ends it.
      const auto end_line = epoch_end_line_at_.find(epoch);
      if (done_at_)
        ends_at(*done_at_, "training_done");
      else if (end_line != epoch_end_line_at_.end())
        ends_at(std::max_element(end_line->second.begin(), end_line->second.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; })
                    ->second,
                "epoch_end_line");
      else if (last_line_at_ && *last_line_at_ > start)
        ends_at(*last_line_at_, "last_line");
      else if (exit_offset_seconds && *exit_offset_seconds > start)
        ends_at(*exit_offset_seconds, "exit");
      else
        last_epoch_unended = true;
    }
    if (duration && *duration < 0) {
      // Arrival times only grow, so this is a `Training done:` before the last epoch began.
      problem(fmt::format("`Training done:` arrived before `Epoch {}/{}`", epoch,
                          analysis.total_epochs));
      duration.reset();
      rule = nullptr;
    }
    record.duration_seconds = duration;
    if (rule) record.end_rule = rule;
    record.rank_ends = rank_ends(epoch);
    if (const auto end = epoch_end_.find(epoch); end != epoch_end_.end()) {
      record.trainer_seconds = end->second.epoch_seconds;
      record.loss = end->second.loss;
      record.accuracy = end->second.accuracy;
      record.test_accuracy = end->second.test_accuracy;
      record.validation_accuracy = end->second.validation_accuracy;
    }
    analysis.epochs.push_back(record);
  }

  if (analysis.benchmark) {
    // No epochs to expect: the benchmark's own lines say whether it finished.
    if (analysis.benchmark != "allreduce") {
      problem(fmt::format("unknown benchmark `{}` (this scalebench reads allreduce)",
                          *analysis.benchmark));
    } else {
      long long wrong = 0;
      for (const auto& row : analysis.allreduce) wrong += row.wrong;
      if (analysis.allreduce.empty()) problem("no allreduce result row after the benchmark header");
      if (!analysis.benchmark_done)
        problem("no `# Avg bus bandwidth` line, so the benchmark did not finish");
      if (wrong > 0) problem(fmt::format("{} wrong elements in the allreduce results", wrong));
    }
  } else if (analysis.total_epochs == 0 && (epoch_start_.empty() || !expected_.line_forms)) {
    problem(expected_.line_forms
                ? fmt::format("no line of the \"{}\" line form began an epoch",
                              expected_.line_forms->name)
                : "no `Epoch y/z` line" + (form_hint_ ? "; " + *form_hint_ : std::string()));
  } else {
    // Missing epochs as ranges: `Epoch 1/100000000` alone must not make 10^8 messages.
    int expected = 1;
    const auto report_gap = [&](int upto) {
      if (expected <= upto) problem(missing_range(expected, upto, analysis.total_epochs));
    };
    for (const auto& [epoch, start] : epoch_start_) {
      report_gap(epoch - 1);
      expected = epoch + 1;
    }
    report_gap(analysis.total_epochs);
    for (const auto& [epoch, line] : undated_starts_)
      problem(fmt::format(
          "line {}: epoch {} starts at a progress bar's line, but when its first byte arrived is "
          "unknown: the first-byte rule could not be applied (dated at its newline, the bar's end)",
          line, epoch));
    if (last_epoch_unended)
      problem(fmt::format(
          "the last epoch has no end: no `Training done:` line, no end-of-epoch line and no "
          "later line after `Epoch {0}/{0}`",
          analysis.total_epochs));
    check_timing(analysis);
  }
  if (dropped_problems_ > 0)
    analysis.problems.push_back(fmt::format("and {} more problems", dropped_problems_));
  return std::move(analysis_);
}

// When each rank ended `epoch`: its end-of-epoch line, else its marker of the next epoch. Only
// where two or more ranks printed for the epoch (one printing rank has no spread to show).
std::vector<db::RankEnd> RunAnalyzer::rank_ends(int epoch) const {
  std::map<int, std::pair<double, const char*>> ends;
  if (const auto next = rank_start_at_.find(epoch + 1); next != rank_start_at_.end())
    for (const auto& [rank, at] : next->second) ends[rank] = {at, "next_epoch"};
  if (const auto lines = epoch_end_line_at_.find(epoch); lines != epoch_end_line_at_.end())
    for (const auto& [rank, at] : lines->second) ends[rank] = {at, "epoch_end_line"};
  std::vector<db::RankEnd> out;
  if (ends.size() < 2) return out;
  for (const auto& [rank, end] : ends)
    if (rank != kUntagged) out.push_back({rank, end.first, end.second});
  return out;
}

// Epochs that cannot be measured from arrival times: all markers in one burst (output held in a
// buffer and flushed at exit), or line-timed durations that disagree with the program's own
// epoch clock (docs/metrics.md, "When line times cannot be trusted").
void RunAnalyzer::check_timing(const RunAnalysis& analysis) {
  if (epoch_start_.size() >= 2 && longest_marker_gap_ < kBurstGapSeconds) {
    problem(fmt::format(
        "the `Epoch` lines arrived in one burst (at most {:.3f} ms apart): the program's output "
        "was buffered, so arrival times do not measure its epochs; flush each line (python -u, "
        "PYTHONUNBUFFERED=1, or \"stdout\": \"pty\")",
        longest_marker_gap_ * 1e3));
    return;
  }
  // With several ranks printing untagged lines, which rank printed a line is unknown: a line
  // that arrived out of place is then that, not a clock that disagrees.
  const bool untagged_every_rank =
      std::any_of(epoch_start_.begin(), epoch_start_.end(),
                  [&](const auto& entry) { return untagged_printers(entry.first) > 1; });
  const std::string untagged =
      untagged_every_rank
          ? "untagged every-rank output (several ranks print and no launcher tag tells them "
            "apart; run under mpirun --tag-output or torchrun, or print on rank 0 only): "
          : "";
  for (const auto& epoch : analysis.epochs) {
    if (!epoch.duration_seconds || !epoch.trainer_seconds) continue;
    // A value printed in whole seconds (Keras) may be half a second from its clock's reading.
    const auto end = epoch_end_.find(epoch.epoch);
    const double resolution = end == epoch_end_.end() ? 0.0 : end->second.epoch_seconds_resolution;
    const double difference =
        std::max(0.0, std::abs(*epoch.duration_seconds - *epoch.trainer_seconds) - resolution);
    if (difference > kClockToleranceSeconds &&
        difference > kClockToleranceFraction * *epoch.trainer_seconds) {
      problem(fmt::format(
          "{}epoch {}: {:.3f} s from line arrivals but {:.3f} s by the program's own clock (more "
          "than {} s and {:.0f}% apart): {}",
          untagged, epoch.epoch, *epoch.duration_seconds, *epoch.trainer_seconds,
          kClockToleranceSeconds, kClockToleranceFraction * 100,
          untagged_every_rank ? "its lines cannot be given to their ranks"
                              : "its lines did not arrive as they were printed"));
      return;
    }
  }
  check_last_epoch(analysis, untagged);
}

// The last epoch is ended by a rule of its own (docs/metrics.md): one that read the wrong line
// (a slower rank's end line, a start dated at a bar's end) makes it a sliver of the others. Under
// a fifth of the median of the epochs between the first (the warm-up) and it, with no clock of the
// program's own to confirm it, the run is not measured right, and the rule is named.
void RunAnalyzer::check_last_epoch(const RunAnalysis& analysis, const std::string& untagged) {
  if (analysis.epochs.size() < 2) return;
  const auto& last = analysis.epochs.back();
  if (last.epoch != analysis.total_epochs || !last.duration_seconds || last.trainer_seconds) return;
  // The first epoch holds the warm-up (allocation, autotuning, compilation, and for forms marked
  // by ends only the start-up: several times the others) and is never the measure: a run of two
  // epochs is not checked.
  std::vector<double> others;
  for (const auto& epoch : analysis.epochs)
    if (&epoch != &last && epoch.duration_seconds && epoch.epoch != 1)
      others.push_back(*epoch.duration_seconds);
  if (others.empty()) return;
  std::nth_element(others.begin(), others.begin() + others.size() / 2, others.end());
  const double median = others[others.size() / 2];
  if (*last.duration_seconds >= kShortLastEpochFraction * median) return;
  const std::string rule = last.end_rule.value_or("none");
  problem(fmt::format(
      "{}epoch {} (the last) lasted {:.3f} s by the rule `{}`, under a fifth of the other "
      "epochs' median ({:.3f} s): {}; its time is not the epoch's (docs/metrics.md, \"The last "
      "epoch\")",
      untagged, last.epoch, *last.duration_seconds, rule, median,
      rule == "epoch_end_line"
          ? "the end-of-epoch line that ended it is not the last rank's end of this epoch"
      : rule == "training_done"
          ? "`Training done:` arrived right after the epoch began"
          : "its start was dated at the end of its line (the first-byte rule not applied), or "
            "the program printed its start line when the epoch's work was done"));
}

void shift_offsets(RunAnalysis& analysis, double seconds) {
  if (analysis.startup_seconds) *analysis.startup_seconds += seconds;
  for (auto& epoch : analysis.epochs) epoch.start_offset_seconds += seconds;
  for (auto& line : analysis.lines) line.offset_seconds += seconds;
}

RunAnalysis analyze_run(const std::vector<StampedLine>& lines, std::int64_t start_monotonic_ns,
                        const TagOptions& tags, const RunExpectations& expected,
                        std::optional<double> exit_offset_seconds) {
  RunAnalyzer analyzer(start_monotonic_ns, tags, expected);
  std::vector<db::LineRecord> records;
  records.reserve(lines.size());
  for (const auto& line : lines) records.push_back(analyzer.add(line));
  RunAnalysis analysis = analyzer.finish(exit_offset_seconds);
  analysis.lines = std::move(records);
  return analysis;
}

}  // namespace scalebench::orchestrator
