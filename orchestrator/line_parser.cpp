#include "orchestrator/line_parser.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <tuple>

#include "util/text.hpp"

namespace scalebench::orchestrator {
namespace {

using util::trim;

bool is_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  return true;
}

std::optional<int> to_int(std::string_view text) {
  if (!is_digits(text) || text.size() > 9) return std::nullopt;
  int value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

std::optional<double> to_double(std::string_view text) {
  text = trim(text);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<long long> to_count(std::string_view text) {
  if (!is_digits(text) || text.size() > 18) return std::nullopt;
  long long value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// A finite number >= 0, as the benchmark prints times and bandwidths.
std::optional<double> to_non_negative(std::string_view text) {
  const auto value = to_double(text);
  if (!value || !std::isfinite(*value) || *value < 0) return std::nullopt;
  return value;
}

bool is_word(std::string_view text) {
  if (text.empty() || text.size() > 32) return false;
  for (char c : text)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return !(text.front() >= '0' && text.front() <= '9');
}

// Fields separated by runs of spaces or tabs.
std::vector<std::string_view> split_fields(std::string_view text) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  return fields;
}

// horovodrun's optional prefix: `Mon Nov 22 10:00:00 2026` (strftime "%a %b %d %H:%M:%S %Y").
bool looks_like_timestamp(std::string_view prefix) {
  prefix = trim(prefix);
  if (prefix.size() < 20 || prefix.size() > 32) return false;
  int colons = 0;
  for (char c : prefix) {
    if (c == ':')
      ++colons;
    else if (!(c == ' ' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
               (c >= 'a' && c <= 'z')))
      return false;
  }
  return colons == 2;
}

std::optional<KeyValueLine> parse_key_values(std::string_view text) {
  KeyValueLine line;
  while (true) {
    text = trim(text);
    if (text.empty()) break;
    const auto space = text.find(' ');
    const auto token = text.substr(0, space);
    const auto equals = token.find('=');
    if (equals == std::string_view::npos || equals == 0) return std::nullopt;
    line.fields.emplace_back(std::string(token.substr(0, equals)),
                             std::string(token.substr(equals + 1)));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space);
  }
  return line;
}

}  // namespace

std::string_view stream_name(Stream stream) {
  return stream == Stream::Stdout ? "stdout" : "stderr";
}

namespace {

// `(?<name>` (ECMAScript's and .NET's spelling, which RE2 of Debian 12 lacks) -> `(?P<name>`;
// each name checked against `names`. Escapes and character classes are copied as they are.
std::string to_re2_syntax(const std::string& pattern, const std::vector<std::string_view>& names) {
  std::string out;
  std::vector<std::string> seen;
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (pattern.compare(i, 2, "\\Q") == 0) {
      // RE2's quoted literal text, up to \E (or the end): no group can begin inside it.
      const auto end = pattern.find("\\E", i + 2);
      const auto stop = end == std::string::npos ? pattern.size() : end + 2;
      out += pattern.substr(i, stop - i);
      i = stop - 1;
      continue;
    }
    if (c == '\\' && i + 1 < pattern.size()) {
      out += pattern.substr(i, 2);
      ++i;
      continue;
    }
    if (in_class) {
      in_class = c != ']';
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
      // `[]...]` and `[^]...]`: a ']' first in a class is a literal.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    }
    const bool named = pattern.compare(i, 3, "(?<") == 0;
    const bool perl_named = pattern.compare(i, 4, "(?P<") == 0;
    if (!named && !perl_named) {
      out += c;
      continue;
    }
    const std::size_t name_at = i + (named ? 3 : 4);
    if (named && name_at < pattern.size() && (pattern[name_at] == '=' || pattern[name_at] == '!'))
      throw std::invalid_argument("no lookbehind (?<= or (?<! (RE2 syntax has no lookaround)");
    const auto close = pattern.find('>', name_at);
    const auto name =
        close == std::string::npos ? std::string() : pattern.substr(name_at, close - name_at);
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw std::invalid_argument(
          names.size() == 1
              ? fmt::format("the only named group is (?<{}>...)", names.front())
              : fmt::format("the named groups are (?<{}>...)", fmt::join(names, ">...), (?<")));
    if (std::find(seen.begin(), seen.end(), name) != seen.end())
      throw std::invalid_argument(
          fmt::format("each named group once: (?<{}>...) appears more than once", name));
    seen.push_back(name);
    out += "(?P<" + name + ">";
    i = close;
  }
  return out;
}

}  // namespace

NamedRegex::NamedRegex(const std::string& pattern, const std::vector<std::string_view>& names) {
  const std::string syntax = to_re2_syntax(pattern, names);
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kPatternMemoryBytes);
  auto regex = std::make_shared<const RE2>(syntax, options);
  if (!regex->ok()) {
    if (regex->error_code() == RE2::ErrorPatternTooLarge)
      throw std::invalid_argument(fmt::format(
          "pattern too large: it needs more than the {} MiB a pattern may take (simplify its "
          "counted repetitions {{n,m}})",
          kPatternMemoryBytes >> 20));
    throw std::invalid_argument(
        fmt::format("not a valid regular expression (RE2 syntax): {}", regex->error()));
  }
  for (const auto& [name, number] : regex->NamedCapturingGroups())
    groups_[name] = static_cast<std::size_t>(number);
  regex_ = std::move(regex);
}

