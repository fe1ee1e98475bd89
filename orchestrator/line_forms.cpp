#include "orchestrator/line_forms.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace scalebench::orchestrator {
namespace {

using Match = NamedRegex::Groups;

std::optional<Match> search(const NamedRegex& pattern, std::string_view text) {
  return pattern.search(text);
}

std::optional<std::string> group(const NamedRegex& pattern, const Match& found,
                                 const std::string& name) {
  const auto number = pattern.group_number(name);
  if (!number || !found[*number]) return std::nullopt;
  return std::string(*found[*number]);
}

std::optional<long long> whole(const std::optional<std::string>& text) {
  if (!text || text->empty() || text->size() > 9) return std::nullopt;
  long long value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc{} || end != text->data() + text->size()) return std::nullopt;
  return value;
}

std::optional<double> number(const std::optional<std::string>& text) {
  if (!text || text->empty()) return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc{} || end != text->data() + text->size()) return std::nullopt;
  return value;
}

NamedRegex compile(const std::vector<std::string>& field, const std::string& pattern,
                   const std::vector<std::string_view>& names,
                   const std::vector<std::string_view>& required) {
  if (pattern.empty() || pattern.size() > 1000)
    throw LineFormError(field, "a pattern of 1 to 1000 characters");
  NamedRegex compiled;
  try {
    compiled = compile_named_regex(pattern, names);
  } catch (const std::invalid_argument& error) {
    throw LineFormError(field, error.what());
  }
  for (const auto name : required)
    if (!compiled.has_group(std::string(name)))
      throw LineFormError(field, fmt::format("no (?<{}>...) group", name));
  return compiled;
}

const std::string kNumber = R"([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)";

}  // namespace

FormMatch match_line_forms(const LineForms& forms, std::string_view text) {
  FormMatch out;
  for (const auto& metric : forms.metrics) {
    const auto found = search(metric.pattern, text);
    if (!found) continue;
    auto value = number(group(metric.pattern, *found, "value"));
    // value / of where the line has an of: 5/0 or 5/x is no number (not 5); nor is one that
    // overflows.
    if (const auto of_text = group(metric.pattern, *found, "of")) {
      const auto of = number(of_text);
      value = value && of && *of != 0 ? std::optional<double>(*value / *of) : std::nullopt;
    }
    if (value && !std::isfinite(*value)) value.reset();
    if (value)
      (metric.previous_epoch_on_start ? out.previous_epoch_metrics : out.metrics)
          .emplace_back(metric.name, *value);
  }
  if (forms.metrics_epoch && !out.metrics.empty())
    if (const auto found = search(*forms.metrics_epoch, text)) {
      const auto progress = number(group(*forms.metrics_epoch, *found, "value"));
      if (progress && *progress >= 0 && *progress <= 1e9)
        out.metrics_epoch = std::max(1, static_cast<int>(std::ceil(*progress - 1e-9)));
    }
  if (forms.epoch_start)
    if (const auto found = search(*forms.epoch_start, text)) {
      const auto epoch = whole(group(*forms.epoch_start, *found, "epoch"));
      const auto total = whole(group(*forms.epoch_start, *found, "total"));
      const long long first = epoch ? *epoch + 1 - forms.epoch_base : 0;  // 1-based
      if (first >= 1 && first <= 1'000'000'000) {
        const int known_total = total ? static_cast<int>(*total) : forms.total_epochs.value_or(0);
        if (known_total == 0 || first <= known_total)
          out.start = EpochMarker{static_cast<int>(first), known_total};
      }
      return out;  // a start line is never also an end
    }
  if (forms.epoch_end)
    if (const auto found = search(*forms.epoch_end, text)) {
      out.ends = true;
      const auto epoch = whole(group(*forms.epoch_end, *found, "epoch"));
      out.end_epoch = epoch ? static_cast<int>(*epoch + 1 - forms.epoch_base) : 0;
      if (*out.end_epoch < 0) out.ends = false;
    }
  return out;
}

std::shared_ptr<const LineForms> line_forms_from_patterns(const LineForms* base,
                                                          const LineFormPatterns& patterns) {
  auto forms = std::make_shared<LineForms>(base ? *base : LineForms{});
  forms->name = "custom";
  if (patterns.epoch_base) {
    if (*patterns.epoch_base != 0 && *patterns.epoch_base != 1)
      throw LineFormError({"epoch_base"}, "0 or 1");
    forms->epoch_base = *patterns.epoch_base;
  }
  if (patterns.total_epochs) {
    if (*patterns.total_epochs < 1 || *patterns.total_epochs > 1'000'000)
      throw LineFormError({"total_epochs"}, "a whole number from 1 to 1000000");
    forms->total_epochs = patterns.total_epochs;
  }
  if (patterns.epoch_start)
    forms->epoch_start =
        compile({"epoch_start"}, *patterns.epoch_start, {"epoch", "total"}, {"epoch"});
  if (patterns.epoch_end)
    forms->epoch_end = compile({"epoch_end"}, *patterns.epoch_end, {"epoch"}, {});
  for (const auto& [name, pattern] : patterns.metrics) {
    if (std::find(std::begin(kMetricNames), std::end(kMetricNames), name) == std::end(kMetricNames))
      throw LineFormError({"metrics", name},
                          "not a metric (loss, accuracy, validation_accuracy, test_accuracy, "
                          "images_per_second)");
    std::erase_if(forms->metrics, [&](const LineForms::Metric& m) { return m.name == name; });
    forms->metrics.push_back(
        {name, compile({"metrics", name}, pattern, {"value", "of"}, {"value"})});
  }
  if (!forms->epoch_start && !forms->epoch_end)
    throw LineFormError({}, "\"epoch_start\" or \"epoch_end\": a form needs one of them");
  return forms;
}

