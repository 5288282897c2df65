#pragma once
/// The parameters of a workload (naive, flash1, flash2 attention; gemm) and their resolution:
/// defaults applied, every field checked. The names of the fields are the parameter names of the
/// tiling contract (docs/models.md), used in trace headers, simulator JSON and measured CSV columns.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memwall {

/// Which kernel sequence a workload runs.
enum class WorkloadKind : std::uint8_t {
  naive = 0,   ///< three launches: qk (S = scale·QKᵀ), softmax (P), pv (O = PV)
  flash1 = 1,  ///< FlashAttention Algorithm 1: outer loop over K/V blocks, O, ℓ, m re-read per pass
  flash2 = 2,  ///< FlashAttention-2 forward: one CTA per (head, Q block), inner loop over K/V
  gemm = 3,    ///< C = A·B, M×K by K×N, one CTA per output tile
};

/// Element type of Q, K, V, O, S, P, A, B, C. Statistics (L, ℓ, m) are always fp32.
enum class Dtype : std::uint8_t { fp16 = 0, fp32 = 1 };

/// "naive", "flash1", "flash2", "gemm".
std::string_view to_string(WorkloadKind kind);
/// "fp16", "fp32".
std::string_view to_string(Dtype dtype);
/// Parses a workload name; throws UsageError listing the known names.
WorkloadKind parse_workload_kind(std::string_view name);
/// Parses a dtype name; throws UsageError listing the known names.
Dtype parse_dtype(std::string_view name);
/// Bytes per element: 2 for fp16, 4 for fp32.
std::uint32_t element_bytes(Dtype dtype);

/// Every workload name, in a fixed order (for --help and error messages).
inline constexpr WorkloadKind kAllWorkloads[] = {WorkloadKind::naive, WorkloadKind::flash1,
                                                 WorkloadKind::flash2, WorkloadKind::gemm};

/// A workload's parameters. Optional fields left empty take their defaults in resolve_workload;
/// after it, every optional the workload uses is set and every field the workload ignores is
/// empty. Sizes are in elements unless the name says bytes.
struct WorkloadParams {
  WorkloadKind workload = WorkloadKind::flash2;
  Dtype dtype = Dtype::fp16;

  // Attention shape (naive, flash1, flash2).
  std::uint64_t batch = 1;     ///< B, > 0
  std::uint64_t heads = 1;     ///< H, > 0
  std::uint64_t seq = 1024;    ///< N, tokens per head, > 0
  std::uint64_t head_dim = 64; ///< d, > 0 (naive: ≤ 256, its qk tile holds the whole head dim)

  // Attention tiling.
  std::optional<std::uint32_t> block_q;       ///< rows of Q per tile (naive bm, flash Br)
  std::optional<std::uint32_t> block_kv;      ///< rows of K/V per tile (naive bn, flash Bc)
  std::optional<std::uint32_t> block_k;       ///< naive pv: columns of P per k chunk
  std::optional<std::uint32_t> stages;        ///< flash2: K/V blocks in flight (pipelining depth)
  std::optional<std::uint32_t> softmax_rows;  ///< naive softmax: rows per CTA
  std::optional<std::uint64_t> sram_bytes;    ///< flash1: on-chip memory M in bytes (for defaults)

  // gemm shape and tiling (C[m×n] = A[m×k]·B[k×n]).
  std::uint64_t m = 4096;  ///< rows of A and C, > 0
  std::uint64_t n = 4096;  ///< columns of B and C, > 0
  std::uint64_t k = 4096;  ///< columns of A, rows of B, > 0
  std::optional<std::uint32_t> tile_m;  ///< output tile rows (default 128)
  std::optional<std::uint32_t> tile_n;  ///< output tile columns (default 128)
  std::optional<std::uint32_t> tile_k;  ///< k chunk per loop step (default 32)

  /// Per-CTA shared-memory limit in bytes (a config's smem_per_block); when set, a tiling whose
  /// footprint exceeds it is rejected, unless allow_spill. A workload parameter
  /// ("smem_limit_bytes") only when allow_spill is set.
  std::optional<std::uint64_t> smem_limit_bytes;
  /// Where smem_limit_bytes comes from, for messages (e.g. "sm.smem_per_block of h200.yaml").
  /// Not a workload parameter.
  std::string smem_limit_source;

  /// flash1/flash2: tiles over smem_limit_bytes are not rejected; the CTA keeps in shared memory
  /// what fits and spills the rest to global memory (models/spill.h). A workload parameter
  /// ("allow_spill" = 1) only when set, so traces and reports without it are unchanged.
  /// resolve_workload clears it for naive and gemm and when there is no smem_limit_bytes.
  bool allow_spill = false;

  /// Numerics only: false drops the online-softmax rescale of the running O and ℓ when the row
  /// maximum grows (a deliberately wrong variant, to show that the rescale is needed). Traffic
  /// is the same either way.
  bool online_rescale = true;

  /// Element size in bytes of the dtype.
  std::uint32_t element_size() const { return element_bytes(dtype); }
  /// B·H, the number of (batch, head) pairs.
  std::uint64_t batch_heads() const { return batch * heads; }

  /// The contract's parameter list in a fixed order, as (name, value) text pairs: workload,
  /// dtype, then the shape and the resolved tiling the workload uses. Used in trace headers.
  std::vector<std::pair<std::string, std::string>> named() const;
};

/// The inverse of WorkloadParams::named: parameters from a trace header's (name, value) pairs.
/// Throws UsageError on an unknown name or a malformed value (naming both).
WorkloadParams params_from_named(const std::vector<std::pair<std::string, std::string>>& named);

/// Applies the defaults of `params.workload` (see docs/models.md) and validates everything:
/// a zero shape or tile, a byte count that would overflow 64 bits, a tiling whose shared memory
/// exceeds `smem_limit_bytes`, flash1 without a block size and without `sram_bytes` — each a
/// UsageError naming the parameter and what would fit.
WorkloadParams resolve_workload(const WorkloadParams& params);

/// The default flash1 block sizes from an SRAM of `sram_elements` elements (Algorithm 1):
/// Bc = ⌈M/4d⌉, Br = min(⌈M/4d⌉, d). Returns {Br, Bc}.
std::pair<std::uint64_t, std::uint64_t> flash1_default_blocks(std::uint64_t sram_elements,
                                                              std::uint64_t head_dim);

/// ⌈a / b⌉ for b > 0.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

}  // namespace memwall
