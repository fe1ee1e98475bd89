// The report as a LaTeX table for papers: booktabs rules, decimal-aligned numbers (dcolumn, no
// siunitx), each interval in a row under its value, a caption with the unit of analysis, the base
// and the ANOVA, a unique label, short notes under the table and the rest (provenance, timestamps,
// long explanations) as % comments. report --by sets the levels side by side in one tabular, the
// two-way ANOVAs under it. It compiles with a stock TeX Live (texlive-latex-recommended) given
// \usepackage{booktabs,dcolumn,graphicx}; tests/report/test_latex_html.cpp compiles it. The
// tabular itself: latex_table.cpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "report/export/column_format.hpp"
#include "report/export/exporters.hpp"
#include "report/export/format.hpp"
#include "report/export/latex_table.hpp"
#include "report/export/markup.hpp"
#include "report/export/table_cells.hpp"
#include "util/text.hpp"

namespace scalebench::report {
namespace {

// The float: table* spans both columns of a two-column paper (in one column it is a table);
// \footnotesize with narrower column gaps, so that two levels of report --by fit an article's line.
constexpr std::string_view kTableOpen =
    "\\begin{table*}[tbp]\n\\centering\n\\footnotesize\n\\setlength{\\tabcolsep}{3.5pt}\n";
constexpr std::string_view kPackages = "\\usepackage{booktabs,dcolumn,graphicx}";

// A \label holds letters, digits and '-' (a control sequence there stops pdflatex):
// tab:<experiment>-<unit>, tab:<experiment>-by-<factor>-<unit>: unique per table and unit.
std::string label_of(std::string_view experiment, std::string_view unit,
                     std::string_view factor = {}) {
  return fmt::format("tab:{}{}-{}", util::alnum_or_dash(experiment),
                     factor.empty() ? "" : "-by-" + util::alnum_or_dash(factor),
                     util::alnum_or_dash(unit));
}

std::string provenance_comments(const Provenance& provenance) {
  std::string out;
  for (const auto& [key, value] : provenance) out += tex_comment(fmt::format("{}: {}", key, value));
  return out;
}

// "$p = 0.43$", "$p = 3.20 \times 10^{-12}$", "$p < 4.94 \times 10^{-324}$".
std::string p_math(double p) {
  const auto text = latex::p_value(p);
  if (text.starts_with("$<")) return "$p " + text.substr(1);
  if (text.starts_with('$')) return "$p = " + text.substr(1);
  return std::isnan(p) ? text : "$p = " + text + "$";
}

// The unit of analysis for the caption: "nested" says what it is.
std::string unit_text(std::string_view unit) {
  return unit == "nested" ? "nested (epochs within runs, a mixed model)" : tex(unit);
}

std::string anova_math(const AnovaSummary& a) {
  const auto f = std::isfinite(a.f) ? fmt::format("{:.2f}", a.f) : std::string("\\infty");
  return fmt::format("{}$F({:g}, {:.3g}) = {}$, {}", a.welch ? "Welch " : "", a.df_between,
                     a.df_within, f, p_math(a.p));
}

// The notes: what a reader of the paper needs stays under the table, short; where and when the
// runs ran, what the unit means and where the docs explain it go into comments.
struct TexNotes {
  std::vector<std::string> visible;  // plain text (latex::prose escapes it)
  std::vector<std::string> hidden;   // the full text of the notes shortened or left out
};

// Without the parenthesised pointers into the documentation and the database.
std::string without_references(std::string note) {
  for (auto open = note.find(" ("); open != std::string::npos; open = note.find(" (", open + 1)) {
    const auto close = note.find(')', open);
    if (close == std::string::npos) break;
    const auto inner = note.substr(open + 2, close - open - 2);
    if (inner.starts_with("docs/") || inner.starts_with("see ")) {
      note.erase(open, close - open + 1);
      open = open == 0 ? 0 : open - 1;
    } else if (const auto docs = inner.find("; docs/"); docs != std::string::npos) {
      note.erase(open + 2 + docs, close - open - 2 - docs);
    }
  }
  return note;
}

std::string display_list(const std::vector<const ReportRow*>& rows, const Labels& labels) {
  std::vector<std::string> names;
  for (const auto* row : rows) names.push_back(display_label(*row, labels));
  return fmt::format("{}", fmt::join(names, "; "));
}

// The short form of `note` (absent: comment only), given the rows it speaks of.
std::optional<std::string> short_note(const std::string& note, const std::vector<ReportRow>& rows,
                                      const Labels& labels) {
  for (const auto* hidden : {"Measured in ", "The database holds ", "Unit of analysis: one run",
                             "Unit of analysis: epochs within runs"})
    if (note.starts_with(hidden)) return std::nullopt;
  if (note.starts_with("Unit of analysis: one epoch"))
    return "The unit of analysis is one epoch, as in the reference papers: epochs of one run are "
           "not independent samples, so the p-values are too small.";
  if (note.starts_with("Pooled ")) return note.substr(0, note.find(" (")) + ".";
  if (note.starts_with("Groups with 2 runs: ")) {
    std::vector<const ReportRow*> two;
    for (const auto& row : rows)
      if (row.runs == 2) two.push_back(&row);
    if (two.size() == rows.size())
      return "Every group has 2 runs: its intervals rest on 1 degree of freedom and say little.";
    return fmt::format(
        "Groups with 2 runs ({}): their intervals rest on 1 degree of freedom and "
        "say little.",
        display_list(two, labels));
  }
  if (note.starts_with("Intervals reaching below 0: ")) {
    const auto end = note.find(": an epoch time is positive");
    if (end != std::string::npos)
      return note.substr(0, end) + ": the runs cannot place these means.";
  }
  return without_references(note);
}

void add_note(TexNotes& notes, const std::string& note, const std::vector<ReportRow>& rows,
              const Labels& labels) {
  const auto visible = short_note(note, rows, labels);
  if (visible) notes.visible.push_back(*visible);
  if (!visible || *visible != note) notes.hidden.push_back(note);
}

TexNotes table_notes(const ReportTable& table) {
  TexNotes notes;
  for (const auto& note : table.notes) add_note(notes, note, table.rows, table.labels);
  return notes;
}

// The report's notes, then its blocks' (their unit notes are the report's own): a note every block
// has alike is said once, the others name their level.
TexNotes factor_notes(const FactorReport& report) {
  TexNotes notes;
  std::vector<ReportRow> all_rows;
  for (const auto& block : report.blocks)
    all_rows.insert(all_rows.end(), block.rows.begin(), block.rows.end());
  for (const auto& note : report.notes) add_note(notes, note, all_rows, report.labels);
  std::vector<std::vector<std::string>> per_block;
  for (const auto& block : report.blocks) {
    TexNotes own;
    for (const auto& note : block.notes)
      if (!note.starts_with("Unit of analysis")) add_note(own, note, block.rows, report.labels);
    per_block.push_back(own.visible);
    notes.hidden.insert(notes.hidden.end(), own.hidden.begin(), own.hidden.end());
  }
  for (std::size_t b = 0; b < per_block.size(); ++b)
    for (const auto& note : per_block[b]) {
      const bool everywhere = std::all_of(per_block.begin(), per_block.end(), [&](const auto& o) {
        return std::find(o.begin(), o.end(), note) != o.end();
      });
      if (!everywhere)
        notes.visible.push_back(fmt::format(
            "{}: {}", report.labels.level_with_factor(report.factor, report.levels[b]), note));
      else if (b == 0)
        notes.visible.push_back(note);
    }
  return notes;
}

std::string hidden_comments(const TexNotes& notes) {
  std::string out;
  std::vector<std::string> said;  // the blocks of report --by often share a note
  for (const auto& note : notes.hidden)
    if (std::find(said.begin(), said.end(), note) == said.end()) {
      out += tex_comment("Note: " + note);
      said.push_back(note);
    }
  return out;
}

std::string notes_block(const TexNotes& notes) {
  if (notes.visible.empty()) return "";
  std::string out = "\\par\\smallskip\n{\\footnotesize\\raggedright\n";
  for (const auto& note : notes.visible)
    out += fmt::format("\\noindent {}\\par\n", latex::prose(note));
  return out + "}\n";
}

// A weak-scaling table says so in its caption, where readers look for what Speed-up means.
std::string weak_text(bool weak) {
  return weak ? " (weak scaling: the same images per process per epoch at every np, so speed-up "
                "and efficiency are the scaled ones)"
              : "";
}

// Scaled down to the line width only when wider (graphicx; \width is the box's natural width): a
// last resort, for tables with many groups or long labels.
constexpr std::string_view kFitOpen =
    "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n";
constexpr std::string_view kFitClose = "%\n}\n";

// What a column is: its header (the unit of a percentage added) and how its text cells align.
// "Efficiency (%) [95% CI]": the unit before the interval's bracket; no bracket on a column
// shown without its intervals.
std::string column_header(std::string_view key, const std::string& header, bool with_interval) {
  const auto bracket = header.find(" [");
  const auto name = header.substr(0, bracket);
  const auto interval =
      bracket == std::string::npos || !with_interval ? "" : header.substr(bracket);
  return name + (key == "efficiency" || key == "test_accuracy" ? " (%)" : "") + interval;
}

char text_align(std::string_view key) { return key == "letters" ? 'c' : 'r'; }

// A block of `keys`' columns over `rows` (absent: not in the block), column `without_interval`
// without its intervals. The Tukey letters go onto the epoch time as superscripts, as papers print
// them, rather than into a column of their own.
latex::Block make_block(const std::vector<std::string>& keys,
                        const std::vector<std::string>& headers,
                        const std::vector<const ReportRow*>& rows, const ColumnFormats& formats,
                        std::string_view without_interval = {}) {
  const auto has = [&](std::string_view key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
  const bool marks = has("letters") && has("epoch_time");
  latex::Block block;
  std::vector<std::string> shown;
  std::size_t mean = 0;
  for (std::size_t c = 0; c < keys.size(); ++c) {
    if (marks && keys[c] == "letters") continue;
    if (keys[c] == "epoch_time") mean = shown.size();
    shown.push_back(keys[c]);
    block.headers.push_back(
        latex::header(column_header(keys[c], headers[c], keys[c] != without_interval)));
    block.text_align.push_back(text_align(keys[c]));
  }
  for (const auto* row : rows) {
    if (!row) {
      block.rows.emplace_back();
      continue;
    }
    std::vector<latex::Cell> cells;
    for (const auto& key : shown) {
      cells.push_back(latex::report_cell(*row, key, formats));
      if (key == without_interval) cells.back().interval.clear();
    }
    if (marks && row->letters)
      for (const char c : *row->letters)
        if (std::isalnum(static_cast<unsigned char>(c))) cells[mean].mark += c;
    block.rows.push_back(std::move(cells));
  }
  return block;
}

std::string letters_sentence(bool letters, double confidence, std::string_view where,
                             std::string_view pairwise) {
  if (!letters) return "";
  return fmt::format("; {}times that share a superscript letter do not differ ({}, {})", where,
                     tex(pairwise), tex(percent_of(confidence)));
}

std::string np_tex(const Labels& labels) {
  return labels.has("np") ? tex(labels.of("np", "np")) : "$\\mathit{np}$";
}

// A two-way ANOVA term as readers see it: the factor's label, np, their interaction.
std::string term_tex(const std::string& term, const FactorReport& report) {
  if (term == "np") return np_tex(report.labels);
  if (term == report.factor) return tex(report.labels.factor(report.factor));
  if (const auto colon = term.find(':'); colon != std::string::npos)
    return term_tex(term.substr(0, colon), report) + " $\\times$ " +
           term_tex(term.substr(colon + 1), report);
  return tex(term);
}

// One two-way ANOVA: its title line and a tabular with the numbers aligned.
std::string two_way_tex(const TwoWayTable& anova, const FactorReport& report,
                        std::optional<int> digits) {
  constexpr std::string_view kScope = "condition ";
  const auto scope = anova.scope.starts_with(kScope)
                         ? "condition " + tex(report.labels.of(anova.scope.substr(kScope.size()),
                                                               anova.scope.substr(kScope.size())))
                         : tex(anova.scope);
  const bool interaction = anova.model.find(" * ") != std::string::npos;
  std::string out = fmt::format(
      "\\par\\medskip\n{{\\footnotesize Two-way ANOVA of {}: {} {} {} ({} {}s, type {} sums of "
      "squares)}}\\par\\smallskip\n",
      scope, tex(report.labels.factor(report.factor)), interaction ? "$\\times$" : "$+$",
      np_tex(report.labels), anova.observations, report.unit == "epoch" ? "epoch" : "run",
      tex(anova.ss_type));
  const int figures = digits.value_or(3);
  const auto measure = [&](double v) {
    return latex::number_cell(latex::number(v, latex::decimals_for(v, figures)));
  };
  latex::Block block;
  block.headers = {"d.f.", "Sum Sq", "Mean Sq", "$F$", "$p$", "partial $\\eta^2$"};
  block.text_align = {'r', 'r', 'r', 'r', 'r', 'r'};
  std::vector<std::string> labels;
  for (const auto& term : anova.terms) {
    labels.push_back(term_tex(term.term, report));
    std::vector<latex::Cell> cells = {latex::number_cell(fmt::format("{:g}", term.df)),
                                      measure(term.ss), measure(term.ms)};
    cells.push_back(term.f && std::isfinite(*term.f) ? latex::number_cell(latex::number(*term.f, 2))
                                                     : latex::text_cell(""));
    cells.push_back(term.p ? latex::text_cell(latex::p_value(*term.p)) : latex::text_cell(""));
    cells.push_back(term.partial_eta_sq ? latex::number_cell(latex::number(*term.partial_eta_sq, 3))
                                        : latex::text_cell(""));
    block.rows.push_back(std::move(cells));
  }
  return out + latex::tabular("Effect", labels, {block}, "") + "\n";
}

}  // namespace

LatexExporter::LatexExporter(const ExporterOptions& options) : options_(options) {
  check_number_options(options);
}

std::string LatexExporter::render(const ReportTable& table) const {
  const auto columns = table_columns({&table}, table.unit, table.confidence, "base", table.labels);
  std::size_t runs = 0, epochs = 0;
  std::vector<const ReportRow*> rows;
  std::vector<std::string> row_labels;
  bool letters = false;
  for (const auto& row : table.rows) {
    runs += row.runs, epochs += row.epochs;
    rows.push_back(&row);
    row_labels.push_back(tex(display_label(row, table.labels)));
    letters = letters || row.letters.has_value();
  }
  std::string caption = fmt::format(
      "Epoch time by group, experiment {}{}. Unit of analysis: {} ({} runs, {} epochs); base: {}. "
      "Under each value its {} interval{}.",
      tex(table.labels.experiment(table.experiment)), weak_text(table.weak_scaling),
      unit_text(table.unit), runs, epochs, tex(base_display(table)),
      tex(percent_of(table.confidence)),
      letters_sentence(letters, table.confidence, "", table.pairwise));
  if (table.anova) caption += " One-way ANOVA: " + anova_math(*table.anova) + ".";
  const auto notes = table_notes(table);

  std::string out = tex_comment(
      fmt::format("scalebench report, experiment {} (needs {})", table.experiment, kPackages));
  out += provenance_comments(table.provenance);
  out += hidden_comments(notes);
  out += kTableOpen;
  out += fmt::format("\\caption{{{}}}\n\\label{{{}}}\n", caption,
                     label_of(table.experiment, table.unit));
  out += kFitOpen;
  out += latex::tabular(
      tex(columns.first_header), row_labels,
      {make_block(columns.keys, columns.headers, rows, table_formats(table, options_))}, "");
  out += kFitClose;
  out += notes_block(notes);
  out += "\\end{table*}\n";
  return out;
}

}  // namespace scalebench::report

namespace scalebench::report {

std::string LatexExporter::render(const FactorReport& report) const {
  // The side-by-side table shows a compact set per level; the SD, the Tukey p-values, images/s
  // and test accuracy are in the report without --by (said in a comment).
  const auto columns = factor_columns(report);
  std::vector<std::string> keys, headers;
  for (const auto* key : {"epoch_time", "speedup", "efficiency", "letters"})
    for (std::size_t c = 0; c < columns.keys.size(); ++c)
      if (columns.keys[c] == key) keys.push_back(key), headers.push_back(columns.headers[c]);
  std::vector<latex::Block> blocks;
  std::size_t runs = 0, epochs = 0;
  bool letters = false;
  std::vector<std::string> bases;
  for (std::size_t b = 0; b < report.blocks.size(); ++b) {
    const auto& table = report.blocks[b];
    std::vector<const ReportRow*> rows;
    for (const auto& key : report.row_keys) {
      const auto row = std::find_if(table.rows.begin(), table.rows.end(),
                                    [&](const ReportRow& r) { return r.label == key; });
      rows.push_back(row == table.rows.end() ? nullptr : &*row);
    }
    for (const auto& row : table.rows) {
      runs += row.runs, epochs += row.epochs;
      letters = letters || row.letters.has_value();
    }
    // Efficiency without its interval: the column stays as narrow as its header. Each level's
    // columns have their own decimals (side by side, they are columns of their own).
    auto block = make_block(keys, headers, rows, table_formats(table, options_), "efficiency");
    block.title = tex(report.labels.level_with_factor(report.factor, report.levels[b]));
    if (table.anova) block.footer = anova_math(*table.anova);
    blocks.push_back(std::move(block));
    if (std::find(bases.begin(), bases.end(), base_display(table)) == bases.end())
      bases.push_back(base_display(table));
  }
  std::vector<std::string> row_labels;
  for (const auto& key : report.row_keys) row_labels.push_back(tex(row_key_display(report, key)));
  const double confidence = report.blocks.empty() ? 0.95 : report.blocks[0].confidence;
  const auto factor = tex(report.labels.factor(report.factor));
  std::vector<std::string> base_texts;
  for (const auto& base : bases) base_texts.push_back(tex(base));
  const bool footers =
      std::any_of(blocks.begin(), blocks.end(), [](const auto& b) { return !b.footer.empty(); });
  const auto caption = fmt::format(
      "Epoch time by {}, experiment {}{}: one column block per level. Unit of analysis: {} ({} "
      "runs, {} epochs); base of each block: {}. Under each value its {} interval{}.{}{}",
      factor, tex(report.labels.experiment(report.experiment)), weak_text(report.weak_scaling),
      unit_text(report.unit), runs, epochs, fmt::join(base_texts, ", "),
      tex(percent_of(confidence)),
      letters_sentence(letters, confidence, "within a level, ",
                       [&] {
                         std::string name;
                         for (const auto& block : report.blocks)
                           name = name.empty() || name == block.pairwise ? block.pairwise
                                                                         : "Tukey or Games-Howell";
                         return name.empty() ? std::string("Tukey") : name;
                       }()),
      footers ? " Last row: one-way ANOVA per level." : "",
      report.two_way.empty()
          ? ""
          : fmt::format(" Below: two-way ANOVA {} $\\times$ {}.", factor, np_tex(report.labels)));
  const auto notes = factor_notes(report);

  std::string out = tex_comment(fmt::format("scalebench report, experiment {} by {} (needs {})",
                                            report.experiment, report.factor, kPackages));
  out += tex_comment(
      "Per level: epoch time (with the Tukey letters) and speed-up with their intervals, and "
      "efficiency; left out here (in the report without --by): the efficiency's interval, the "
      "SD, the Tukey p-values, images/s and test accuracy.");
  out += provenance_comments(report.provenance);
  out += hidden_comments(notes);
  out += kTableOpen;
  out += fmt::format("\\caption{{{}}}\n\\label{{{}}}\n", caption,
                     label_of(report.experiment, report.unit, report.factor));
  // At most kLevelsSideBySide levels side by side: more would not fit a page's width at a
  // readable size, so the rest follow in tabulars of their own under the first, the row labels
  // repeated (a shrunk table is the last resort only for long labels).
  for (std::size_t first = 0; first < blocks.size(); first += kLevelsSideBySide) {
    const std::vector<latex::Block> part(
        blocks.begin() + static_cast<std::ptrdiff_t>(first),
        blocks.begin() +
            static_cast<std::ptrdiff_t>(std::min(blocks.size(), first + kLevelsSideBySide)));
    if (first > 0) out += "\\par\\medskip\n";
    out += kFitOpen;
    out += latex::tabular(tex(columns.first_header), row_labels, part, "ANOVA");
    out += kFitClose;
  }
  for (const auto& anova : report.two_way) out += two_way_tex(anova, report, options_.digits);
  out += notes_block(notes);
  out += "\\end{table*}\n";
  return out;
}

}  // namespace scalebench::report
