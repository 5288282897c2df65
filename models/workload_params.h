#pragma once
/// The parameters of a workload and their resolution: defaults applied, every field checked.
///
/// WorkloadParams is the storage every command, study and test passes around: one field per
/// parameter name of the tiling contract (docs/models.md), the names used in trace headers,
/// simulator JSON and measured CSV columns. What each parameter means for a workload — unit,
/// default, help, bounds, checks — is declared by that workload's plugin (models/naive.cc, ...,
/// through models/workload_registry.h); the functions here only run the chosen plugin.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/workload_list.h"

namespace memwall {

/// Which workload: one enumerator per registered plugin, in registration order
/// (models/workload_list.h); `memwall workloads` says what each one is.
enum class WorkloadKind : std::uint8_t {
#define MEMWALL_WORKLOAD_ENUMERATOR(name) name,
  MEMWALL_WORKLOADS(MEMWALL_WORKLOAD_ENUMERATOR)
#undef MEMWALL_WORKLOAD_ENUMERATOR
};

/// Every workload, in registration order (for --help and error messages).
inline constexpr WorkloadKind kAllWorkloads[] = {
#define MEMWALL_WORKLOAD_LIST_ENTRY(name) WorkloadKind::name,
    MEMWALL_WORKLOADS(MEMWALL_WORKLOAD_LIST_ENTRY)
#undef MEMWALL_WORKLOAD_LIST_ENTRY
};

/// Element type of Q, K, V, O, S, P, A, B, C. Statistics (L, ℓ, m) are always fp32.
enum class Dtype : std::uint8_t { fp16 = 0, fp32 = 1 };

/// The GEMM kernel a workload's matrix products run on (gemm; naive attention's qk and pv):
/// mma_sync, a CTA per output tile whose warps issue mma.sync (models/cuda's naive kernels); or
/// wgmma, the Hopper-native kernel of models/cuda/hopper (TMA, wgmma, a persistent grid:
/// models/wgmma_gemm.h).
enum class GemmKernel : std::uint8_t { mma_sync = 0, wgmma = 1 };
/// The first SM architecture with wgmma and TMA (Hopper, sm_90): what `--gemm wgmma` and flash3
/// need of a config's sm.arch.
inline constexpr std::uint32_t kWgmmaMinArch = 90;

/// The workload's plugin name: "naive", "flash1", "flash2", "gemm".
std::string_view to_string(WorkloadKind kind);
/// "fp16", "fp32".
std::string_view to_string(Dtype dtype);
/// Parses a workload name; throws UsageError listing the known names.
WorkloadKind parse_workload_kind(std::string_view name);
/// Parses a dtype name; throws UsageError listing the known names.
Dtype parse_dtype(std::string_view name);
/// Bytes per element: 2 for fp16, 4 for fp32.
std::uint32_t element_bytes(Dtype dtype);

/// A workload's parameters. Optional fields left empty take their defaults in resolve_workload;
/// after it, every optional the workload uses is set and every optional it does not use is
/// empty. Sizes are in elements unless the name says bytes. A field's meaning per workload is in
/// `memwall workloads` (docs/workloads.md).
struct WorkloadParams {
  WorkloadKind workload = WorkloadKind::flash2;
  Dtype dtype = Dtype::fp16;

  // Attention shape (naive, flash1, flash2).
  std::uint64_t batch = 1;  ///< B
  std::uint64_t heads = 1;  ///< H
  std::uint64_t seq = 1024;  ///< N, tokens per head
  std::uint64_t head_dim = 64;  ///< d
  /// Hkv, key/value heads (grouped-query attention: heads / kv_heads query heads share one; 1 is
  /// multi-query). Resolution fills `heads`.
  std::optional<std::uint64_t> kv_heads;
  /// Nkv, key/value tokens per head, when it differs from the query length `seq` (decode is
  /// seq 1 against a long seq_kv). Resolution fills `seq`.
  std::optional<std::uint64_t> seq_kv;
  /// The causal mask, aligned bottom-right: query row i sees keys j <= i + seq_kv − seq.
  bool causal = false;

  // Attention tiling.
  std::optional<std::uint32_t> block_q;  ///< rows of Q per tile (naive bm, flash Br)
  std::optional<std::uint32_t> block_kv;  ///< rows of K/V per tile (naive bn, flash Bc)
  std::optional<std::uint32_t> block_k;  ///< naive pv: columns of P per k chunk
  std::optional<std::uint32_t> stages;  ///< flash2: K/V blocks in flight (pipelining depth)
  std::optional<std::uint32_t> softmax_rows;  ///< naive softmax: rows per CTA
  /// naive softmax: keys per load when it streams its rows from global memory (two reads of S);
  /// 0 keeps the rows whole in shared memory (one read). Resolution derives it when not given.
  std::optional<std::uint32_t> softmax_chunk;
  std::optional<std::uint64_t> sram_bytes;  ///< flash1: on-chip memory M in bytes (for defaults)
  /// flash2: split-KV chunks of each (head, Q block)'s K/V sequence ("Flash-Decoding"); 0 before
  /// resolution means `auto` (FlashAttention-2's num_splits_heuristic for the config's SMs).
  std::optional<std::uint32_t> splits;

