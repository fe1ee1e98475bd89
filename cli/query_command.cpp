#include "cli/query_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <optional>
#include <ostream>

#include "cli/numeric_flags.hpp"
#include "cli/query_format.hpp"

namespace scalebench::cli {

void declare_query_options(CLI::App& app, QueryCommand& options) {
  app.add_option("sql", options.sql, "One SELECT (or other read-only) statement")->required();
  add_database_option(app, options.database);
  app.add_flag("--csv", options.csv,
               "CSV instead of an aligned table (control characters escaped as \\x1b "
               "when stdout is a terminal, kept as they are otherwise)");
  app.add_option("--timeout", options.limits.timeout_seconds, "Stop the query after SECONDS")
      ->transform(real_in({0, 1e9, true, false}))
      ->capture_default_str();
  app.add_option("--max-rows", options.limits.max_rows, "Refuse a result of more than N rows")
      ->transform(integer_in(1, 1'000'000'000'000'000))
      ->capture_default_str();
  app.add_option("--max-memory", options.limits.max_memory_bytes,
                 "Memory for SQLite and the result, e.g. 512MiB, 2GiB (default 1GiB)")
      ->transform(size_in(1, std::uint64_t{1} << 50));
}

int query_command(const QueryCommand& options, std::ostream& out, std::ostream&) {
  const db::QueryLimits& limits = options.limits;
  const auto database = db::Database::open(options.database, db::OpenMode::ReadOnly);
  // Trainer output can hold escape sequences: never raw to a terminal. CSV into a file or a pipe
  // stays byte for byte.
  const bool to_terminal = &out == &std::cout && ::isatty(STDOUT_FILENO) == 1;
  // What is held for printing counts against --max-memory with SQLite's heap (the sink returns
  // it). CSV streams: records gather up to `flush_at` bytes and are written from there on, so a
  // small result comes out whole or not at all. The aligned table needs every row for its
  // widths: it keeps the escaped cells, bounded, and writes them line by line at the end.
  const std::size_t flush_at = std::min<std::size_t>(limits.max_memory_bytes / 4, 1 << 20);
  std::string pending;
  std::size_t rows_written = 0;
  std::size_t rows_pending = 0;
  std::optional<cli::AlignedTable> table;
  db::QueryRowSink sink;
  sink.columns = [&](const std::vector<std::string>& columns) {
    if (options.csv) {
      cli::append_csv_record(pending, columns, to_terminal);
    } else {
      table.emplace(columns);
    }
  };
  sink.row = [&](std::vector<std::optional<std::string>>& row) -> std::size_t {
    if (!options.csv) {
      table->add(row);
      return table->held_bytes();
    }
    cli::append_csv_record(pending, row, to_terminal);
    ++rows_pending;
    if (pending.size() >= flush_at) {
      out.write(pending.data(), static_cast<std::streamsize>(pending.size()));
      pending.clear();
      rows_written += rows_pending;
      rows_pending = 0;
      if (pending.capacity() > 2 * flush_at) pending.shrink_to_fit();
    }
    return pending.capacity();
  };
  try {
    database.query_read_only(options.sql, limits, sink);
  } catch (const db::QueryLimitError& error) {
    using Limit = db::QueryLimitError::Limit;
    const char* option = error.limit() == Limit::Time   ? "--timeout SECONDS"
                         : error.limit() == Limit::Rows ? "--max-rows N"
                                                        : "--max-memory SIZE";
    std::string message = fmt::format("{}; raise it with {}", error.what(), option);
    if (!options.csv && error.limit() == Limit::Memory && table && table->rows() > 0) {
      message += " (the aligned table holds every row to align the columns; --csv streams them)";
    }
    if (options.csv && rows_written > 0) {
      out.flush();
      message +=
          fmt::format("; the CSV written before the stop is incomplete ({} rows)", rows_written);
    }
    throw db::QueryLimitError(error.limit(), message);
  }
  if (options.csv) {
    out.write(pending.data(), static_cast<std::streamsize>(pending.size()));
  } else {
    table->write(out);
  }
  return 0;
}

}  // namespace scalebench::cli
