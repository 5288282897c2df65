#include "models/wgmma_gemm.h"

#include <string>

#include "models/launch.h"
#include "sim/core/error.h"

namespace memwall {
namespace {

/// The kernel's shared memory besides the stages and the staging buffer: 1 KiB to align the
/// swizzled boxes, 256 bytes for the barriers.
constexpr std::uint64_t kSmemSlack = 1024 + 256;
/// smem_per_block of a Hopper SM (227 KiB), when no limit is given.
constexpr std::uint64_t kDefaultSmemLimit = 227 * 1024;

}  // namespace

std::uint64_t wgmma_smem_bytes(std::uint64_t bm, std::uint64_t bn, std::uint64_t stages,
                               std::uint32_t element_bytes) {
  return kSmemSlack + stages * (bm + bn) * kWgmmaTileK * element_bytes + bm * bn * element_bytes;
}

std::uint32_t wgmma_stages(std::uint64_t bm, std::uint64_t bn, std::uint32_t element_bytes,
                           std::uint64_t smem_limit) {
  const std::uint64_t limit = smem_limit > 0 ? smem_limit : kDefaultSmemLimit;
  const std::uint64_t fixed = wgmma_smem_bytes(bm, bn, 0, element_bytes);
  if (limit < fixed) return 0;
  const std::uint64_t fit = (limit - fixed) / ((bm + bn) * kWgmmaTileK * element_bytes);
  return fit < 2 ? 0 : static_cast<std::uint32_t>(std::min<std::uint64_t>(fit, kWgmmaMaxStages));
}

void check_wgmma_arch(const WorkloadParams& p, const char* what) {
  if (p.arch >= kWgmmaMinArch) return;
  throw UsageError(std::string(what) + " runs on wgmma and TMA, which need sm.arch >= " +
                   std::to_string(kWgmmaMinArch) + " (Hopper); the config's sm.arch is " +
                   std::to_string(p.arch));
}

void check_wgmma_tile(std::uint64_t bm, std::uint64_t bn, const char* bm_name,
                      const char* bn_name) {
  if (bm != 128 && bm != 256) {
    throw UsageError(std::string("--gemm wgmma: ") + bm_name +
                     " must be 128 or 256 (two consumer "
                     "warpgroups of m64 wgmmas), got " +
                     std::to_string(bm));
  }
  if (bn != 64 && bn != 128 && bn != 256) {
    throw UsageError(std::string("--gemm wgmma: ") + bn_name +
                     " must be 64, 128 or 256 (the N "
                     "of an m64nNk16 wgmma), got " +
                     std::to_string(bn));
  }
}

void check_wgmma_runs(const WgmmaGemm& g, const WorkloadParams& p) {
  if (p.dtype != Dtype::fp16)
    throw UsageError("--gemm wgmma: the kernel is fp16 only (--dtype fp16)");
  if (g.stages == 0) {
    throw UsageError("--gemm wgmma: a " + std::to_string(g.bm) + " × " + std::to_string(g.bn) +
                     " tile does not fit two stages in " +
                     (p.smem_limit_source.empty() ? "227 KiB" : p.smem_limit_source) +
                     " of shared memory");
  }
}

KernelInfo WgmmaGemm::launch(const char* name, std::uint32_t sm_count) const {
  return make_launch(name, grid(sm_count), kWgmmaThreads,
                     wgmma_smem_bytes(bm, bn, stages, element_bytes), kWgmmaRegisters);
}

}  // namespace memwall