std::shared_ptr<const LineForms> line_forms_named(std::string_view name) {
  LineFormPatterns p;
  if (name == "keras") return nullptr;
  if (name == "pytorch-examples") {
    // pytorch/examples mnist/main.py: `Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.305`, one line per
    // log interval (the first after the epoch's first batch), then after the test pass
    // `Test set: Average loss: 0.0475, Accuracy: 9842/10000 (98%)`.
    p.epoch_start = R"(^Train Epoch: (?<epoch>\d+) \[)";
    p.epoch_end = R"(^Test set: )";
    p.metrics = {{"loss", R"((?:^|\s)Loss: (?<value>)" + kNumber + ")"},
                 {"test_accuracy", R"(Accuracy: (?<value>\d+)/(?<of>\d+))"}};
  } else if (name == "lightning") {
    // PyTorch Lightning's TQDMProgressBar: `Epoch 0: 100%|...| 32/32 [00:01<00:00, 20.1it/s,
    // v_num=0, train_loss=0.514, val_loss=0.8]`, 0-based; the line arrives when the epoch's
    // training bar is left (validation begins), so epochs are measured from that point on.
    // fit() ends with `Trainer.fit` stopped: `max_epochs=3` reached. (rank 0's log, on stderr):
    // the last epoch ends there, before a trainer.test() after it. val_acc is the validation
    // set's accuracy, stored as that; a test accuracy only where the script prints one
    // (`test_acc`, Lightning's trainer.test() table).
    p.epoch_start = R"(^Epoch (?<epoch>\d+): )";
    p.epoch_base = 0;
    p.epoch_end = R"(`Trainer\.fit` stopped)";
    p.metrics = {{"loss", R"(train_loss(?:_epoch)?=(?<value>)" + kNumber + ")"},
                 {"accuracy", R"(train_acc(?:uracy)?(?:_epoch)?=(?<value>)" + kNumber + ")"},
                 {"validation_accuracy", R"(val_acc(?:uracy)?=(?<value>)" + kNumber + ")"},
                 {"test_accuracy",
                  R"((?:^|[^a-z_])test_acc(?:uracy)?[^0-9a-z_.+-]*(?<value>)" + kNumber + ")"}};
  } else if (name == "tqdm") {
    // A tqdm bar described `Epoch N` or `Epoch N/M` (1-based; {"preset": "tqdm", "epoch_base":
    // 0} for 0-based): `Epoch 1/3:  40%|####      | 2/5 [00:01<00:01, 1.9it/s, loss=0.5]`.
    p.epoch_start = R"(^[Ee]poch (?<epoch>\d+)(?:/(?<total>\d+))?:? *\d+%\|)";
    p.metrics = {{"loss", R"([ ,]loss=(?<value>)" + kNumber + ")"},
                 {"accuracy", R"([ ,]acc(?:uracy)?=(?<value>)" + kNumber + ")"}};
  } else if (name == "hf-trainer") {
    // Hugging Face Trainer's log dicts: `{'loss': 0.51, 'learning_rate': 5e-05, 'epoch': 1.0}`,
    // `{'eval_loss': 0.4, 'eval_accuracy': 0.86, ..., 'epoch': 1.0}`: an epoch ends at its first
    // dict with a whole 'epoch' (log and evaluate per epoch); epochs are marked by their ends.
    p.epoch_end = R"(^\{.*'epoch': (?<epoch>\d+)\.0\})";
    p.epoch_base = 1;
    // Logged per step (the default), a loss belongs to the epoch its 'epoch' value is in
    // (`'epoch': 1.33` is in epoch 2), not to the last epoch that ended.
    p.metrics = {{"loss", R"(^\{'loss': (?<value>)" + kNumber + ")"},
                 {"test_accuracy", R"('eval_accuracy': (?<value>)" + kNumber + ")"}};
  } else {
    throw std::invalid_argument("unknown line form");
  }
  auto forms = std::const_pointer_cast<LineForms>(line_forms_from_patterns(nullptr, p));
  forms->name = std::string(name);
  if (name == "lightning")
    for (auto& metric : forms->metrics)
      metric.previous_epoch_on_start = metric.name == "validation_accuracy";
  if (name == "hf-trainer")
    forms->metrics_epoch = compile_named_regex(R"('epoch': (?<value>)" + kNumber + ")", {"value"});
  return forms;
}

}  // namespace scalebench::orchestrator
