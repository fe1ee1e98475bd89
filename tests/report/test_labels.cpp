// Labels (report/data/labels.hpp): the lookups, --label's parsing, the rows' display labels and
// the notes rewritten with them.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "report/analysis/report.hpp"
#include "report/data/labels.hpp"

using namespace scalebench;
using report::Labels;

TEST_CASE("labels: a level's own label, then the bare level's, then the stored name") {
  Labels labels;
  labels.text = {{"model", "Model"}, {"model=vgg16", "VGG-16"}, {"resnet50", "ResNet-50"}};
  CHECK(labels.factor("model") == "Model");
  CHECK(labels.factor("batch") == "batch");
  CHECK(labels.level("model", "vgg16") == "VGG-16");
  CHECK(labels.level("model", "resnet50") == "ResNet-50");
  CHECK(labels.level("model", "lenet") == "lenet");
  CHECK(labels.level_with_factor("model", "vgg16") == "VGG-16");
  CHECK(labels.level_with_factor("model", "lenet") == "Model = lenet");
}

TEST_CASE("labels: --label KEY=TEXT, a level key keeps its own '=', bad arguments are named") {
  Labels labels;
  report::add_label_argument(labels, "hvd=Horovod");
  report::add_label_argument(labels, "model=vgg16=VGG-16");
  report::add_label_argument(labels, "hvd=Horovod (NCCL)");  // the later one wins
  CHECK(labels.of("hvd", "") == "Horovod (NCCL)");
  CHECK(labels.of("model=vgg16", "") == "VGG-16");
  for (const std::string bad : {"hvd", "=Horovod", "hvd=", "hvd=a\tb"}) {
    INFO(bad);
    CHECK_THROWS_AS(report::add_label_argument(labels, bad), report::ReportError);
  }
  CHECK_THROWS_WITH_AS(report::add_label_argument(labels, "hvd"),
                       doctest::Contains("--label 'hvd': expected KEY=TEXT"), report::ReportError);
}

TEST_CASE("labels: read from the experiment file's JSON, none without the key") {
  const auto labels = report::labels_of_spec(R"({"name":"x","labels":{"hvd":"Horovod"}})");
  CHECK(labels.text.size() == 1);
  CHECK(report::labels_of_spec(R"({"name":"x"})").empty());
  CHECK(report::labels_of_spec("not json").empty());
}

TEST_CASE("labels: a row's display label joins condition, levels, launcher and np") {
  report::ReportRow row;
  row.label = "hvd model=vgg16 np=2";
  row.condition = "hvd";
  row.launcher = "mpirun";
  row.np = 2;
  row.levels = {{"model", "vgg16"}, {"batch", "32"}};
  CHECK(report::display_label(row, Labels{}) == row.label);  // unchanged without labels
  Labels labels;
  labels.text = {{"hvd", "Horovod"}, {"vgg16", "VGG-16"}, {"batch", "Batch"}};
  CHECK(report::display_label(row, labels) == "Horovod, VGG-16, Batch = 32, np = 2");
  labels.text["np"] = "GPUs";
  CHECK(report::display_label(row, labels) == "Horovod, VGG-16, Batch = 32, GPUs = 2");
  row.label = "hvd model=vgg16 [mpirun] np=2";  // a label that had to name its launcher
  labels.text["mpirun"] = "Open MPI";
  CHECK(report::display_label(row, labels) == "Horovod, VGG-16, Batch = 32, Open MPI, GPUs = 2");
  report::ReportRow single;
  single.label = single.condition = single.launcher = "single";
  CHECK(report::display_label(single, labels) == "single");
}

TEST_CASE("labels: notes name rows as readers see them, quoted where a label has a comma") {
  std::vector<report::Run> samples;
  std::int64_t id = 0;
  for (const int np : {1, 2, 24})
    for (int run = 0; run < 2; ++run) {  // two runs each: the "Groups with 2 runs" note
      report::Run r;
      r.id = ++id;
      r.experiment = "e";
      r.condition = "hvd";
      r.launcher = "mpirun";
      r.np = np;
      r.epochs.emplace_back(1, 10.0 / np + run);
      r.train_images = 1000;
      samples.push_back(r);
    }
  report::ReportOptions options;
  options.labels.text = {{"hvd", "Horovod"}, {"run", "Baseline"}};
  const auto table = report::build_report("e", samples, options);
  CHECK(table.labels.of("hvd", "") == "Horovod");
  const auto note = std::find_if(table.notes.begin(), table.notes.end(), [](const auto& n) {
    return n.rfind("Groups with 2 runs: ", 0) == 0;
  });
  REQUIRE(note != table.notes.end());
  CHECK(note->find("\"Horovod, np = 1\", \"Horovod, np = 2\", \"Horovod, np = 24\"") !=
        std::string::npos);
  // Ordinary words of the notes are never relabelled ("one run (its mean epoch time)").
  for (const auto& n : table.notes) CHECK(n.find("Baseline") == std::string::npos);
}