std::optional<NamedRegex::Groups> NamedRegex::search(std::string_view text, bool anchored) const {
  if (!regex_) return std::nullopt;
  const re2::StringPiece input(text.data(), text.size());
  const auto anchor = anchored ? RE2::ANCHOR_START : RE2::UNANCHORED;
  // Most lines match no pattern: asked without submatches, RE2 answers with its DFA, and only a
  // matching line pays for the groups (and their allocations). This runs on every line read.
  if (!regex_->Match(input, 0, input.size(), anchor, nullptr, 0)) return std::nullopt;
  const int count = regex_->NumberOfCapturingGroups() + 1;
  std::vector<re2::StringPiece> found(static_cast<std::size_t>(count));
  if (!regex_->Match(input, 0, input.size(), anchor, found.data(), count)) return std::nullopt;
  Groups groups;
  groups.reserve(found.size());
  for (const auto& piece : found)
    groups.push_back(piece.data() == nullptr ? std::nullopt
                                             : std::optional<std::string_view>(
                                                   std::in_place, piece.data(), piece.size()));
  return groups;
}

std::optional<std::size_t> NamedRegex::group_number(const std::string& name) const {
  const auto it = groups_.find(name);
  if (it == groups_.end()) return std::nullopt;
  return it->second;
}

TagPattern::TagPattern(const std::string& pattern) : text_(pattern) {
  regex_ = NamedRegex(pattern, {"rank"});
  const auto group = regex_.group_number("rank");
  if (!group) throw std::invalid_argument("no (?<rank>...) group for the rank");
  rank_group_ = *group;
}

std::optional<std::pair<int, std::size_t>> TagPattern::match(std::string_view line) const {
  const auto found = regex_.search(line.substr(0, kTagPatternWindow), /*anchored=*/true);
  if (!found) return std::nullopt;
  const auto& rank = (*found)[rank_group_];
  if (!rank) return std::nullopt;
  const auto value = to_int(*rank);
  if (!value) return std::nullopt;
  return std::pair{*value, (*found)[0]->size()};
}

TagOptions tag_options_named(std::string_view name) {
  TagOptions options;
  if (name == "openmpi") return options;
  if (name == "srun")
    options.rank_colon_prefix = true;
  else if (name == "mpich" || name == "intelmpi")
    options.rank_bracket_prefix = true;
  else if (name == "torchrun")
    options.torchrun_prefix = true;
  else if (name == "ray")
    options.ray_prefix = true;
  else
    throw std::invalid_argument("unknown line tag form");
  return options;
}

