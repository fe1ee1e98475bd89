#include "fuzz_targets.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "orchestrator/experiment.hpp"
#include "orchestrator/line_parser.hpp"

namespace scalebench::fuzz {
namespace {

using namespace scalebench::orchestrator;

void require(bool condition, std::string_view what) {
  if (!condition) throw InvariantBroken(std::string(what));
}

bool valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = byte < 0x80             ? 1
                         : (byte & 0xE0) == 0xC0 ? 2
                         : (byte & 0xF0) == 0xE0 ? 3
                         : (byte & 0xF8) == 0xF0 ? 4
                                                 : 0;
    if (length == 0 || i + length > text.size()) return false;
    unsigned code = length == 1 ? byte : byte & (0x7F >> length);
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    const unsigned min_code[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < min_code[length] || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF)
      return false;
    i += length;
  }
  return true;
}

bool finite_non_negative(double value) { return std::isfinite(value) && value >= 0; }

void check_key_values(const std::optional<KeyValueLine>& line) {
  if (!line) return;
  for (const auto& [key, value] : line->fields)
    require(line->get(key).has_value(), "get(key) of a parsed field");
}

void check_line(std::string_view line) {
  for (const bool colon : {false, true}) {
    TagOptions options;
    options.rank_colon_prefix = colon;
    const auto tagged = parse_tagged_line(line, options);
    // The payload is what follows the tag: a suffix of the line.
    require(tagged.payload.size() <= line.size() &&
                tagged.payload.data() + tagged.payload.size() == line.data() + line.size(),
            "parse_tagged_line: payload is a suffix of the line");
    if (tagged.rank) require(*tagged.rank >= 0, "parse_tagged_line: rank >= 0");
    if (!tagged.rank) require(!tagged.tag_stream, "parse_tagged_line: a stream only with a rank");
  }
  if (const auto marker = parse_epoch_marker(line))
    require(1 <= marker->epoch && marker->epoch <= marker->total,
            "parse_epoch_marker: 1 <= y <= z");
  (void)parse_epoch_end(line);
  check_key_values(parse_trainer_header(line));
  check_key_values(parse_training_done(line));
  const auto bench = parse_benchmark_header(line);
  check_key_values(bench);
  if (bench) require(bench->get("benchmark").has_value(), "parse_benchmark_header: has benchmark=");
  if (const auto row = parse_allreduce_row(line)) {
    require(row->bytes >= 0 && row->count >= 0 && row->wrong >= 0, "allreduce row: counts >= 0");
    require(finite_non_negative(row->time_us) && finite_non_negative(row->algbw_gbs) &&
                finite_non_negative(row->busbw_gbs),
            "allreduce row: finite non-negative times and bandwidths");
    require(!row->type.empty() && !row->redop.empty(), "allreduce row: type and redop words");
  }
  if (const auto average = parse_average_bus_bandwidth(line))
    require(finite_non_negative(*average), "average bus bandwidth: finite, >= 0");

  const auto clean = sanitize_utf8(line);
  require(valid_utf8(clean), "sanitize_utf8: valid UTF-8");
  require(clean.size() <= 3 * line.size(), "sanitize_utf8: at most 3 bytes per input byte");
  // Idempotent, but for the one trailing '\r' it drops by contract.
  const auto again = sanitize_utf8(clean);
  if (!clean.empty() && clean.back() == '\r')
    require(again == clean.substr(0, clean.size() - 1), "sanitize_utf8: drops one trailing CR");
  else
    require(again == clean, "sanitize_utf8: idempotent");
}

}  // namespace

