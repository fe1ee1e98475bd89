// How experiment.cpp reads one field of the experiment file: an ExperimentReader is a JSON value
// and the path to it, and each of its readers checks one kind of field strictly (type, range,
// placeholders, NUL characters), so that every error names file, field and expectation.
// Private to the orchestrator: the public reader is orchestrator/experiment.hpp.
#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/experiment.hpp"
#include "orchestrator/json_document.hpp"

namespace scalebench::orchestrator {

class ExperimentReader {
 public:
  using json = nlohmann::json;

  ExperimentReader(const std::filesystem::path& file, const json& value, std::string where)
      : file_(file), value_(value), where_(std::move(where)) {}

  [[noreturn]] void fail(std::string_view expected) const;
  // For a problem with a key rather than its value.
  [[noreturn]] void fail_key(const std::string& key, std::string_view expected) const;

  bool has(const std::string& key) const { return value_.contains(key); }
  ExperimentReader at(const std::string& key) const {
    return ExperimentReader(file_, value_.at(key), path_step(where_, key));
  }
  ExperimentReader at(std::size_t index) const {
    return ExperimentReader(file_, value_.at(index), fmt::format("{}[{}]", where_, index));
  }
  const json& value() const { return value_; }
  const std::string& path() const { return where_; }

  void require_object(const std::vector<std::string>& known_keys) const;
  void require_key(const std::string& key) const;

  // Every string may end up in an argv, an environment or the database: none may hold a NUL.
  std::string string() const;
  std::string non_empty_string() const;
  // A string passed as it is, where a placeholder would be a mistake (they work in "command").
  std::string literal_string() const;
  int int_in_range(long long max) const;
  // "line_tags": a form's name, or {"pattern": "regex with (?<rank>...)"}.
  TagOptions line_tags() const;
  // "line_forms": a preset's name, or {"preset", "epoch_start", "epoch_base", "epoch_end",
  // "total_epochs", "metrics": {"loss": ...}} (orchestrator/line_forms.hpp).
  std::shared_ptr<const LineForms> line_forms() const;
  // "stdout": "pipe" (the default) or "pty".
  bool stdout_pty() const;
  // "train_images" or "train_images_per_rank" of this object, at most one of them.
  std::optional<ImagesPerEpoch> images_per_epoch() const;
  long long train_images() const;
  double timeout_seconds() const;
  bool boolean() const;
  std::vector<std::string> strings() const;
  // A level's "args": literal strings, but one element may be exactly "{args}", the place of the
  // arguments the experiment and condition give (the level's args then go around them).
  std::vector<std::string> level_args(bool& has_slot) const;
  std::vector<std::string> literal_strings() const;
  std::vector<int> np_values() const;
  // Names a POSIX shell could export ([A-Za-z_][A-Za-z0-9_]*): anything else (empty, '=', NUL)
  // cannot be passed to a process's environment as asked.
  std::map<std::string, std::string> environment() const;
  // {"epochs": 3, "dataset": "x", "verbose": true} -> --dataset x --epochs 3 --verbose
  std::vector<TrainerArgs::Option> options() const;
  // The "trainer" and "args" fields of the object being read.
  TrainerArgs trainer_args() const;

 private:
  const std::filesystem::path& file_;
  const json& value_;
  std::string where_;
};

}  // namespace scalebench::orchestrator
