#pragma once
/// The cases memwall-cuda runs: one attention workload at one shape with one set of block sizes.
/// Cases come from a built-in sweep (check, sweep, profile) or from `--case key=value,...`
/// specs; their CSV columns use the workload parameter names of the tiling contract.

#include <cstdint>
#include <string>
#include <vector>

#include "models/cuda/attention_shape.h"

namespace memwall::cuda {

enum class Workload { kNaive, kFlash2 };

/// One case. For naive, `naive` holds the blocks; for flash2, `flash2`.
struct HarnessCase {
  Workload workload = Workload::kFlash2;
  AttentionShape shape;
  NaiveBlocks naive;
  Flash2Blocks flash2;
};

/// "naive" or "flash2".
std::string workload_name(Workload workload);

/// The contract's default blocks for flash2: 128×128 for head_dim ≤ 64, 128×64 above; stages 2.
Flash2Blocks default_flash2_blocks(int head_dim);

/// Parses "workload=flash2,batch=1,heads=8,seq=4096,head_dim=128,block_q=128,..." (keys of the
/// contract; unspecified blocks take the contract's defaults). Throws UsageError naming the spec
/// and the bad key or value.
HarnessCase parse_case(const std::string& spec);

/// A built-in list: "check" (small shapes, every instantiated variant, partial blocks),
/// "sweep" (the measured H200 sweep: N 512…16384, d 64 and 128, B·H 1·8 and 4·16),
/// "profile" (the sweep without naive at B·H = 64 for N ≥ 8192, for ncu).
/// Throws UsageError for another name.
std::vector<HarnessCase> builtin_cases(const std::string& name);

/// The CSV header of the parameter columns, comma-separated, without a trailing comma:
/// workload,batch,heads,seq,head_dim,dtype,block_q,block_kv,block_k,stages,softmax_rows
std::string case_csv_header();

/// The parameter columns of `c` in header order; columns that do not apply are empty.
std::string case_csv_columns(const HarnessCase& c);

/// The kernels a case launches, in launch order: qk, softmax, pv or flash2_fwd.
std::vector<std::string> case_kernels(const HarnessCase& c);

}  // namespace memwall::cuda