void line_parser_target(std::string_view input) {
  check_line(input);
  // Every line of the input too, and the splitter against a plain split.
  LineSplitter splitter;
  std::vector<std::string> lines;
  std::size_t at = 0;
  std::size_t step = input.empty() ? 1 : static_cast<unsigned char>(input[0]) % 7 + 1;
  while (at < input.size()) {
    const auto chunk = input.substr(at, step);
    splitter.feed(chunk, lines);
    at += chunk.size();
    step = step * 5 % 13 + 1;
  }
  const auto rest = splitter.finish();
  std::string joined;
  for (const auto& line : lines) {
    require(line.find('\n') == std::string::npos, "LineSplitter: no newline inside a line");
    check_line(line);
    joined += line;
    joined += '\n';
  }
  if (rest) {
    require(!rest->empty() && rest->find('\n') == std::string::npos,
            "LineSplitter: the rest is one non-empty line");
    joined += *rest;
  }
  require(joined == input, "LineSplitter: lines + rest == input");
}

void experiment_target(std::string_view input) {
  const std::string path = "fuzz.json";
  Experiment experiment;
  try {
    experiment = parse_experiment(std::string(input), path);
  } catch (const ExperimentError& error) {
    const std::string message = error.what();
    require(message.rfind(path + ":", 0) == 0, "ExperimentError starts with the file name");
    require(message.size() < 1000, "ExperimentError is short");
    for (unsigned char c : message)
      require(c >= 0x20 && c < 0x7f, "ExperimentError is one line of printable ASCII");
    return;
  }
  // What was accepted round-trips through its own spec.
  const auto again = parse_experiment(experiment.spec_json, path);
  require(again.spec_json == experiment.spec_json, "spec_json round-trips");
  require(experiment.repetitions >= 1 && experiment.repetitions <= kMaxRepetitions,
          "repetitions in range");
  if (experiment.timeout_seconds)
    require(*experiment.timeout_seconds >= kMinTimeoutSeconds &&
                *experiment.timeout_seconds <= kMaxTimeoutSeconds,
            "timeout in range");

  ExpandOptions options;
  options.default_program = "/opt/scalebench-train";
  options.max_runs = 500;  // keeps each execution fast; the limit logic is the same
  options.seed = 1;        // a randomized order without a seed in the file is expanded too
  // Without exclusions every condition x level combination x np is a cell.
  std::size_t combinations = 1;
  for (const auto& factor : experiment.factors) combinations *= factor.levels.size();
  std::size_t cells = 0;
  for (const auto& condition : experiment.conditions) cells += condition.np.size() * combinations;
  std::vector<RunPlan> plans;
  try {
    plans = expand_matrix(experiment, options);
  } catch (const ExperimentError& error) {
    const std::string message = error.what();
    require(message.rfind(path + ":", 0) == 0 && message.find('\n') == std::string::npos,
            "expand_matrix error: one line naming the file");
    return;
  }
  const auto repetitions = static_cast<std::size_t>(experiment.repetitions);
  if (experiment.exclude.empty())
    require(plans.size() == cells * repetitions, "runs = repetitions x cells");
  else
    require(plans.size() <= cells * repetitions && plans.size() % repetitions == 0,
            "runs = repetitions x the cells left after exclusion");
  for (std::size_t i = 0; i < plans.size(); ++i) {
    require(plans[i].levels.size() == experiment.factors.size(), "one level per factor");
    require(plans[i].repetition == static_cast<int>(i / (plans.size() / repetitions)) + 1,
            "each repetition is one block");
  }
  require(plans.size() <= options.max_runs, "runs <= max_runs");
  for (const auto& plan : plans) {
    require(!plan.launch.argv.empty() && !plan.launch.argv[0].empty(), "argv[0] present");
    for (const auto& arg : plan.launch.argv)
      require(arg.find('\0') == std::string::npos, "no NUL in argv");
    for (const auto& [key, value] : plan.launch.env) {
      require(!key.empty() && key.find_first_of("=", 0) == std::string::npos &&
                  key.find('\0') == std::string::npos && value.find('\0') == std::string::npos,
              "env: portable key, no NUL");
    }
    if (plan.launch.timeout)
      require(plan.launch.timeout->count() >= 1 &&
                  plan.launch.timeout->count() <= static_cast<long long>(kMaxTimeoutSeconds * 1000),
              "timeout converted in range");
    require(plan.np >= 1 && plan.np <= kMaxNp, "np in range");
  }
}

}  // namespace scalebench::fuzz
