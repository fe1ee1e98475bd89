// report --by FACTOR (issue 11): HorovodRunner's Table 2 layout from samples with factor levels,
// the two-way ANOVA under it (values derived by hand below), and its three renderings.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "report/analysis/report.hpp"
#include "report/export/exporters.hpp"
#include "report/factor_samples.hpp"
#include "test_support.hpp"

using namespace scalebench;
using report::build_factor_report;
using report::build_report;
using report::ReportError;

namespace {

using test::table2_samples;
report::ReportOptions file_order() { return test::table2_file_order(); }

}  // namespace

TEST_CASE("report --by: one block per level in the file's order, rows by condition and np") {
  const auto report = build_factor_report("t2", table2_samples(), "model", file_order());
  CHECK(report.factor == "model");
  CHECK(report.levels == std::vector<std::string>{"vgg16", "inception_v3"});
  CHECK(report.row_keys == std::vector<std::string>{"single", "hvd np=1", "hvd np=2"});
  REQUIRE(report.blocks.size() == 2);
  const auto& vgg = report.blocks[0];
  CHECK(vgg.base_label == "hvd np=1");
  REQUIRE(vgg.rows.size() == 3);
  CHECK(vgg.rows[0].label == "single");
  CHECK(vgg.rows[1].mean_epoch_seconds == 11.0);
  CHECK(vgg.rows[2].mean_epoch_seconds == 7.0);
  CHECK(vgg.rows[2].speedup_vs_base == doctest::Approx(11.0 / 7.0));
  // Efficiency: images/s at np=2 over twice that at np=1 of the same model.
  CHECK(*vgg.rows[2].scaling_efficiency == doctest::Approx((1000.0 / 7.0) / (2 * 1000.0 / 11.0)));
  CHECK(vgg.anova);  // each block's one-way ANOVA
  const auto& inception = report.blocks[1];
  CHECK(inception.rows[1].mean_epoch_seconds == 5.0);
  CHECK(inception.rows[2].mean_epoch_seconds == 4.0);
  // A block never mixes models: the single row of inception is its own 5 s.
  CHECK(inception.rows[0].mean_epoch_seconds == 5.0);
}

TEST_CASE("report --by: the two-way ANOVA factor x np of the launched condition, type II") {
  const auto report = build_factor_report("t2", table2_samples(), "model", file_order());
  REQUIRE(report.two_way.size() == 1);
  const auto& anova = report.two_way[0];
  CHECK(anova.scope == "condition hvd");
  CHECK(anova.model == "model * np");
  CHECK(anova.ss_type == "II");
  CHECK(anova.observations == 8);
  REQUIRE(anova.terms.size() == 4);
  CHECK(anova.terms[0].term == "model");
  CHECK(anova.terms[0].ss == doctest::Approx(40.5));
  CHECK(*anova.terms[0].f == doctest::Approx(20.25));
  CHECK(*anova.terms[0].partial_eta_sq == doctest::Approx(40.5 / 48.5));
  CHECK(anova.terms[1].term == "np");
  CHECK(*anova.terms[1].f == doctest::Approx(6.25));
  CHECK(*anova.terms[1].partial_eta_sq == doctest::Approx(12.5 / 20.5));
  CHECK(anova.terms[2].term == "model:np");
  CHECK(*anova.terms[2].f == doctest::Approx(2.25));
  CHECK(*anova.terms[2].partial_eta_sq == doctest::Approx(0.36));
  CHECK(anova.terms[3].term == "Residuals");
  CHECK(anova.terms[3].df == 4);
  CHECK(anova.terms[3].ms == doctest::Approx(2.0));
  CHECK_FALSE(anova.terms[3].f);
  // p of F(1, 4) = 20.25 is that of |t| = 4.5 on 4 d.f.: between 0.01 and 0.02.
  CHECK(*anova.terms[0].p > 0.01);
  CHECK(*anova.terms[0].p < 0.02);
  const auto said = [&](const std::string& part) {
    return std::any_of(report.notes.begin(), report.notes.end(),
                       [&](const auto& n) { return n.find(part) != std::string::npos; });
  };
  CHECK(said("The single rows (2 runs) are not in the two-way ANOVA"));
  CHECK(said("Unit of analysis: one epoch"));
}

