// The parts of `scalebench paper`'s bundle (cli/paper_command.hpp): one experiment's section,
// its table, --by table and scaling model rendered, and its figures queued to be drawn once every
// part is computed (report/export/paper.hpp writes them).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/paper_command.hpp"
#include "db/database.hpp"
#include "plotting/figure.hpp"
#include "report/export/paper.hpp"

namespace scalebench::cli {

// The figures at main.tex's text width (6.5 in: letter or A4 less geometry's margins) with no
// title: the caption says what the figure is. Throws for a malformed --size.
plotting::FigureStyle paper_figure_style(const PaperCommand& options);

// The parts of one experiment's section; figures are queued. With several experiments, a --by
// factor or a model that one of them lacks is left out of that one's section, said on `out`; with
// one experiment it is an error.
report::PaperSection paper_section(const db::Database& database, const PaperCommand& options,
                                   const std::string& experiment, report::PaperDocument& document,
                                   std::vector<report::PaperFigureJob>& figures, std::ostream& out);

}  // namespace scalebench::cli
