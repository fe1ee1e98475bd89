#include "report/data/setup.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "util/text.hpp"

namespace scalebench::report {
namespace {

using nlohmann::json;

// A JSON scalar as text ("128", "mlp"); empty for anything else.
std::string scalar(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<long long>());
  if (value.is_number()) return fmt::format("{:g}", value.get<double>());
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  return "";
}

// "123 456": thousands grouped, as the tables print counts.
std::string count_text(long long n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits.size() > 4) out += ' ';
    out += digits[i];
  }
  return out;
}

// The program of one object of the file (the file itself or a condition): its trainer's settings
// or its command; empty when it names neither.
std::string program_of(const json& spec, const RunSet& set) {
  std::set<std::string> varied;  // trainer settings a factor sets: "per level" instead
  for (const auto& [factor, levels] : set.level_order) varied.insert(factor);
  if (spec.contains("trainer") && spec["trainer"].is_object()) {
    const auto& trainer = spec["trainer"];
    std::vector<std::string> parts;
    const auto add = [&](const char* key, const char* name, const char* unit) {
      if (varied.contains(key)) {
        parts.push_back(fmt::format("{} per level of {}", name, key));
      } else if (trainer.contains(key) && !scalar(trainer[key]).empty()) {
        parts.push_back(fmt::format("{} {}{}", name, scalar(trainer[key]), unit));
      }
    };
    add("model", "model", "");
    add("dataset", "dataset", "");
    add("batch-size", "batch", " per process");
    add("epochs", "epochs", "");
    add("optimizer", "optimizer", "");
    add("lr", "learning rate", "");
    add("threads", "threads", " per process");
    return fmt::format("scalebench-train ({})", fmt::join(parts, ", "));
  }
  for (const char* key : {"command", "program"}) {
    if (!spec.contains(key)) continue;
    const auto& value = spec[key];
    if (value.is_string()) return value.get<std::string>();
    if (value.is_array()) {
      std::vector<std::string> words;
      for (const auto& word : value) words.push_back(scalar(word));
      return fmt::format("{}", fmt::join(words, " "));
    }
  }
  return "";
}

// "60 000 at every np", "256 per process (weak scaling): 256 at np 1 to 4 096 at np 16".
std::string images_of(const RunSet& set) {
  std::map<int, std::set<long long>> by_np;
  for (const auto& run : set.runs)
    if (run.train_images) by_np[run.np].insert(*run.train_images);
  if (by_np.empty()) return "";
  std::set<long long> all, per_process;
  for (const auto& [np, counts] : by_np)
    for (const auto count : counts) all.insert(count), per_process.insert(count / np);
  if (all.size() == 1) return fmt::format("{} at every np", count_text(*all.begin()));
  const auto& [low_np, low] = *by_np.begin();
  const auto& [high_np, high] = *by_np.rbegin();
  if (per_process.size() == 1 && by_np.size() > 1)
    return fmt::format("{} per process (weak scaling): {} at np {} to {} at np {}",
                       count_text(*per_process.begin()), count_text(*low.begin()), low_np,
                       count_text(*high.rbegin()), high_np);
  return fmt::format("{} to {}", count_text(*all.begin()), count_text(*all.rbegin()));
}

std::string warmup_of(const RunSet& set) {
  if (set.warmup_epochs == 0) return "none: every epoch counts";
  return fmt::format("the first {} of each run left out{}",
                     util::count_of(set.warmup_epochs, "epoch"),
                     set.warmup_origin.empty() ? "" : " (" + set.warmup_origin + ")");
}