TEST_CASE("report --by with unit run: the two-way ANOVA of the run means") {
  // Each epoch of the hand-derived design as a run of its own: the run means are the epochs, so
  // the two-way ANOVA is the same, on 8 runs.
  std::vector<report::Run> samples;
  for (const auto& run : table2_samples())
    for (const auto& epoch : run.epochs) {
      auto one = run;
      one.id = static_cast<std::int64_t>(samples.size()) + 1;
      one.epochs = {epoch};
      samples.push_back(one);
    }
  auto options = file_order();
  options.unit = "run";
  const auto report = build_factor_report("t2", samples, "model", options);
  REQUIRE(report.two_way.size() == 1);
  CHECK(report.two_way[0].observations == 8);
  CHECK(*report.two_way[0].terms[0].f == doctest::Approx(20.25));
  CHECK(report.unit == "run");
  const auto markdown = report::make_exporter("markdown")->render(report);
  CHECK(markdown.find("Two-way ANOVA of condition hvd, run mean epoch time: model * np (8 runs, "
                      "type II sums of squares)") != std::string::npos);
  // The original runs of two epochs each: one run per cell leaves no residual, and says so.
  const auto per_run = build_factor_report("t2", table2_samples(), "model", options);
  CHECK(per_run.two_way.empty());
  CHECK(std::any_of(per_run.notes.begin(), per_run.notes.end(), [](const auto& n) {
    return n.find("No two-way ANOVA of condition hvd") != std::string::npos;
  }));
}

TEST_CASE("report --by: an empty cell gives the additive model, and the notes say so") {
  auto samples = table2_samples();
  samples.erase(
      std::remove_if(samples.begin(), samples.end(), [](const auto& s) { return s.id == 1; }),
      samples.end());  // no inception_v3 at np=2
  const auto report = build_factor_report("t2", samples, "model", file_order());
  REQUIRE(report.two_way.size() == 1);
  CHECK(report.two_way[0].model == "model + np");
  CHECK(report.two_way[0].terms.size() == 3);
  CHECK(std::any_of(report.notes.begin(), report.notes.end(), [](const auto& n) {
    return n.find("fitted without the interaction (model + np)") != std::string::npos;
  }));
  // The missing cell is an empty cell in the layout, not a row of another block.
  CHECK(report.blocks[1].rows.size() == 2);
}

TEST_CASE("report --by: an unknown factor is refused with the known ones and a suggestion") {
  CHECK_THROWS_WITH_AS(
      build_factor_report("t2", table2_samples(), "modle", file_order()),
      "--by modle: experiment \"t2\" has no such factor (did you mean model?); its "
      "factors: model",
      ReportError);
  auto plain = table2_samples();
  for (auto& s : plain) s.levels.clear();
  CHECK_THROWS_WITH_AS(build_factor_report("t2", plain, "model"),
                       "--by model: experiment \"t2\" has no factors (its file has no \"factors\" "
                       "object; docs/experiment-file.md, \"Factors\")",
                       ReportError);
}

TEST_CASE("a factorial report without --by keeps levels apart, in the file's order") {
  const auto table = build_report("t2", table2_samples(), file_order());
  std::vector<std::string> labels;
  for (const auto& row : table.rows) labels.push_back(row.label);
  CHECK(labels == std::vector<std::string>{"single model=vgg16", "single model=inception_v3",
                                           "hvd model=vgg16 np=1", "hvd model=vgg16 np=2",
                                           "hvd model=inception_v3 np=1",
                                           "hvd model=inception_v3 np=2"});
  CHECK(table.base_label == "hvd model=vgg16 np=1");
  // The single row of inception_v3 is compared with inception_v3's np=1 row for efficiency.
  CHECK(*table.rows[1].scaling_efficiency == doctest::Approx((1000.0 / 5.0) / (1000.0 / 5.0)));
}

TEST_CASE("report --by renders as Table 2 in markdown, as sections in CSV, as blocks in JSON") {
  const auto report = build_factor_report("t2", table2_samples(), "model", file_order());
  const auto markdown = report::make_exporter("markdown")->render(report);
  CHECK(markdown.find("## Experiment t2 by model") == 0);
  CHECK(markdown.find(
            "| | vgg16 Avg. epoch time (s) [95% CI] | vgg16 Std. epoch time (s) | vgg16 "
            "Tukey vs base | vgg16 Letters | vgg16 Images/s [95% CI] | vgg16 Speed-up [95% CI] | "
            "vgg16 Efficiency [95% CI] | inception_v3 Avg. epoch time (s) [95% CI] |") !=
        std::string::npos);
  // Epochs 6 and 8: 7 -/+ qt(0.975, 1) x 1.
  CHECK(markdown.find("| hvd np=2 | 7.00 [-5.71, 19.71] |") != std::string::npos);
  CHECK(markdown.find("| ANOVA | F=") != std::string::npos);
  CHECK(markdown.find("Two-way ANOVA of condition hvd, epoch time: model * np (8 epochs, type II "
                      "sums of squares)") != std::string::npos);
  CHECK(markdown.find("| model | 1 | 40.50 | 40.50 | 20.25 | p=0.011 | 0.835 |") !=
        std::string::npos);
  CHECK(markdown.find("| model:np | 1 | 4.50 | 4.50 | 2.25 | p=0.21 | 0.360 |") !=
        std::string::npos);
  CHECK(markdown.find("| Residuals | 4 | 8.00 | 2.00 | | | |") != std::string::npos);

  const auto csv = report::make_exporter("csv")->render(report);
  const auto lines = std::count(csv.begin(), csv.end(), '\n');
  CHECK(lines == 1 + 6 + 2 + 4);  // header, 6 rows, 2 block ANOVAs, 4 two-way terms
  // Every line has the header's fields (no field here holds a comma or a quote).
  {
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);
    const auto fields = std::count(line.begin(), line.end(), ',');
    while (std::getline(in, line)) {
      INFO(line);
      CHECK(std::count(line.begin(), line.end(), ',') == fields);
    }
  }
  CHECK(csv.find("row,model,vgg16,hvd np=2,hvd,mpirun,2,1,2,7,") != std::string::npos);
  CHECK(csv.find("two_way,model,,,,,,,,,,,,,,,condition hvd: model * np,model:np,1,4,4.5") !=
        std::string::npos);

  const auto json = nlohmann::json::parse(report::make_exporter("json")->render(report));
  CHECK(json["by"] == "model");
  CHECK(json["levels"] == nlohmann::json::array({"vgg16", "inception_v3"}));
  CHECK(json["blocks"].size() == 2);
  CHECK(json["blocks"][1]["level"] == "inception_v3");
  CHECK(json["blocks"][1]["rows"][2]["mean_epoch_seconds"] == 4.0);
  CHECK(json["two_way"][0]["terms"][0]["f"].get<double>() == doctest::Approx(20.25));
  CHECK(json["two_way"][0]["terms"][3]["f"].is_null());
}

