#pragma once
/// The parameters every attention workload (naive, flash1, flash2) shares — the shape B, H, N, d —
/// and the checks on it that do not depend on the tiling.

#include <cstdint>

#include "models/param_spec.h"
#include "models/workload_params.h"

namespace memwall {

inline constexpr ParamSpec kBatchParam{
    .name = "batch",
    .flag = "--batch",
    .type = ParamType::kCount,
    .unit = "sequences",
    .help = "Batch size B",
    .min = 1,
    .field = field_of<&WorkloadParams::batch>(),
};
inline constexpr ParamSpec kHeadsParam{
    .name = "heads",
    .flag = "--heads",
    .type = ParamType::kCount,
    .unit = "heads",
    .help = "Heads H",
    .min = 1,
    .field = field_of<&WorkloadParams::heads>(),
};
inline constexpr ParamSpec kSeqParam{
    .name = "seq",
    .flag = "--seq",
    .type = ParamType::kCount,
    .unit = "tokens",
    .help = "Sequence length N (tokens per head)",
    .min = 1,
    .field = field_of<&WorkloadParams::seq>(),
};
inline constexpr ParamSpec kHeadDimParam{
    .name = "head_dim",
    .flag = "--head-dim",
    .type = ParamType::kCount,
    .unit = "elements",
    .help = "Head dimension d",
    .min = 1,
    .field = field_of<&WorkloadParams::head_dim>(),
};

/// Checks what the attention shape alone must satisfy — B·H·N·d·s and every row (N·s, d·s bytes)
/// representable — and returns the bytes of one [B, H, N, d] tensor (Q). UsageError naming the
/// parameters otherwise.
std::uint64_t check_attention_shape(const WorkloadParams& p);

}  // namespace memwall