// The line forms the file names (the file's, its conditions' and levels'), or the default.
std::string line_forms_of(const json& spec) {
  std::vector<std::string> forms;
  const auto add = [&](const json& object) {
    if (!object.is_object() || !object.contains("line_forms")) return;
    const auto& value = object["line_forms"];
    const auto text = value.is_string() ? value.get<std::string>() : std::string("custom patterns");
    if (std::find(forms.begin(), forms.end(), text) == forms.end()) forms.push_back(text);
  };
  add(spec);
  if (spec.contains("conditions") && spec["conditions"].is_array())
    for (const auto& condition : spec["conditions"]) add(condition);
  if (!forms.empty()) return fmt::format("line forms {}", fmt::join(forms, ", "));
  bool trainer = spec.contains("trainer");
  if (spec.contains("conditions") && spec["conditions"].is_array())
    for (const auto& condition : spec["conditions"])
      trainer = trainer || (condition.is_object() && condition.contains("trainer"));
  if (trainer) return "scalebench-train's \"Epoch y/z\" lines";
  return "Keras's \"Epoch y/z\" lines (line forms keras)";
}

std::string launchers_of(const RunSet& set) {
  std::vector<std::string> parts;
  std::map<std::pair<std::string, std::string>, std::set<int>> nps;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& run : set.runs) {
    const auto key = std::make_pair(run.condition, run.launcher);
    if (!nps.contains(key)) order.push_back(key);
    nps[key].insert(run.np);
  }
  for (const auto& key : order) {
    const auto& [stored, launcher] = key;
    const auto condition = set.labels.of(stored, stored);
    if (launcher == "single") {
      parts.push_back(fmt::format("{}: one plain process", condition));
      continue;
    }
    std::vector<std::string> values;
    for (const int np : nps[key]) values.push_back(std::to_string(np));
    parts.push_back(fmt::format("{}: {}, np {}", condition, launcher, fmt::join(values, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string machine_of(const Provenance& provenance) {
  std::map<std::string, std::string> values(provenance.begin(), provenance.end());
  const auto get = [&](const char* key) {
    const auto it = values.find(key);
    return it == values.end() ? std::string() : it->second;
  };
  std::vector<std::string> parts;
  if (!get("host").empty()) parts.push_back(get("host"));
  if (!get("cpu_model").empty())
    parts.push_back(get("cpu_count").empty()
                        ? get("cpu_model")
                        : fmt::format("{} × {}", get("cpu_count"), get("cpu_model")));
  if (!get("gpu").empty()) parts.push_back(get("gpu"));
  if (!get("memory_bytes").empty()) {
    try {
      parts.push_back(fmt::format("{:.0f} GiB", std::stod(get("memory_bytes")) / (1 << 30)));
    } catch (const std::exception&) {
    }
  }
  if (!get("os").empty()) parts.push_back(get("os"));
  if (!get("mpi").empty()) parts.push_back(get("mpi"));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

StudySetup study_setup(const RunSet& set) {
  const auto spec = json::parse(set.spec_json, nullptr, /*allow_exceptions=*/false);
  const json empty = json::object();
  const json& file = spec.is_object() ? spec : empty;
  StudySetup setup;
  const auto add = [&](const char* what, std::string text) {
    if (!text.empty()) setup.emplace_back(what, std::move(text));
  };
  // The file's program, or each condition's that has its own and ran here.
  std::string program = program_of(file, set);
  if (program.empty() && file.contains("conditions") && file["conditions"].is_array()) {
    std::vector<std::string> parts;
    for (const auto& condition : file["conditions"]) {
      if (!condition.is_object() || !condition.contains("name")) continue;
      const auto name = scalar(condition["name"]);
      const bool ran = std::any_of(set.runs.begin(), set.runs.end(),
                                   [&](const Run& run) { return run.condition == name; });
      const auto text = program_of(condition, set);
      if (ran && !text.empty())
        parts.push_back(fmt::format("{}: {}", set.labels.of(name, name), text));
    }
    program = fmt::format("{}", fmt::join(parts, "; "));
  }
  add("Program", program);
  add("Images per epoch", images_of(set));
  add("Warm-up", warmup_of(set));
  add("Epochs marked by", line_forms_of(file));
  add("Conditions", launchers_of(set));
  add("Machine", machine_of(set.provenance));
  return setup;
}

}  // namespace scalebench::report
