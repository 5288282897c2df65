#include "studies/workload_config.h"

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "models/model_source.h"
#include "models/workload_registry.h"
#include "traces/interruptible_source.h"

namespace memwall {
namespace {

/// `path` relative to the working directory when it lies below it; `fallback` when empty.
std::string display_path(const std::string& path, const std::string& fallback) {
  if (path.empty()) return fallback;
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string() + "/";
  if (!ec && path.size() > cwd.size() && path.compare(0, cwd.size(), cwd) == 0) {
    return path.substr(cwd.size());
  }
  return path;
}

}  // namespace

WorkloadParams resolve_workload_options(const WorkloadParams& params,
                                        const HardwareConfig* config) {
  WorkloadParams p = params;
  if (config != nullptr) {
    // The config's shared memory per block is the on-chip memory M of a workload that sizes its
    // blocks from one (flash1's sram_bytes), unless --sram gave it.
    if (!p.sram_bytes && find_param(workload_plugin(p.workload), "sram_bytes") != nullptr) {
      p.sram_bytes = config->sm.smem_per_block.count;
    }
    p.smem_limit_bytes = config->sm.smem_per_block.count;
    p.smem_limit_source = "sm.smem_per_block of " + display_path(config->source_file, config->name);
    p.arch = config->sm.arch;
    p.sm_count = config->sm.count;
  }
  // With --allow-spill, --sram (when given) is the shared memory a spilling CTA may keep.
  if (p.allow_spill && params.sram_bytes) {
    p.smem_limit_bytes = *params.sram_bytes;
    p.smem_limit_source = "--sram";
  }
  if (config != nullptr) choose_gemm_kernel(p);  // the chip's default for --gemm
  return resolve_workload(p);
}

RunResult simulate_workload(const HardwareConfig& config, const WorkloadParams& params,
                            const SimOptions& options) {
  const std::unique_ptr<TraceSource> source =
      make_model_source(resolve_workload_options(params, &config));
  InterruptibleSource polled(*source);
  return simulate(config, polled, options);
}

}  // namespace memwall
