// simulate_io (declared in io_traffic.h) lives apart from closed_form_bytes because
// models/closed_forms.h and sim/engine/run_result.h each declare a memwall::TensorTraffic.
#include <memory>

#include "models/model_source.h"
#include "sim/engine/simulator.h"
#include "studies/io_traffic.h"
#include "traces/interruptible_source.h"

namespace memwall {

IoSimulated simulate_io(const HardwareConfig& config, const WorkloadParams& params, bool flush_l2) {
  const std::unique_ptr<TraceSource> source = make_model_source(params);
  SimOptions options;
  options.flush_l2_between_kernels = flush_l2;
  InterruptibleSource polled(*source);
  const RunResult r = simulate(config, polled, options);
  IoSimulated out;
  out.l2 = {r.traffic.l2_read_bytes, r.traffic.l2_write_bytes};
  out.dram = {r.traffic.dram_read_bytes, r.traffic.dram_write_bytes};
  out.dram_dirty_at_end = r.dram_dirty_bytes_at_end;
  out.time_s = static_cast<double>(r.time) / static_cast<double>(kTicksPerSecond);
  return out;
}

}  // namespace memwall
