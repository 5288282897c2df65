#pragma once
/// A workload on a hardware config: resolved against it (the config's per-block shared memory is
/// the on-chip memory M of a workload that sizes its blocks from one, and the per-CTA limit every
/// tiling must fit) and simulated on it. Shared by every front end that simulates a workload on a
/// config (the CLI's run, trace, sweep and io commands; the Python module).

#include "models/workload_params.h"
#include "sim/engine/run_result.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config.h"

namespace memwall {

/// Applies a hardware config when one is given — its sm.smem_per_block is the on-chip memory M
/// of a workload with the parameter sram_bytes (flash1) when --sram was not given (--sram wins),
/// and the per-CTA shared-memory limit every tiling must fit — then resolve_workload (defaults,
/// validation; UsageError on bad parameters). With allow_spill, --sram (when given) is that limit
/// instead of the config's.
WorkloadParams resolve_workload_options(const WorkloadParams& params,
                                        const HardwareConfig* config = nullptr);

/// Resolves `params` against `config` (resolve_workload_options) and simulates the workload,
/// generated on the fly, on it. Throws UsageError on bad parameters, Interrupted on SIGINT.
RunResult simulate_workload(const HardwareConfig& config, const WorkloadParams& params,
                            const SimOptions& options = {});

}  // namespace memwall
