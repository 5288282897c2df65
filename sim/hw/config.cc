#include "sim/hw/config.h"

#include "sim/core/error.h"

namespace memwall {

const char* to_string(PipeBooking pipe) {
  switch (pipe) {
    case PipeBooking::kTensor: return "tensor";
    case PipeBooking::kTurns: return "turns";
    case PipeBooking::kOwn: break;
  }
  return "own";
}

PipeBooking parse_pipe_booking(const std::string& text) {
  if (text == "own") return PipeBooking::kOwn;
  if (text == "tensor") return PipeBooking::kTensor;
  if (text == "turns") return PipeBooking::kTurns;
  throw UnitError("\"" + text + "\" is none of `own`, `tensor` and `turns`");
}

const char* to_string(FarReads reads) { return reads == FarReads::kCopy ? "copy" : "home"; }

FarReads parse_far_reads(const std::string& text) {
  if (text == "home") return FarReads::kHome;
  if (text == "copy") return FarReads::kCopy;
  throw UnitError("\"" + text + "\" is neither `home` nor `copy`");
}

const char* to_string(TensorClockScope scope) {
  return scope == TensorClockScope::kSm ? "sm" : "pipe";
}

TensorClockScope parse_tensor_clock_scope(const std::string& text) {
  if (text == "pipe") return TensorClockScope::kPipe;
  if (text == "sm") return TensorClockScope::kSm;
  throw UnitError("\"" + text + "\" is neither `pipe` nor `sm`");
}

DerivedConfig derive(const HardwareConfig& c) {
  DerivedConfig d{};
  d.total_smem = Bytes{c.sm.smem_per_sm.count * c.sm.count};
  d.l2_sets_per_slice =
      c.l2.size.count / (std::uint64_t{c.l2.slices} * c.l2.ways * c.l2.line_size.count);
  d.l2_sets = d.l2_sets_per_slice * c.l2.slices;
  const auto usable = static_cast<std::uint64_t>(static_cast<double>(d.l2_sets_per_slice) *
                                                 c.efficiency.l2_capacity);
  d.l2_usable_sets_per_slice = usable > 0 ? usable : 1;
  d.l2_usable = Bytes{d.l2_usable_sets_per_slice * c.l2.slices * c.l2.ways * c.l2.line_size.count};
  const double sms_hz = c.sm.count * c.sm.clock.hertz;
  d.peak_tensor_flops = c.sm.tensor_flops_per_cycle * sms_hz;
  d.peak_fp32_flops = c.sm.fp32_flops_per_cycle * sms_hz;
  d.peak_sfu_ops = c.sm.sfu_ops_per_cycle * sms_hz;
  d.hbm_bandwidth = c.hbm.bandwidth;
  d.l2_bandwidth = c.l2.bandwidth;
  d.xbar_bandwidth = Bandwidth{c.xbar.port_bandwidth.bytes_per_second * c.sm.count};
  d.smem_bandwidth = Bandwidth{c.sm.smem_bandwidth.bytes_per_second * c.sm.count};
  d.ridge_point_tensor = d.peak_tensor_flops / c.hbm.bandwidth.bytes_per_second;
  d.ridge_point_fp32 = d.peak_fp32_flops / c.hbm.bandwidth.bytes_per_second;
  return d;
}

}  // namespace memwall
