// `scalebench paper`: one document model for the whole bundle of a study (tables, figures, the
// scaling model, provenance) and its two writers: a LaTeX directory whose main.tex compiles with a
// stock TeX Live (texlive-latex-recommended), and one self-contained HTML page with the same
// content. The parts arrive rendered (tables by the exporters, figures by plotting/, the model by
// scaling/); this file only lays them out (docs/paper.md).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/analysis/report.hpp"

namespace scalebench::report {

struct PaperTable {
  std::string name;   // the file stem under tables/: "quickstart", "quickstart-by-model"
  std::string latex;  // a table environment (with its caption and label)
  std::string html;   // an HTML page (its <body> goes into index.html) or fragment
};

struct PaperFigure {
  std::string name;     // the file stem under figures/ (NAME.pdf for LaTeX, NAME.svg for HTML)
  std::string caption;  // plain text: what is drawn and what the bars are
  std::string svg;      // the rendered SVG, inlined into index.html; empty: a link to NAME.png
  double width_in = 0;  // drawn at this width and included at it (wider than a column: figure*)
};

struct PaperSection {
  std::string heading;  // what readers see (the experiment's label)
  std::string label;    // a LaTeX label stem: "sec:quickstart"
  // The setup paragraph under the heading: what and its text (report/data/setup.hpp).
  std::vector<std::pair<std::string, std::string>> setup;
  std::vector<PaperTable> tables;
  std::vector<PaperFigure> figures;
};

// The page main.tex sets: an article of one column 6.5 in wide, or of two columns of 3.4 in (7 in
// of text, 0.2 in between), the width of IEEE's and ACM's columns.
inline constexpr double kOneColumnTextInches = 6.5;
inline constexpr double kTwoColumnTextInches = 7.0;
inline constexpr double kColumnSepInches = 0.2;

struct PaperDocument {
  std::string title;
  int columns = 1;  // 1 or 2: the article's layout
  std::vector<PaperSection> sections;
  // One provenance block per experiment (the appendix).
  std::vector<std::pair<std::string, Provenance>> provenance;
  // What made the bundle and from what: the command line, the version, the database, the
  // instances. Plain text lines; in the appendix and as comments.
  std::vector<std::string> made_by;
};

// What marks the files `paper` writes, so that it replaces only its own: main.tex begins with
// kPaperTexMark, index.html holds kPaperHtmlMark.
inline constexpr std::string_view kPaperTexMark = "% scalebench ";
inline constexpr std::string_view kPaperHtmlMark = "<!-- written by scalebench paper -->";

// main.tex, for LuaLaTeX (its first line says so), on the page of `document.columns`: fontspec with
// Latin Modern and, for glyphs it lacks, DejaVu Sans and WenQuanYi Micro Hei where installed, so
// any UTF-8 in names and labels typesets (pdflatex stops at the first character outside its input
// encoding); the article around the tables (\input{tables/NAME}) and figures (figures/NAME.pdf),
// with the provenance appendix
// (\input{provenance}). Every table and figure stays inside its section, after its heading: in one
// column each is placed where it stands ([H], float.sty); in two, a page-wide one (table*,
// figure*) goes to the top of the next page, which LaTeX never places above its heading.
std::string paper_main_tex(const PaperDocument& document);
// A table's LaTeX placed as main.tex places it: in one column, a table* becomes a table and every
// table is placed here ([H]); in two columns as it is.
std::string placed_table(const std::string& latex, int columns);
// provenance.tex: the appendix's body, each experiment's provenance as a longtable.
std::string paper_provenance_tex(const PaperDocument& document);
// index.html: the same document as one self-contained page.
std::string paper_html(const PaperDocument& document);

// The manifest beside main.tex: its first line kPaperManifestMark, then the path (relative to the
// directory) of every file `paper` has written there, each listed before it is first written.
// A file of the bundle that exists and is not listed is a user's own: never replaced.
inline constexpr std::string_view kPaperManifest = ".scalebench-paper";
inline constexpr std::string_view kPaperManifestMark =
    "# scalebench paper: the files it wrote here, and the only ones it replaces";

// Throws ReportError naming the first of `files` (paths relative to `directory`, the manifest
// included) that exists there and was not written by `paper`: not in the manifest (or, for a
// bundle of an earlier release without one, not main.tex with kPaperTexMark, index.html with
// kPaperHtmlMark, or a table, figure or provenance.tex that main.tex names), or a manifest
// without its mark. Nothing is written.
void refuse_foreign_files(const std::filesystem::path& directory,
                          const std::vector<std::string>& files);
// Writes the manifest (atomically): its earlier entries and `files`.
void write_paper_manifest(const std::filesystem::path& directory,
                          const std::vector<std::string>& files);

// The files write_paper writes, in its order (for checks before anything is written).
std::vector<std::filesystem::path> paper_files(const std::filesystem::path& directory,
                                               const PaperDocument& document);

// Writes tables/NAME.tex, main.tex, provenance.tex and index.html under `directory` (created),
// each replaced whole (output_file.hpp); the figures are the caller's, under figures/. Returns the
// files written.
std::vector<std::filesystem::path> write_paper(const std::filesystem::path& directory,
                                               const PaperDocument& document);

// ---- The bundle as one step (paper_bundle.cpp): every check before the first file ----

// A file stem LaTeX's \includegraphics and \input take: letters, digits and '-' (an experiment
// name may hold spaces, dots and '='), never starting with '-'; "experiment" when none is left.
std::string paper_file_stem(std::string_view name);

// A figure drawn only once every table is computed (nothing is written before then): its
// section, file stem under figures/, caption, the files drawing it writes (relative to the
// bundle's directory), and the drawing, which writes them under a prefix and returns the SVG.
struct PaperFigureJob {
  std::size_t section = 0;
  std::string name;
  std::string caption;
  std::vector<std::string> files;
  std::function<std::filesystem::path(const std::filesystem::path& prefix)> draw;
  double width_in = 0;  // the width it is drawn at (PaperFigure::width_in)
};

// Checks, then writes the bundle: refuses (nothing written) an `directory` that is not one, a
// tables/ or figures/ that is a symbolic link, two parts with one file name, any file of the
// bundle `paper` did not write (refuse_foreign_files) and any that is `database` itself
// (refuse_database_output); then the manifest, the figures (each SVG inlined into its section)
// and write_paper.
void write_paper_bundle(const std::filesystem::path& directory, PaperDocument& document,
                        const std::vector<PaperFigureJob>& figures, const std::string& database);

}  // namespace scalebench::report