namespace {

// `[<letters>N]:` (torchrun): default0, rank12, trainer3.
std::optional<TaggedLine> torchrun_tag(std::string_view line) {
  if (line.empty() || line[0] != '[') return std::nullopt;
  const auto close = line.find("]:");
  if (close == std::string_view::npos || close > 40) return std::nullopt;
  const auto inside = line.substr(1, close - 1);
  std::size_t digits = inside.size();
  while (digits > 0 && inside[digits - 1] >= '0' && inside[digits - 1] <= '9') --digits;
  if (digits == 0 || digits == inside.size() || !is_word(inside.substr(0, digits)))
    return std::nullopt;
  const auto rank = to_int(inside.substr(digits));
  if (!rank) return std::nullopt;
  return TaggedLine{rank, std::nullopt, line.substr(close + 2), std::nullopt};
}

// Ray's worker prefix: optional ANSI colour, `(Name pid=123, ip=1.2.3.4)`, optional colour reset,
// one space; Ray's dedup suffix ` [repeated 3x across cluster]` leaves the payload.
std::optional<TaggedLine> ray_tag(std::string_view line) {
  std::string_view rest = line;
  const auto skip_ansi = [](std::string_view& text) {
    while (text.size() >= 3 && text[0] == '\x1b' && text[1] == '[') {
      const auto m = text.find('m');
      if (m == std::string_view::npos || m > 12) return;
      text.remove_prefix(m + 1);
    }
  };
  skip_ansi(rest);
  if (rest.empty() || rest[0] != '(') return std::nullopt;
  const auto close = rest.find(')');
  if (close == std::string_view::npos || close > 200) return std::nullopt;
  const auto inside = rest.substr(1, close - 1);
  const auto pid_at = inside.find(" pid=");
  if (pid_at == std::string_view::npos || !is_word(inside.substr(0, pid_at))) return std::nullopt;
  auto pid_text = inside.substr(pid_at + 5);
  pid_text = pid_text.substr(0, pid_text.find(','));
  const auto pid = to_count(pid_text);
  if (!pid) return std::nullopt;
  rest.remove_prefix(close + 1);
  skip_ansi(rest);
  if (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
  if (const auto repeated = rest.rfind(" [repeated ");
      repeated != std::string_view::npos && rest.ends_with(" across cluster]"))
    rest = rest.substr(0, repeated);
  return TaggedLine{std::nullopt, std::nullopt, rest, pid};
}

}  // namespace

TaggedLine parse_tagged_line(std::string_view line, const TagOptions& options) {
  TaggedLine untagged{std::nullopt, std::nullopt, line, std::nullopt};

  if (options.pattern) {
    if (const auto match = options.pattern->match(line))
      return {match->first, std::nullopt, line.substr(match->second), std::nullopt};
  }

  for (const auto& [marker, stream] : {std::pair{std::string_view("]<stdout>:"), Stream::Stdout},
                                       std::pair{std::string_view("]<stderr>:"), Stream::Stderr}}) {
    const auto close = line.find(marker);
    if (close == std::string_view::npos) continue;
    const auto open = line.rfind('[', close);
    if (open == std::string_view::npos) continue;
    const auto inside = line.substr(open + 1, close - open - 1);
    const auto comma = inside.rfind(',');
    // Open MPI: [jobid,rank] where jobid may be a PMIx namespace; horovodrun: [rank].
    const auto rank_text = comma == std::string_view::npos ? inside : inside.substr(comma + 1);
    const auto rank = to_int(rank_text);
    if (!rank) continue;
    if (comma != std::string_view::npos && comma == 0) continue;
    if (open != 0 && !looks_like_timestamp(line.substr(0, open))) continue;
    auto payload = line.substr(close + marker.size());
    if (!payload.empty() && payload.front() == ' ') payload.remove_prefix(1);  // Open MPI 5
    return {rank, stream, payload, std::nullopt};
  }

  if (options.torchrun_prefix)
    if (auto tagged = torchrun_tag(line)) return *tagged;
  if (options.ray_prefix)
    if (auto tagged = ray_tag(line)) return *tagged;
  if (options.rank_bracket_prefix && !line.empty() && line[0] == '[') {
    const auto close = line.find("] ");
    if (close != std::string_view::npos && close > 1)
      if (const auto rank = to_int(line.substr(1, close - 1)))
        return {rank, std::nullopt, line.substr(close + 2), std::nullopt};
  }
  if (options.rank_colon_prefix) {
    auto start = line.find_first_not_of(' ');
    const auto colon = line.find(':');
    if (start != std::string_view::npos && colon != std::string_view::npos && colon > start) {
      if (const auto rank = to_int(line.substr(start, colon - start))) {
        auto payload = line.substr(colon + 1);
        if (!payload.empty() && payload.front() == ' ') payload.remove_prefix(1);
        return {rank, std::nullopt, payload, std::nullopt};
      }
    }
  }
  return untagged;
}

std::vector<TaggedChunk> split_tagged_chunks(std::string_view payload) {
  std::vector<TaggedChunk> chunks{{std::nullopt, std::nullopt, {}}};
  std::size_t copied = 0;
  std::size_t search = 0;
  while (true) {
    std::size_t close = std::string_view::npos;
    std::size_t marker_size = 0;
    Stream stream = Stream::Stdout;
    for (const auto& [marker, kind] : {std::pair{std::string_view("]<stdout>:"), Stream::Stdout},
                                       std::pair{std::string_view("]<stderr>:"), Stream::Stderr}}) {
      const auto at = payload.find(marker, search);
      if (at < close) close = at, marker_size = marker.size(), stream = kind;
    }
    if (close == std::string_view::npos) break;
    const auto open = payload.rfind('[', close);
    std::optional<int> rank;
    if (open != std::string_view::npos && open >= copied) {
      const auto inside = payload.substr(open + 1, close - open - 1);
      const auto comma = inside.rfind(',');
      if (comma != std::string_view::npos && comma > 0) rank = to_int(inside.substr(comma + 1));
    }
    search = close + marker_size;
    if (!rank) continue;  // not a well-formed Open MPI tag: text
    chunks.back().text = payload.substr(copied, open - copied);
    copied = search;
    if (copied < payload.size() && payload[copied] == ' ') ++copied;  // Open MPI 5's space
    search = copied;
    chunks.push_back({rank, stream, {}});
  }
  chunks.back().text = payload.substr(copied);
  return chunks;
}

std::string remove_embedded_tags(std::string_view payload) {
  std::string out;
  std::size_t copied = 0;
  std::size_t search = 0;
  while (true) {
    std::size_t close = std::string_view::npos;
    std::size_t marker_size = 0;
    for (const std::string_view marker :
         {std::string_view("]<stdout>:"), std::string_view("]<stderr>:")}) {
      const auto at = payload.find(marker, search);
      if (at < close) close = at, marker_size = marker.size();
    }
    if (close == std::string_view::npos) break;
    const auto open = payload.rfind('[', close);
    const bool well_formed = [&] {
      if (open == std::string_view::npos || open < copied) return false;
      const auto inside = payload.substr(open + 1, close - open - 1);
      const auto comma = inside.rfind(',');
      return comma != std::string_view::npos && comma > 0 && to_int(inside.substr(comma + 1));
    }();
    search = close + marker_size;
    if (!well_formed) continue;
    out.append(payload.substr(copied, open - copied));
    copied = search;
    if (copied < payload.size() && payload[copied] == ' ') ++copied;  // Open MPI 5's space
    search = copied;
  }
  if (copied == 0) return std::string(payload);
  out.append(payload.substr(copied));
  return out;
}

std::optional<EpochMarker> parse_epoch_marker(std::string_view payload) {
  payload = trim(payload);
  constexpr std::string_view kPrefix = "Epoch ";
  if (payload.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  payload.remove_prefix(kPrefix.size());
  const auto slash = payload.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto epoch = to_int(payload.substr(0, slash));
  const auto total = to_int(payload.substr(slash + 1));
  if (!epoch || !total || *epoch < 1 || *epoch > *total) return std::nullopt;
  return EpochMarker{*epoch, *total};
}

namespace {

// Keras's time of a finished epoch: `3s`, `3.214s` (with the resolution its digits give), or
// nothing when `item` is no such time.
std::optional<std::pair<double, double>> keras_time(std::string_view item) {
  if (item.size() < 2 || item.back() != 's') return std::nullopt;
  const auto number = item.substr(0, item.size() - 1);
  if (number.find_first_not_of("0123456789.") != std::string_view::npos ||
      !std::isdigit(static_cast<unsigned char>(number.front())))
    return std::nullopt;
  const auto value = to_double(number);
  if (!value) return std::nullopt;
  const auto point = number.find('.');
  const double resolution =
      0.5 * std::pow(10.0, point == std::string_view::npos
                               ? 0.0
                               : -static_cast<double>(number.size() - point - 1));
  return std::pair{*value, resolution};
}

// A progress bar: Keras 2's `[=====>....]` or Keras 3's run of `━` (U+2501).
bool is_progress_bar(std::string_view token) {
  if (token.size() >= 2 && token.front() == '[' && token.back() == ']') return true;
  constexpr std::string_view kHeavy = "\xe2\x94\x81";
  if (token.empty() || token.size() % kHeavy.size() != 0) return false;
  for (std::size_t i = 0; i < token.size(); i += kHeavy.size())
    if (token.substr(i, kHeavy.size()) != kHeavy) return false;
  return true;
}

// A per-unit time: `82ms/step`, `2s/step`, `500us/sample`, `1s/epoch`.
bool is_unit_time(std::string_view token) {
  const auto slash = token.find('/');
  if (slash == std::string_view::npos || slash == 0) return false;
  const auto amount = token.substr(0, slash);
  return amount.find_first_of("0123456789") == 0 && amount.back() == 's';
}

}  // namespace

std::optional<EpochEnd> parse_epoch_end(std::string_view payload) {
  payload = trim(payload);
  // Keras's progress prefix "469/469" comes first; the values follow as " - key: value".
  const auto first_dash = payload.find(" - ");
  if (first_dash == std::string_view::npos) return std::nullopt;
  const auto progress = split_fields(payload.substr(0, first_dash));
  if (progress.empty()) return std::nullopt;
  // The count: the epoch's last step of its steps (`469/469`); `12/469` is a step in between
  // (printed on lines of their own where the bar is not redrawn in place).
  const auto count = progress[0];
  const auto slash = count.find('/');
  if (slash == std::string_view::npos || !is_digits(count.substr(0, slash)) ||
      count.substr(0, slash) != count.substr(slash + 1))
    return std::nullopt;
  // After it: the bar (Keras 2 `[====]`, Keras 3 `━━━━`), then Keras 3's elapsed time and
  // per-step time (`4s 82ms/step`), nothing else.
  std::optional<std::pair<double, double>> bar_time;
  std::size_t k = 1;
  if (k < progress.size() && is_progress_bar(progress[k])) ++k;
  if (k < progress.size() && (bar_time = keras_time(progress[k]))) ++k;
  if (k < progress.size() && is_unit_time(progress[k])) ++k;
  if (k != progress.size()) return std::nullopt;

  EpochEnd end;
  bool any = false;
  std::optional<double> val_accuracy, keras_seconds;
  double keras_resolution = 0;
  if (bar_time) std::tie(keras_seconds, keras_resolution) = *bar_time;
  auto rest = payload.substr(first_dash + 3);
  while (!rest.empty()) {
    const auto next = rest.find(" - ");
    const auto item = rest.substr(0, next);
    const auto colon = item.find(": ");
    if (colon == std::string_view::npos && !keras_seconds) {
      // Keras's time: `3s`, `3.214s`, `3s 6ms/step` (the step time is not needed).
      if (const auto time = keras_time(item.substr(0, item.find(' '))))
        std::tie(keras_seconds, keras_resolution) = *time;
    } else if (colon != std::string_view::npos) {
      const auto key = trim(item.substr(0, colon));
      // A bar still counting down (`- ETA: 0s`) has not finished its epoch.
      if (key == "ETA") return std::nullopt;
      const auto value = to_double(item.substr(colon + 2));
      if (value) {
        any = true;
        if (key == "loss")
          end.loss = value;
        else if (key == "accuracy")
          end.accuracy = value;
        else if (key == "test_accuracy")
          end.test_accuracy = value;
        else if (key == "images/s")
          end.images_per_second = value;
        else if (key == "epoch_seconds")
          end.epoch_seconds = value;
        else if (key == "val_accuracy")
          val_accuracy = value;
      }
    }
    if (next == std::string_view::npos) break;
    rest.remove_prefix(next + 3);
  }
  if (!any) return std::nullopt;
  if (!end.test_accuracy) end.test_accuracy = val_accuracy;
  if (!end.epoch_seconds && keras_seconds) {
    end.epoch_seconds = keras_seconds;
    end.epoch_seconds_resolution = keras_resolution;
  }
  return end;
}

std::optional<std::string> KeyValueLine::get(std::string_view key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return v;
  return std::nullopt;
}

std::optional<KeyValueLine> parse_trainer_header(std::string_view payload) {
  payload = trim(payload);
  constexpr std::string_view kPrefix = "scalebench-train ";
  if (payload.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  return parse_key_values(payload.substr(kPrefix.size()));
}

std::optional<KeyValueLine> parse_training_done(std::string_view payload) {
  payload = trim(payload);
  constexpr std::string_view kPrefix = "Training done:";
  if (payload.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  return parse_key_values(payload.substr(kPrefix.size()));
}

std::optional<KeyValueLine> parse_benchmark_header(std::string_view payload) {
  payload = trim(payload);
  if (payload.empty() || payload.front() != '#') return std::nullopt;
  auto header = parse_trainer_header(payload.substr(1));
  if (!header || !header->get("benchmark")) return std::nullopt;
  return header;
}

std::optional<AllreduceRow> parse_allreduce_row(std::string_view payload) {
  const auto fields = split_fields(trim(payload));
  if (fields.size() != 8) return std::nullopt;
  const auto bytes = to_count(fields[0]);
  const auto count = to_count(fields[1]);
  const auto time_us = to_non_negative(fields[4]);
  const auto algbw = to_non_negative(fields[5]);
  const auto busbw = to_non_negative(fields[6]);
  const auto wrong = to_count(fields[7]);
  if (!bytes || !count || !is_word(fields[2]) || !is_word(fields[3]) || !time_us || !algbw ||
      !busbw || !wrong)
    return std::nullopt;
  return AllreduceRow{
      *bytes, *count, std::string(fields[2]), std::string(fields[3]), *time_us, *algbw,
      *busbw, *wrong};
}

std::optional<double> parse_average_bus_bandwidth(std::string_view payload) {
  payload = trim(payload);
  if (payload.empty() || payload.front() != '#') return std::nullopt;
  payload = trim(payload.substr(1));
  constexpr std::string_view kName = "Avg bus bandwidth";
  if (payload.substr(0, kName.size()) != kName) return std::nullopt;
  payload = trim(payload.substr(kName.size()));
  if (payload.empty() || payload.front() != ':') return std::nullopt;
  return to_non_negative(payload.substr(1));
}

std::string sanitize_utf8(std::string_view bytes) {
  if (!bytes.empty() && bytes.back() == '\r') bytes.remove_suffix(1);
  return util::repair_utf8(bytes);
}

void LineSplitter::append(std::string_view part) {
  const std::size_t room =
      pending_.size() < max_line_bytes_ ? max_line_bytes_ - pending_.size() : 0;
  pending_.append(part.substr(0, room));
  dropped_ += part.size() - std::min(part.size(), room);
}

std::string LineSplitter::take() {
  std::string line = std::move(pending_);
  pending_.clear();
  if (dropped_ > 0) {
    line += fmt::format(" [scalebench: line cut: {} more bytes not stored]", dropped_);
    dropped_ = 0;
  }
  return line;
}

void LineSplitter::feed(std::string_view chunk, std::vector<std::string>& out) {
  feed(chunk, out, nullptr, 0);
}

void LineSplitter::feed(std::string_view chunk, std::vector<std::string>& out,
                        std::vector<std::int64_t>* started, std::int64_t now,
                        std::vector<std::vector<ByteArrival>>* arrivals) {
  while (!chunk.empty()) {
    // A line's first byte arrived now unless an earlier chunk began it; a later chunk's first
    // byte is marked where it lands (bounded by the line's own cap: no mark past it).
    if (pending_.empty() && dropped_ == 0)
      pending_since_ = now;
    else if (arrivals && pending_.size() < max_line_bytes_ && now != pending_since_ &&
             (pending_arrivals_.empty() || pending_arrivals_.back().ns != now))
      pending_arrivals_.push_back({pending_.size(), now});
    const auto newline = chunk.find('\n');
    if (newline == std::string_view::npos) {
      append(chunk);
      return;
    }
    append(chunk.substr(0, newline));
    if (started) started->push_back(pending_since_);
    if (arrivals) arrivals->push_back(std::move(pending_arrivals_));
    pending_arrivals_.clear();
    out.push_back(take());
    chunk.remove_prefix(newline + 1);
  }
}

std::optional<std::string> LineSplitter::finish() {
  if (pending_.empty() && dropped_ == 0) return std::nullopt;
  return take();
}

}  // namespace scalebench::orchestrator
