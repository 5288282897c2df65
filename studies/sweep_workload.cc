#include "studies/sweep_workload.h"

#include <charconv>
#include <limits>

#include "sim/core/error.h"
#include "sim/core/units.h"

namespace memwall {
namespace {

constexpr WorkloadAxis kAxes[] = {
    {"--workload", "workload", "Workload: naive, flash1, flash2 or gemm"},
    {"--dtype", "dtype", "Element type list: fp16, fp32"},
    {"--batch", "batch", "Batch size B (list or range)"},
    {"--heads", "heads", "Heads H (list or range)"},
    {"--seq", "seq", "Sequence length N (list or range, e.g. 512..16384x2)"},
    {"--head-dim", "head_dim", "Head dimension d (list or range)"},
    {"--block-q", "block_q", "Rows of Q per tile (naive bm, flash Br) (list or range)"},
    {"--block-kv", "block_kv", "Rows of K/V per tile (naive bn, flash Bc) (list or range)"},
    {"--block-k", "block_k", "naive pv: columns of P per k chunk (list or range)"},
    {"--stages", "stages", "flash2: K/V blocks in flight (list or range)"},
    {"--softmax-rows", "softmax_rows", "naive softmax: rows per CTA (list or range)"},
    {"--sram", "sram_bytes", "On-chip memory M, e.g. \"64 KiB\" or bytes (list or range of bytes)"},
    {"--m", "m", "gemm: rows of A and C (list or range)"},
    {"--n", "n", "gemm: columns of B and C (list or range)"},
    {"--k", "k", "gemm: columns of A, rows of B (list or range)"},
    {"--tile-m", "tile_m", "gemm: output tile rows (list or range)"},
    {"--tile-n", "tile_n", "gemm: output tile columns (list or range)"},
    {"--tile-k", "tile_k", "gemm: k chunk per loop step (list or range)"},
};

std::uint64_t parse_count(std::string_view name, std::string_view value) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
    throw UsageError(std::string(name) + ": expected a whole number, got \"" + std::string(value) +
                     "\"");
  }
  return v;
}

std::uint32_t parse_u32(std::string_view name, std::string_view value) {
  const std::uint64_t v = parse_count(name, value);
  if (v > std::numeric_limits<std::uint32_t>::max()) {
    throw UsageError(std::string(name) + ": " + std::string(value) + " is too large");
  }
  return static_cast<std::uint32_t>(v);
}

}  // namespace

std::span<const WorkloadAxis> workload_axes() { return kAxes; }

bool is_config_axis(std::string_view name) { return name.find('.') != std::string_view::npos; }

void set_workload_param(WorkloadParams& p, std::string_view name, std::string_view value) {
  if (name == "workload") p.workload = parse_workload_kind(value);
  else if (name == "dtype") p.dtype = parse_dtype(value);
  else if (name == "batch") p.batch = parse_count(name, value);
  else if (name == "heads") p.heads = parse_count(name, value);
  else if (name == "seq") p.seq = parse_count(name, value);
  else if (name == "head_dim") p.head_dim = parse_count(name, value);
  else if (name == "block_q") p.block_q = parse_u32(name, value);
  else if (name == "block_kv") p.block_kv = parse_u32(name, value);
  else if (name == "block_k") p.block_k = parse_u32(name, value);
  else if (name == "stages") p.stages = parse_u32(name, value);
  else if (name == "softmax_rows") p.softmax_rows = parse_u32(name, value);
  else if (name == "m") p.m = parse_count(name, value);
  else if (name == "n") p.n = parse_count(name, value);
  else if (name == "k") p.k = parse_count(name, value);
  else if (name == "tile_m") p.tile_m = parse_u32(name, value);
  else if (name == "tile_n") p.tile_n = parse_u32(name, value);
  else if (name == "tile_k") p.tile_k = parse_u32(name, value);
  else if (name == "sram_bytes") {
    const bool digits_only = !value.empty() && value.find_first_not_of("0123456789") == std::string_view::npos;
    try {
      p.sram_bytes = digits_only ? parse_count(name, value) : parse_bytes(value).count;
    } catch (const UnitError& e) {
      throw UsageError(std::string("sram_bytes: ") + e.what());
    }
  } else {
    throw UsageError("unknown workload parameter \"" + std::string(name) + "\"");
  }
}

WorkloadParams workload_params_of(const SweepPoint& point, const WorkloadParams& base) {
  WorkloadParams p = base;
  for (const auto& [name, value] : point.params) {
    if (!is_config_axis(name)) set_workload_param(p, name, value);
  }
  return p;
}

std::vector<std::string> config_overrides_of(const SweepPoint& point) {
  std::vector<std::string> out;
  for (const auto& [name, value] : point.params) {
    if (is_config_axis(name)) out.push_back(name + "=" + value);
  }
  return out;
}

}  // namespace memwall
