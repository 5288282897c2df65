#pragma once
// Reading rows of the committed measured CSVs (traces/measured/*.csv) in tests: a named cell, and
// the workload parameters of a row from its parameter columns (the columns of docs/cuda.md).

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "models/workload_params.h"
#include "studies/sweep_csv.h"

namespace memwall::test {

/// The cell of `row` in column `name`; fails the test if the table has no such column.
inline const std::string& measured_cell(const CsvTable& csv, const std::vector<std::string>& row,
                                        const char* name) {
  const int c = csv.column(name);
  REQUIRE(c >= 0);
  return row[static_cast<std::size_t>(c)];
}

/// The resolved workload parameters of a measured row (its non-empty parameter columns).
inline WorkloadParams measured_params(const CsvTable& csv, const std::vector<std::string>& row) {
  std::vector<std::pair<std::string, std::string>> named;
  for (const char* key : {"workload", "batch", "heads", "seq", "head_dim", "dtype", "block_q",
                          "block_kv", "block_k", "stages", "softmax_rows"}) {
    const std::string& value = measured_cell(csv, row, key);
    if (!value.empty()) named.emplace_back(key, value);
  }
  return resolve_workload(params_from_named(named));
}

}  // namespace memwall::test
