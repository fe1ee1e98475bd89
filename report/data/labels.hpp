// What readers see instead of the stored names: the experiment file's "labels" map and the
// command line's --label KEY=TEXT (docs/report.md, "Labels"). Keys name a condition ("hvd"), a
// factor ("model"), a factor's level ("model=inception_v3", or the bare level "inception_v3"),
// "np", or a column ("epoch_time", "images_per_second", ...). Without a label a name reads as
// stored, so outputs without labels are unchanged.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace scalebench::report {

struct Labels {
  std::map<std::string, std::string, std::less<>> text;  // key -> what readers see

  bool empty() const { return text.empty(); }
  // The label of `key`, else `fallback`.
  std::string of(std::string_view key, std::string_view fallback) const;
  bool has(std::string_view key) const { return text.find(key) != text.end(); }
  // An experiment's name as readers see it, in headings, captions and titles: labels[name].
  std::string experiment(std::string_view name) const { return of(name, name); }
  // A factor's name: labels["model"], else "model".
  std::string factor(std::string_view factor) const { return of(factor, factor); }
  // A level: labels["model=vgg16"], else labels["vgg16"], else "vgg16".
  std::string level(std::string_view factor, std::string_view level) const;
  // A level with its factor where the level alone would not say which: "Inception V3" for a
  // labelled level, "Batch size = 32" for an unlabelled one.
  std::string level_with_factor(std::string_view factor, std::string_view level) const;
};

// Adds "KEY=TEXT" (the --label option) to `labels`, replacing a label the file gave. Throws
// ReportError naming the argument when it has no '=', an empty key or text, or a control
// character.
void add_label_argument(Labels& labels, std::string_view argument);

// The "labels" object of an experiment file's JSON text; empty when it has none or the text is
// unreadable (the experiment reader validated it when the file was run).
Labels labels_of_spec(const std::string& spec_json);

}  // namespace scalebench::report
