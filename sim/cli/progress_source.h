#pragma once
/// The progress line of the commands that pull a workload's CTAs (run, replay, trace).

#include <cstdint>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "sim/core/progress.h"
#include "traces/trace_source.h"

namespace memwall {

/// A TraceSource that draws a progress line of the CTAs it hands out (per kernel: "flash2 kernel
/// 2 (softmax) [###   ] 1234/4096 CTAs ..."), on a terminal only, at most ten times a second.
class ProgressSource final : public WrappingSource {
 public:
  explicit ProgressSource(TraceSource& inner)
      : WrappingSource(inner), m_line(stderr_is_terminal(), 0, 0, "CTAs", true) {}
  bool next_kernel(KernelInfo& kernel) override {
    if (!WrappingSource::next_kernel(kernel)) {
      m_line.finish();
      return false;
    }
    ++m_kernels;
    m_line.restart(
        workload().name + " kernel " + std::to_string(m_kernels) + " (" + kernel.name + ")",
        kernel.ctas);
    spdlog::info("kernel {} ({}): {} CTAs of {} threads, {} B of shared memory each", m_kernels,
                 kernel.name, kernel.ctas, kernel.threads_per_cta, kernel.smem_bytes_per_cta);
    return true;
  }
  bool next_cta(std::vector<Op>& ops) override {
    const bool more = WrappingSource::next_cta(ops);
    if (more) m_line.step();
    return more;
  }

 private:
  ProgressLine m_line;
  std::uint64_t m_kernels = 0;
};

}  // namespace memwall