  // gemm shape and tiling (C[m×n] = A[m×k]·B[k×n]).
  std::uint64_t m = 4096;  ///< rows of A and C
  std::uint64_t n = 4096;  ///< columns of B and C
  std::uint64_t k = 4096;  ///< columns of A, rows of B
  std::optional<std::uint32_t> tile_m;  ///< output tile rows
  std::optional<std::uint32_t> tile_n;  ///< output tile columns
  std::optional<std::uint32_t> tile_k;  ///< k chunk per loop step
  /// gemm, naive: the kernel of the matrix products (listed only when it is wgmma). Empty until
  /// resolution: choose_gemm_kernel gives a chip's default, resolve_workload mma_sync.
  std::optional<GemmKernel> gemm;

  /// Per-CTA shared-memory limit in bytes (a config's smem_per_block); when set, a tiling whose
  /// footprint exceeds it is rejected, unless allow_spill. A workload parameter
  /// ("smem_limit_bytes") only when allow_spill is set.
  std::optional<std::uint64_t> smem_limit_bytes;
  /// Where smem_limit_bytes comes from, for messages (e.g. "sm.smem_per_block of h200.yaml").
  /// Not a workload parameter.
  std::string smem_limit_source;
  /// The SM architecture the kernels are compiled for (a config's sm.arch): whose ptxas register
  /// counts set their occupancy (models/compiled_registers.h). Not a workload parameter: a trace
  /// records the registers it was generated with.
  std::uint32_t arch = 90;
  /// The SM count of the chip the workload is sized for (a config's sm.count): what
  /// `--splits auto` divides the work over. Not a workload parameter.
  std::uint32_t sm_count = 132;

  /// flash1/flash2: tiles over smem_limit_bytes are not rejected; the CTA keeps in shared memory
  /// what fits and spills the rest to global memory (models/spill.h). A workload parameter
  /// ("allow_spill" = 1) only when set, so traces and reports without it are unchanged.
  /// resolve_workload clears it for workloads that cannot spill and when there is no
  /// smem_limit_bytes.
  bool allow_spill = false;

  /// Numerics only: false drops the online-softmax rescale of the running O and ℓ when the row
  /// maximum grows (a deliberately wrong variant, to show that the rescale is needed). Traffic
  /// is the same either way.
  bool online_rescale = true;

  /// Element size in bytes of the dtype.
  std::uint32_t element_size() const { return element_bytes(dtype); }
  /// B·H, the number of (batch, query head) pairs.
  std::uint64_t batch_heads() const { return batch * heads; }
  /// Hkv: kv_heads once resolved, else heads.
  std::uint64_t kv_head_count() const { return kv_heads.value_or(heads); }
  /// Nkv: seq_kv once resolved, else seq.
  std::uint64_t kv_seq() const { return seq_kv.value_or(seq); }
  /// G = H / Hkv, the query heads that share one K/V head.
  std::uint64_t group_size() const { return heads / kv_head_count(); }

  /// The contract's parameter list as (name, value) text pairs: workload, then the parameters
  /// the workload's plugin declares, in its order, each when set. Used in trace headers.
  std::vector<std::pair<std::string, std::string>> named() const;
};

/// The inverse of WorkloadParams::named: parameters from a trace header's (name, value) pairs.
/// Throws UsageError on an unknown name or a malformed value (naming both).
WorkloadParams params_from_named(const std::vector<std::pair<std::string, std::string>>& named);

/// Resolves `params` with its workload's plugin: clears the parameters the workload does not
/// use, checks each given value against its bounds, applies the defaults, runs the plugin's own
/// checks and rejects a launch whose shared memory exceeds `smem_limit_bytes` — each a UsageError
/// naming the parameter and what would fit.
WorkloadParams resolve_workload(const WorkloadParams& params);

/// `--gemm`'s default on a chip, for a workload that has the parameter and leaves it empty:
/// wgmma where `p.arch` (the config's sm.arch) is at least 90 (Hopper: what its libraries run)
/// and the wgmma kernel takes the workload as given (fp16, its tile shapes, two stages in the
/// shared memory: resolve_workload with wgmma succeeds), else mma_sync. Without a config,
/// resolve_workload takes mma_sync, as does a parameter list that does not name gemm (a trace
/// header or a measured row: gemm is listed only when it is wgmma).
void choose_gemm_kernel(WorkloadParams& p);

/// ⌈a / b⌉ for b > 0.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

}  // namespace memwall
