#include "orchestrator/run_analysis.hpp"

#include <fmt/format.h>

#include <charconv>
#include <map>

namespace scalebench::orchestrator {
namespace {

std::optional<long long> to_long(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  long long value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc{} || end != text->data() + text->size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

RunAnalysis analyze_run(const std::vector<StampedLine>& lines, std::int64_t start_monotonic_ns,
                        const TagOptions& tags) {
  RunAnalysis analysis;
  std::map<int, double> epoch_start;      // first arrival of `Epoch y/z`
  std::optional<double> done_at;
  std::optional<int> current_epoch;       // the epoch the next end-of-epoch line belongs to
  std::map<int, EpochEnd> epoch_end;
  std::string transport;                  // from the benchmark header

  for (std::size_t seq = 0; seq < lines.size(); ++seq) {
    const auto& stamped = lines[seq];
    const double offset = static_cast<double>(stamped.monotonic_ns - start_monotonic_ns) * 1e-9;
    const auto tagged = parse_tagged_line(stamped.text, tags);
    db::LineRecord record;
    record.seq = static_cast<std::int64_t>(seq);
    record.offset_seconds = offset;
    record.stream = std::string(stream_name(tagged.tag_stream.value_or(stamped.stream)));
    record.rank = tagged.rank;
    record.text = sanitize_utf8(tagged.payload);

    if (const auto marker = parse_epoch_marker(record.text)) {
      if (analysis.total_epochs == 0) analysis.total_epochs = marker->total;
      if (marker->total != analysis.total_epochs) {
        analysis.problems.push_back(fmt::format("line {}: `Epoch {}/{}` disagrees with {} epochs",
                                                seq, marker->epoch, marker->total,
                                                analysis.total_epochs));
      } else if (!epoch_start.contains(marker->epoch)) {
        epoch_start[marker->epoch] = offset;
        current_epoch = marker->epoch;
      }
    } else if (const auto end = parse_epoch_end(record.text); end && current_epoch) {
      epoch_end.try_emplace(*current_epoch, *end);
    } else if (const auto header = parse_trainer_header(record.text); header) {
      if (!analysis.train_images) analysis.train_images = to_long(header->get("train_images"));
    } else if (parse_training_done(record.text) && !done_at) {
      done_at = offset;
      analysis.training_done = true;
    } else if (const auto bench = parse_benchmark_header(record.text); bench) {
      if (!analysis.benchmark) {
        analysis.benchmark = bench->get("benchmark");
        transport = bench->get("transport").value_or("");
      }
    } else if (analysis.benchmark == "allreduce" && !analysis.benchmark_done) {
      // Rows count only between the benchmark's header and its last line, so that a table some
      // other program prints is never taken for one.
      if (const auto row = parse_allreduce_row(record.text)) {
        db::AllreduceRecord result;
        result.seq = record.seq;
        result.transport = transport;
        result.bytes = row->bytes;
        result.count = row->count;
        result.type = row->type;
        result.redop = row->redop;
        result.time_us = row->time_us;
        result.algbw_gbs = row->algbw_gbs;
        result.busbw_gbs = row->busbw_gbs;
        result.wrong = row->wrong;
        analysis.allreduce.push_back(std::move(result));
      } else if (parse_average_bus_bandwidth(record.text)) {
        analysis.benchmark_done = true;
      }
    }
    analysis.lines.push_back(std::move(record));
  }

  if (!epoch_start.empty() && epoch_start.begin()->first == 1)
    analysis.startup_seconds = epoch_start.begin()->second;
  for (const auto& [epoch, start] : epoch_start) {
    db::EpochRecord record;
    record.epoch = epoch;
    record.total_epochs = analysis.total_epochs;
    record.start_offset_seconds = start;
    if (const auto next = epoch_start.find(epoch + 1); next != epoch_start.end())
      record.duration_seconds = next->second - start;
    else if (epoch == analysis.total_epochs && done_at)
      record.duration_seconds = *done_at - start;
    if (const auto end = epoch_end.find(epoch); end != epoch_end.end()) {
      record.trainer_seconds = end->second.epoch_seconds;
      record.loss = end->second.loss;
      record.accuracy = end->second.accuracy;
    }
    analysis.epochs.push_back(record);
  }

  if (analysis.benchmark) {
    // No epochs to expect: the benchmark's own lines say whether it finished.
    if (analysis.benchmark != "allreduce") {
      analysis.problems.push_back(
          fmt::format("unknown benchmark `{}` (this scalebench reads allreduce)", *analysis.benchmark));
    } else {
      long long wrong = 0;
      for (const auto& row : analysis.allreduce) wrong += row.wrong;
      if (analysis.allreduce.empty())
        analysis.problems.push_back("no allreduce result row after the benchmark header");
      if (!analysis.benchmark_done)
        analysis.problems.push_back("no `# Avg bus bandwidth` line, so the benchmark did not finish");
      if (wrong > 0)
        analysis.problems.push_back(fmt::format("{} wrong elements in the allreduce results", wrong));
    }
  } else if (analysis.total_epochs == 0) {
    analysis.problems.push_back("no `Epoch y/z` line");
  } else {
    for (int epoch = 1; epoch <= analysis.total_epochs; ++epoch)
      if (!epoch_start.contains(epoch))
        analysis.problems.push_back(fmt::format("no `Epoch {}/{}` line", epoch, analysis.total_epochs));
    if (!done_at) analysis.problems.push_back("no `Training done:` line, so the last epoch has no end");
  }
  return analysis;
}

}  // namespace scalebench::orchestrator
