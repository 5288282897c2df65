#pragma once
/// How the rows of a measured CSV (traces/measured/*.csv, columns in docs/cuda.md) name their
/// workload parameters: the contract's parameter columns and the attention variant columns.
///
/// A variant column (kv_heads, seq_kv, causal, splits) may be missing: a missing column, or an
/// empty cell, is the parameter's default — kv_heads = heads, seq_kv = seq, causal 0, splits 1 —
/// so the files written before the variants (h200-sweep.csv and the rest) read and join exactly
/// as they did. A present cell must be a positive whole number (causal: 0 or 1).

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "studies/sweep_csv.h"
#include "studies/sweep_plan.h"

namespace memwall {

/// The parameter columns of the contract, in its order.
inline constexpr std::array<const char*, 11> kMeasuredParamColumns = {
    "workload", "batch",    "heads",   "seq",    "head_dim",    "dtype",
    "block_q",  "block_kv", "block_k", "stages", "softmax_rows"};

/// The attention variant columns, each optional (see above).
inline constexpr std::array<const char*, 4> kMeasuredVariantColumns = {"kv_heads", "seq_kv",
                                                                       "causal", "splits"};

/// The variant cells of row `row` of `table` that are present and non-empty, as (column, value)
/// with the value in canonical form (no leading zeros). Throws UsageError "WHERE: column NAME:
/// expected ..., got "TEXT"" for a cell that is not a positive whole number (causal: 0 or 1).
FlatRow measured_variant_cells(const CsvTable& table, std::size_t row, const std::string& where);

/// The join values of the variant parameters, in the order of kMeasuredVariantColumns, of a row
/// or point whose named parameters are `named` (a measured row's cells, or the resolved
/// WorkloadParams::named() of a simulated point): a parameter's value where `named` has it
/// non-empty and different from its default, else "" (the default: kv_heads that of heads,
/// seq_kv that of seq, causal 0, splits 1). So a default written out and a default left out join
/// alike. Then the GEMM kernel, "" for mma_sync: the measured files' naive and gemm rows are the
/// mma.sync kernels of models/cuda, so a point simulated with `--gemm wgmma` (a Hopper config's
/// default) joins no row of them.
std::vector<std::string> variant_join_values(const FlatRow& named);

/// "workload, batch, ..., softmax_rows" and then the variant columns that `table` has: the
/// columns its rows are joined on, for messages.
std::string measured_join_columns_text(const CsvTable& table);

}  // namespace memwall
