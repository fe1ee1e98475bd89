// One column list per record type: the stored fields of a table in one place, each with how it is
// bound into an INSERT and read back from a SELECT, so that the writer (database.cpp) and the
// reader (database_read.cpp) cannot drift apart and no bind is written by hand. Internal to db/;
// the columns themselves are public (docs/database.md) and do not change here.
//
// A list holds what a record stores, not the row's key: the writer binds the keys first (a new
// run's id as run_id, say), the reader selects them first (SELECT id, <columns>).
#pragma once

#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "db/database.hpp"
#include "db/sqlite_statement.hpp"

namespace scalebench::db::detail {

template <typename Record>
struct Column {
  std::string_view name;
  void (*bind)(Statement& st, int index, const Record& record);
  void (*read)(const Statement& st, int index, Record& record);
};

template <std::integral T>
void read_value(const Statement& st, int index, T& value) {
  value = static_cast<T>(st.int64(index));
}
inline void read_value(const Statement& st, int index, double& value) { value = st.real(index); }
inline void read_value(const Statement& st, int index, std::string& value) {
  value = st.text(index);
}
template <typename T>
void read_value(const Statement& st, int index, std::optional<T>& value) {
  if (st.is_null(index)) {
    value.reset();
    return;
  }
  T read{};
  read_value(st, index, read);
  value = std::move(read);
}

template <typename>
struct MemberOf;
template <typename Record, typename T>
struct MemberOf<T Record::*> {
  using type = Record;
};

// A column that stores the field `Member` as it is (NULL for an absent optional).
template <auto Member>
constexpr Column<typename MemberOf<decltype(Member)>::type> field(std::string_view name) {
  using Record = typename MemberOf<decltype(Member)>::type;
  return {name, [](Statement& st, int index, const Record& r) { st.bind(index, r.*Member); },
          [](const Statement& st, int index, Record& r) { read_value(st, index, r.*Member); }};
}

// ---- the lists ---------------------------------------------------------------------------------

// experiments, after id.
inline constexpr Column<ExperimentRecord> kExperimentColumns[] = {
    field<&ExperimentRecord::name>("name"),
    field<&ExperimentRecord::source_path>("source_path"),
    field<&ExperimentRecord::spec_json>("spec_json"),
    field<&ExperimentRecord::started_at>("started_at"),
    field<&ExperimentRecord::host>("host"),
    field<&ExperimentRecord::cpu_count>("cpu_count"),
    field<&ExperimentRecord::scalebench_version>("scalebench_version"),
    {"spec_hash",  // computed from the spec when the record leaves it empty
     [](Statement& st, int index, const ExperimentRecord& e) {
       st.bind(index, e.spec_hash.empty() ? spec_hash(e.spec_json) : e.spec_hash);
     },
     [](const Statement& st, int index, ExperimentRecord& e) { e.spec_hash = st.text(index); }},
    field<&ExperimentRecord::cells>("cells"),
    field<&ExperimentRecord::ended_at>("ended_at"),
    field<&ExperimentRecord::end_reason>("end_reason"),
    field<&ExperimentRecord::factors_json>("factors_json"),
    field<&ExperimentRecord::run_order>("run_order"),
    field<&ExperimentRecord::order_seed>("order_seed"),
};

// runs, after id. The factors are rows of run_factors, written and read on their own.
inline constexpr Column<RunRecord> kRunColumns[] = {
    field<&RunRecord::experiment_id>("experiment_id"),
    field<&RunRecord::experiment>("experiment"),
    field<&RunRecord::condition>("condition"),
    field<&RunRecord::launcher>("launcher"),
    field<&RunRecord::np>("np"),
    field<&RunRecord::repetition>("repetition"),
    field<&RunRecord::command_line>("command_line"),
    {"status",
     [](Statement& st, int index, const RunRecord& r) { st.bind(index, to_string(r.status)); },
     [](const Statement& st, int index, RunRecord& r) {
       r.status = parse_run_status(st.text(index));
     }},
    field<&RunRecord::exit_code>("exit_code"),
    field<&RunRecord::signal>("signal"),
    field<&RunRecord::error>("error"),
    field<&RunRecord::started_at>("started_at"),
    field<&RunRecord::ended_at>("ended_at"),
    field<&RunRecord::wall_seconds>("wall_seconds"),
    field<&RunRecord::startup_seconds>("startup_seconds"),
    field<&RunRecord::train_images>("train_images"),
    field<&RunRecord::images_per_second>("images_per_second"),
    field<&RunRecord::attempt>("attempt"),
    field<&RunRecord::env_json>("env_json"),
    field<&RunRecord::test_accuracy>("test_accuracy"),
};

// epochs, after run_id. The ranks' ends are rows of epoch_rank_ends (kRankEndColumns).
inline constexpr Column<EpochRecord> kEpochColumns[] = {
    field<&EpochRecord::epoch>("epoch"),
    field<&EpochRecord::total_epochs>("total_epochs"),
    field<&EpochRecord::start_offset_seconds>("start_offset_seconds"),
    field<&EpochRecord::duration_seconds>("duration_seconds"),
    field<&EpochRecord::trainer_seconds>("trainer_seconds"),
    field<&EpochRecord::loss>("loss"),
    field<&EpochRecord::accuracy>("accuracy"),
    field<&EpochRecord::end_rule>("end_rule"),
    field<&EpochRecord::test_accuracy>("test_accuracy"),
    field<&EpochRecord::validation_accuracy>("validation_accuracy"),
};

// epoch_rank_ends, after run_id and epoch.
inline constexpr Column<RankEnd> kRankEndColumns[] = {
    field<&RankEnd::rank>("rank"),
    field<&RankEnd::end_offset_seconds>("end_offset_seconds"),
    field<&RankEnd::end_rule>("end_rule"),
};

// lines, after run_id; also the whole of temp.staged_lines.
inline constexpr Column<LineRecord> kLineColumns[] = {
    field<&LineRecord::seq>("seq"),       field<&LineRecord::offset_seconds>("offset_seconds"),
    field<&LineRecord::stream>("stream"), field<&LineRecord::rank>("rank"),
    field<&LineRecord::text>("text"),
};

// allreduce_results, after run_id.
inline constexpr Column<AllreduceRecord> kAllreduceColumns[] = {
    field<&AllreduceRecord::seq>("seq"),
    field<&AllreduceRecord::transport>("transport"),
    field<&AllreduceRecord::bytes>("bytes"),
    field<&AllreduceRecord::count>("count"),
    field<&AllreduceRecord::type>("type"),
    field<&AllreduceRecord::redop>("redop"),
    field<&AllreduceRecord::time_us>("time_us"),
    field<&AllreduceRecord::algbw_gbs>("algbw_gbs"),
    field<&AllreduceRecord::busbw_gbs>("busbw_gbs"),
    field<&AllreduceRecord::wrong>("wrong"),
};

// ---- statements from a list --------------------------------------------------------------------

// "k1, k2, c1, c2, ...": the keys, then the list's columns.
template <typename Record, std::size_t N>
std::string column_names(std::initializer_list<std::string_view> keys,
                         const Column<Record> (&columns)[N]) {
  std::string out;
  const auto add = [&](std::string_view name) {
    if (!out.empty()) out += ", ";
    out += name;
  };
  for (const auto key : keys) add(key);
  for (const auto& column : columns) add(column.name);
  return out;
}

// "INSERT INTO table (keys..., columns...) VALUES (?1, ...)": the keys take ?1.. in order, the
// columns the parameters after them (bind_columns).
template <typename Record, std::size_t N>
std::string insert_sql(std::string_view table, std::initializer_list<std::string_view> keys,
                       const Column<Record> (&columns)[N], std::string_view verb = "INSERT") {
  std::string values;
  for (std::size_t i = 1; i <= keys.size() + N; ++i)
    values += (i > 1 ? ", ?" : "?") + std::to_string(i);
  return std::string(verb) + " INTO " + std::string(table) + " (" + column_names(keys, columns) +
         ") VALUES (" + values + ")";
}

// Binds the record's columns to parameters first, first + 1, ...
template <typename Record, std::size_t N>
void bind_columns(Statement& st, int first, const Record& record,
                  const Column<Record> (&columns)[N]) {
  for (std::size_t i = 0; i < N; ++i) columns[i].bind(st, first + static_cast<int>(i), record);
}

// Reads the record's columns from result columns first, first + 1, ...
template <typename Record, std::size_t N>
void read_columns(const Statement& st, int first, Record& record,
                  const Column<Record> (&columns)[N]) {
  for (std::size_t i = 0; i < N; ++i) columns[i].read(st, first + static_cast<int>(i), record);
}

}  // namespace scalebench::db::detail
