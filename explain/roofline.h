#pragma once
/// The roofline of a chip: attainable throughput min(peak, I · bandwidth) at an arithmetic
/// intensity I (FLOP per HBM byte), the ridge points where compute meets bandwidth, and where
/// the kernels of a simulator report land under that roof — with each kernel's time bounds per
/// pipe (tensor, fp32, SFU) and HBM, since attention's exponentials can bind before its
/// matrix products do (the SFU's peak is a few hundredths of the tensor cores').

#include <cstdint>
#include <string>
#include <vector>

#include "sim/hw/config.h"

namespace memwall::explain {

/// The figures of a chip the roofline needs (from a config's derive()).
struct RooflineChip {
  std::string name;
  double peak_tensor_flops = 0;  ///< FLOP/s, dense tensor-core peak, > 0
  double peak_fp32_flops = 0;  ///< FLOP/s, fp32 peak, > 0
  double peak_sfu_ops = 0;  ///< op/s, special-function units' peak (exponentials), > 0
  double hbm_bandwidth = 0;  ///< bytes/s, > 0
  double ridge_tensor = 0;  ///< FLOP/byte, peak_tensor_flops / hbm_bandwidth
  double ridge_fp32 = 0;  ///< FLOP/byte, peak_fp32_flops / hbm_bandwidth
};

/// The roofline figures of a validated config: its name, peaks, HBM bandwidth and ridge points
/// (from derive()).
RooflineChip roofline_chip(const HardwareConfig& config);

/// min(peak, intensity · bandwidth), in FLOP/s; intensity in FLOP/byte, >= 0.
double attainable_flops(double peak_flops, double bandwidth, double intensity);

/// The roofs at one requested intensity.
struct RooflinePoint {
  double intensity = 0;  ///< FLOP/byte
  double attainable_tensor = 0;  ///< FLOP/s under the tensor roof
  double attainable_fp32 = 0;  ///< FLOP/s under the fp32 roof
};

/// A kernel (or a whole run) of a report, placed on the roofline.
struct KernelPoint {
  std::string name;  ///< "RUN/KERNEL" or "RUN (whole run)"
  std::uint64_t flops = 0;  ///< from the report
  std::uint64_t dram_bytes = 0;  ///< dram_read_bytes + dram_write_bytes
  double time_s = 0;  ///< from the report
  double intensity = 0;  ///< flops / dram_bytes (infinite when dram_bytes = 0)
  double achieved_flops = 0;  ///< flops / time_s (0 when time_s = 0)
  double roof_flops = 0;  ///< attainable under the tensor roof at `intensity`
  double fraction_of_roof = 0;  ///< achieved_flops / roof_flops
  bool plotted = false;  ///< has FLOPs, DRAM bytes and time, so it has a place on the chart

  /// The report's `flops` by pipe (`tensor_flops`, `fp32_flops`, `sfu_ops`), when it has them
  /// (reports of memwall before they were counted do not: `has_pipes` false).
  bool has_pipes = false;
  std::uint64_t tensor_flops = 0;
  std::uint64_t fp32_flops = 0;
  std::uint64_t sfu_ops = 0;
  /// The time each resource alone needs at the chip's peak, seconds: DRAM bytes / HBM bandwidth,
  /// tensor FLOPs / tensor peak, fp32 FLOPs / fp32 peak, SFU ops / SFU peak (has_pipes only).
  double hbm_s = 0, tensor_s = 0, fp32_s = 0, sfu_s = 0;
  double bound_s = 0;  ///< the largest of them: no schedule of the kernel runs faster
  std::string bound_by;  ///< "HBM", "tensor", "fp32" or "SFU": which one that is
};

/// Reads the simulator's `--json` report `text` (one run object, or an array of runs), taking
/// each run's top-level figures and each `kernels[]` entry's name, flops, dram_read_bytes,
/// dram_write_bytes and time_s, and tensor_flops, fp32_flops and sfu_ops where all three are
/// there (then the kernel's time bounds are set). Throws UsageError "WHAT: byte N: KEY: REASON"
/// on malformed JSON or a missing or mistyped key.
std::vector<KernelPoint> read_report_kernels(const std::string& text, const std::string& what,
                                             const RooflineChip& chip);

/// Everything the roofline command shows.
struct Roofline {
  RooflineChip chip;
  std::vector<RooflinePoint> points;  ///< one per requested intensity, in the order given
  std::vector<KernelPoint> kernels;  ///< from the report, in its order
};

/// Builds the roofline. Throws UsageError on a chip with a non-positive peak or bandwidth, or a
/// negative or non-finite intensity.
Roofline make_roofline(const RooflineChip& chip, const std::vector<double>& intensities,
                       std::vector<KernelPoint> kernels = {});

/// The roofline as text: the chip's peaks and ridge points, the attainable table, the kernels,
/// their time bounds (each pipe and the HBM at its peak, the largest binding), and a log-log
/// chart `width` × `height` characters (roofs drawn, kernels marked A, B, …).
std::string format_roofline(const Roofline& roofline, int width = 60, int height = 16);

/// The roofline as JSON for a plot script: chip, ridge points, points, kernels, and the roof
/// sampled at every decade of intensity from 1e-2 to 1e5 FLOP/byte.
std::string roofline_json(const Roofline& roofline);

}  // namespace memwall::explain