TEST_CASE("the notes say how many last epochs ended at the last line or the exit") {
  auto samples = table2_samples();
  const auto note_of = [&](const std::vector<report::Run>& input) -> std::string {
    for (const auto& note : build_report("t2", input, file_order()).notes)
      if (note.find("Last epochs without an end-of-epoch line") == 0) return note;
    return "";
  };
  CHECK(note_of(samples).empty());
  samples[0].epochs[1].end_rule = "exit";  // run 1's last epoch: 5 s after a 3 s epoch
  samples[1].epochs[1].end_rule = "last_line";
  samples[1].epochs[1].seconds = 9;                  // run 2's: 9 s after an 11 s epoch
  samples[2].epochs[1].end_rule = "epoch_end_line";  // the program's own end line: no note
  samples[2].epochs[0].end_rule = "last_line";       // not a last epoch: not counted
  // Each rule, and whether its last epochs came out late or early, by how much.
  CHECK(note_of(samples) ==
        "Last epochs without an end-of-epoch line: 1 at the process's exit (rule `exit`): 1 late "
        "(longer than their runs' other epochs, by 2 s on average: they include what the "
        "program did after training); 1 at the run's last line (rule `last_line`): 1 early "
        "(shorter than their runs' other epochs, by 2 s on average: the program's last line "
        "came before the epoch's work ended); docs/metrics.md, \"The last epoch\".");
}

TEST_CASE("report --by in LaTeX: a factor named batch_size is escaped everywhere, label included") {
  auto samples = table2_samples();
  for (auto& s : samples) s.levels = {{"batch_size", s.levels.at(0).second}};
  auto options = file_order();
  options.level_order = {{"batch_size", {"vgg16", "inception_v3"}}};
  const auto report = build_factor_report("t2", samples, "batch_size", options);
  const auto latex = report::make_exporter("latex")->render(report);
  // A \label holds no control sequence (\_ there stops pdflatex: "Missing \endcsname").
  const auto label = latex.find("\\label{");
  REQUIRE(label != std::string::npos);
  const auto label_end = latex.find('}', label);
  CAPTURE(latex.substr(label, label_end - label + 1));
  CHECK(latex.substr(label + 7, label_end - label - 7).find('\\') == std::string::npos);
  CHECK(latex.find("by batch\\_size") != std::string::npos);                // the caption
  CHECK(latex.find("batch\\_size = inception\\_v3") != std::string::npos);  // a block's title
  // Outside comments, no bare underscore is left.
  std::istringstream in(latex);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("%")) continue;
    CAPTURE(line);
    for (std::size_t at = line.find('_'); at != std::string::npos; at = line.find('_', at + 1))
      CHECK((at > 0 && line[at - 1] == '\\'));
  }
  // And pdflatex takes it (where TeX Live is installed).
  if (std::system("command -v pdflatex >/dev/null 2>&1") != 0) return;
  test::TempDir dir;
  std::ofstream(dir / "table.tex") << latex;
  std::ofstream(dir / "paper.tex")
      << "\\documentclass{article}\n\\usepackage{booktabs,dcolumn,graphicx}\n\\begin{document}\n"
         "\\input{table.tex}\n\\end{document}\n";
  const std::string command = "cd '" + dir.path().string() +
                              "' && pdflatex -interaction=nonstopmode -halt-on-error paper.tex "
                              ">/dev/null 2>&1";
  CHECK(std::system(command.c_str()) == 0);
}
