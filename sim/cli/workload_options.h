#pragma once
/// The shape and tiling flags shared by every command that names a workload (`memwall trace`,
/// `verify`, `run`, `sweep`, `io`), so they all spell and default them the same way.

#include <CLI/CLI.hpp>

#include "models/workload_params.h"
#include "sim/hw/config.h"

namespace memwall {

/// Adds --workload, --dtype, --batch, --heads, --seq, --head-dim, --block-q, --block-kv,
/// --block-k, --stages, --softmax-rows, --sram, --allow-spill and (gemm) --m, --n, --k, --tile-m,
/// --tile-n, --tile-k to `app`, writing into `params`. Unset tiling flags stay empty (defaults come from
/// resolve_workload_options). Bad values (an unknown name, a size without a unit) are rejected
/// while parsing.
void add_workload_options(CLI::App& app, WorkloadParams& params);

/// Applies a hardware config when one is given — its sm.smem_per_block is flash1's M when --sram
/// was not given (--sram wins), and the per-CTA shared-memory limit every tiling must fit — then
/// resolve_workload (defaults, validation; UsageError on bad parameters). With allow_spill,
/// --sram (when given) is that limit instead of the config's.
WorkloadParams resolve_workload_options(const WorkloadParams& params,
                                        const HardwareConfig* config = nullptr);

/// The help text's list of workload names, e.g. "naive|flash1|flash2|gemm".
std::string workload_names();

}  // namespace memwall
