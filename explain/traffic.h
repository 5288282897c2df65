#pragma once
/// The traffic calculator: HBM bytes of naive, FlashAttention-1, FlashAttention-2 and the
/// Hopper FlashAttention-3-style forward at one attention shape, straight from the closed forms
/// of models/closed_forms.h (no simulation), split by tensor, with the matmul FLOPs and the
/// ratios between the variants.

#include <cstdint>
#include <string>
#include <vector>

#include "models/closed_forms.h"
#include "models/workload_params.h"
#include "sim/hw/config.h"

namespace memwall::explain {

/// One variant's resolved parameters and traffic.
struct TrafficVariant {
  WorkloadKind kind = WorkloadKind::naive;
  WorkloadParams params;  ///< resolved (defaults applied), as the closed form saw them
  Traffic traffic;  ///< closed_form_traffic(params)
  /// Bytes read plus bytes written.
  std::uint64_t total_bytes() const { return traffic.read_bytes + traffic.write_bytes; }
};

/// The calculator's answer.
struct TrafficTable {
  WorkloadParams shape;  ///< the shape and tiling asked for (unresolved)
  /// naive, flash1 (when it could be sized), flash2, flash3 (when its kernel takes the shape)
  std::vector<TrafficVariant> variants;
  std::string flash1_missing;  ///< why flash1 is absent, empty when present
  std::string flash3_missing;  ///< why flash3 is absent (its kernel's limits), empty when present
  /// 4·B·H·pairs·d: QKᵀ and PV over the (query, key) pairs the mask leaves visible (Nq·Nkv
  /// without it), the work every variant must do at least.
  double matmul_flops = 0;

  /// The variant of `kind`, or nullptr.
  const TrafficVariant* find(WorkloadKind kind) const;
};

/// Resolves `shape` (its workload field is ignored) as naive, flash1, flash2 and flash3 and
/// evaluates their closed forms. block_q/block_kv and splits, when set, apply to the first three
/// (flash3's 128 x 128 tiles are its kernel's, and it has no split-KV); flash1 needs sram_bytes
/// or both blocks, otherwise it is left out and `flash1_missing` says why; flash3 is left out,
/// `flash3_missing` saying why, where its kernel does not run (sm.arch < 90, fp32, head_dim not
/// 64 or 128). Throws UsageError on
/// a shape the workloads reject (resolve_workload's message). With a `config`, its
/// sm.smem_per_block is the on-chip memory M (sram_bytes) and the per-CTA shared-memory limit.
TrafficTable compute_traffic(const WorkloadParams& shape, const HardwareConfig* config = nullptr);

/// A readable table: per variant and tensor, bytes read and written; totals, FLOPs, FLOP/byte,
/// naive's score-matrix round trip per head, and the ratios between the variants.
std::string format_traffic(const TrafficTable& table);

/// The same as JSON (stable keys, bytes and FLOPs as numbers, ratios as doubles).
std::string traffic_json(const TrafficTable& table);

}  // namespace memwall::explain
