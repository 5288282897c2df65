#include "models/workload_params.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "models/spill.h"
#include "models/workload.h"
#include "sim/core/error.h"
#include "sim/core/units.h"

namespace memwall {
namespace {

/// a·b, or UsageError naming `what` when it would not fit in 64 bits.
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw UsageError(what + " is too large: its byte count overflows 64 bits");
  }
  return r;
}

std::uint64_t checked_mul(std::initializer_list<std::uint64_t> factors, const std::string& what) {
  std::uint64_t r = 1;
  for (std::uint64_t f : factors) r = checked_mul(r, f, what);
  return r;
}

void require_positive(std::uint64_t value, const char* name) {
  if (value == 0) throw UsageError(std::string(name) + " must be > 0, got 0");
}

void require_positive(const std::optional<std::uint32_t>& value, const char* name) {
  if (value && *value == 0) throw UsageError(std::string(name) + " must be > 0, got 0");
}

void fill(std::optional<std::uint32_t>& field, std::uint32_t value) {
  if (!field) field = value;
}

std::string join_names() {
  std::string out;
  for (WorkloadKind k : kAllWorkloads) out += (out.empty() ? "" : ", ") + std::string(to_string(k));
  return out;
}

/// How a flash forward kernel's shared memory adds up, e.g. " = (256 + 2·2·256)·128·2".
std::string smem_formula(const WorkloadParams& p, const KernelInfo& k) {
  if (p.workload != WorkloadKind::flash1 && p.workload != WorkloadKind::flash2) return "";
  if (k.smem_bytes_per_cta == 0) return "";
  const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, p.seq);
  const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, p.seq);
  const std::string buffers = p.workload == WorkloadKind::flash2
                                  ? "2·" + std::to_string(*p.stages) + "·"
                                  : std::string("2·");
  return " = (block_q " + std::to_string(br) + " + " + buffers + "block_kv " +
         std::to_string(bc) + ")·head_dim " + std::to_string(p.head_dim) + "·" +
         std::to_string(p.element_size()) + " B";
}

/// What fits a flash forward kernel under `limit`: the largest block_kv at this block_q (and
/// stages), and the largest block_q at this block_kv; then the --allow-spill alternative.
std::string flash_fit_hint(const WorkloadParams& p, std::uint64_t limit) {
  const std::uint64_t row = p.head_dim * p.element_size();
  const std::uint64_t rows = limit / row;  // tile rows of head_dim elements that fit
  const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, p.seq);
  const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, p.seq);
  const std::uint64_t per_kv = 2 * (p.workload == WorkloadKind::flash2 ? *p.stages : 1);
  std::string fits;
  if (rows > br && (rows - br) / per_kv > 0) {
    fits += "block_kv <= " + std::to_string((rows - br) / per_kv) + " fits at block_q " +
            std::to_string(br);
  }
  if (rows > per_kv * bc) {
    fits += (fits.empty() ? "" : ", ") + std::string("block_q <= ") +
            std::to_string(rows - per_kv * bc) + " fits at block_kv " + std::to_string(bc);
  }
  if (fits.empty()) {
    fits = rows >= 1 + per_kv ? "block_q + " + std::to_string(per_kv) + "·block_kv <= " +
                                    std::to_string(rows) + " fits"
                              : "not even one row of each tile fits";
  }
  return "; " + fits + " (or pass --allow-spill to spill what does not fit to global memory)";
}

/// Rejects a launch whose shared memory exceeds the limit, naming the parameters that set it.
/// A flash workload with allow_spill is not rejected: it spills (models/spill.h).
void check_smem(const WorkloadParams& p) {
  if (!p.smem_limit_bytes) return;
  if (spill_plan(p).active) return;
  const std::uint64_t limit = *p.smem_limit_bytes;
  for (const KernelInfo& k : kernel_launches(p)) {
    if (k.smem_bytes_per_cta <= limit) continue;
    std::string knobs;
    switch (p.workload) {
      case WorkloadKind::naive:
        knobs = k.name == "softmax" ? "softmax_rows (" + std::to_string(*p.softmax_rows) +
                                          " rows of " + std::to_string(p.seq) + " elements)"
                                    : "block_q/block_kv/block_k";
        break;
      case WorkloadKind::flash1: knobs = "block_q/block_kv (or sram_bytes)"; break;
      case WorkloadKind::flash2: knobs = "block_q/block_kv/stages"; break;
      case WorkloadKind::gemm: knobs = "tile_m/tile_n/tile_k"; break;
    }
    std::string hint;
    if (p.workload == WorkloadKind::flash1 || p.workload == WorkloadKind::flash2) {
      hint = flash_fit_hint(p, limit);
    } else if (p.workload == WorkloadKind::naive && k.name == "softmax") {
      const std::uint64_t row = p.seq * p.element_size();
      hint = row <= limit ? "; softmax_rows <= " + std::to_string(limit / row) + " fits"
                          : "; not even one row of S fits";
    }
    const std::string source = p.smem_limit_source.empty() ? "" : ", " + p.smem_limit_source;
    throw UsageError("kernel " + k.name + " needs " + format_bytes(Bytes{k.smem_bytes_per_cta}) +
                     " (" + std::to_string(k.smem_bytes_per_cta) + " B" + smem_formula(p, k) +
                     ") of shared memory per CTA, more than the limit of " +
                     format_bytes(Bytes{limit}) + " (" + std::to_string(limit) + " B" + source +
                     "); reduce " + knobs + hint);
  }
}

}  // namespace

std::string_view to_string(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::naive: return "naive";
    case WorkloadKind::flash1: return "flash1";
    case WorkloadKind::flash2: return "flash2";
    case WorkloadKind::gemm: return "gemm";
  }
  return "?";
}

std::string_view to_string(Dtype dtype) { return dtype == Dtype::fp16 ? "fp16" : "fp32"; }

WorkloadKind parse_workload_kind(std::string_view name) {
  for (WorkloadKind k : kAllWorkloads) {
    if (to_string(k) == name) return k;
  }
  throw UsageError("unknown workload \"" + std::string(name) + "\" (known: " + join_names() + ")");
}

Dtype parse_dtype(std::string_view name) {
  if (name == "fp16") return Dtype::fp16;
  if (name == "fp32") return Dtype::fp32;
  throw UsageError("unknown dtype \"" + std::string(name) + "\" (known: fp16, fp32)");
}

std::uint32_t element_bytes(Dtype dtype) { return dtype == Dtype::fp16 ? 2 : 4; }

std::pair<std::uint64_t, std::uint64_t> flash1_default_blocks(std::uint64_t sram_elements,
                                                              std::uint64_t head_dim) {
  const std::uint64_t bc = ceil_div(sram_elements, 4 * head_dim);
  return {std::min(bc, head_dim), bc};
}

std::vector<std::pair<std::string, std::string>> WorkloadParams::named() const {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("workload", std::string(to_string(workload)));
  out.emplace_back("dtype", std::string(to_string(dtype)));
  auto add = [&out](const char* name, const auto& value) {
    if constexpr (requires { value.has_value(); }) {
      if (value) out.emplace_back(name, std::to_string(*value));
    } else {
      out.emplace_back(name, std::to_string(value));
    }
  };
  if (workload == WorkloadKind::gemm) {
    add("m", m);
    add("n", n);
    add("k", k);
    add("tile_m", tile_m);
    add("tile_n", tile_n);
    add("tile_k", tile_k);
    return out;
  }
  add("batch", batch);
  add("heads", heads);
  add("seq", seq);
  add("head_dim", head_dim);
  add("block_q", block_q);
  add("block_kv", block_kv);
  add("block_k", block_k);
  add("stages", stages);
  add("softmax_rows", softmax_rows);
  add("sram_bytes", sram_bytes);
  if (allow_spill) {
    out.emplace_back("allow_spill", "1");
    add("smem_limit_bytes", smem_limit_bytes);
  }
  return out;
}

WorkloadParams params_from_named(const std::vector<std::pair<std::string, std::string>>& named) {
  WorkloadParams p;
  for (const auto& [key, value] : named) {
    std::uint64_t v = 0;
    const bool numeric = key != "workload" && key != "dtype";
    if (numeric) {
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || end != value.data() + value.size()) {
        throw UsageError("parameter " + key + ": \"" + value + "\" is not an unsigned integer");
      }
    }
    const std::string& name = key;  // clang 14 cannot capture a structured binding (C++20 allows it)
    const auto u32 = [&name, v]() {
      if (v > std::numeric_limits<std::uint32_t>::max()) {
        throw UsageError("parameter " + name + ": " + std::to_string(v) + " exceeds 2^32 - 1");
      }
      return static_cast<std::uint32_t>(v);
    };
    if (key == "workload") p.workload = parse_workload_kind(value);
    else if (key == "dtype") p.dtype = parse_dtype(value);
    else if (key == "batch") p.batch = v;
    else if (key == "heads") p.heads = v;
    else if (key == "seq") p.seq = v;
    else if (key == "head_dim") p.head_dim = v;
    else if (key == "block_q") p.block_q = u32();
    else if (key == "block_kv") p.block_kv = u32();
    else if (key == "block_k") p.block_k = u32();
    else if (key == "stages") p.stages = u32();
    else if (key == "softmax_rows") p.softmax_rows = u32();
    else if (key == "sram_bytes") p.sram_bytes = v;
    else if (key == "m") p.m = v;
    else if (key == "n") p.n = v;
    else if (key == "k") p.k = v;
    else if (key == "tile_m") p.tile_m = u32();
    else if (key == "tile_n") p.tile_n = u32();
    else if (key == "tile_k") p.tile_k = u32();
    else if (key == "allow_spill") p.allow_spill = v != 0;
    else if (key == "smem_limit_bytes") p.smem_limit_bytes = v;
    else throw UsageError("unknown workload parameter \"" + key + "\"");
  }
  return p;
}

WorkloadParams resolve_workload(const WorkloadParams& params) {
  WorkloadParams p = params;
  const std::uint64_t s = p.element_size();
  if (p.smem_limit_bytes && *p.smem_limit_bytes == 0) {
    throw UsageError("the shared-memory limit per CTA must be > 0, got 0");
  }

  if (p.workload == WorkloadKind::gemm) {
    require_positive(p.m, "m");
    require_positive(p.n, "n");
    require_positive(p.k, "k");
    require_positive(p.tile_m, "tile_m");
    require_positive(p.tile_n, "tile_n");
    require_positive(p.tile_k, "tile_k");
    fill(p.tile_m, 128);
    fill(p.tile_n, 128);
    fill(p.tile_k, 32);
    p.block_q.reset();
    p.block_kv.reset();
    p.block_k.reset();
    p.stages.reset();
    p.softmax_rows.reset();
    p.sram_bytes.reset();
    p.allow_spill = false;
    // Every tensor and every traffic term must fit in 64 bits (and a row in a 32-bit box field).
    const std::uint64_t a = checked_mul({p.m, p.k, s}, "A (m·k)");
    const std::uint64_t b = checked_mul({p.k, p.n, s}, "B (k·n)");
    checked_mul({p.m, p.n, s}, "C (m·n)");
    checked_mul(a, ceil_div(p.n, *p.tile_n), "the A traffic m·k·⌈n/tile_n⌉");
    checked_mul(b, ceil_div(p.m, *p.tile_m), "the B traffic k·n·⌈m/tile_m⌉");
    if (p.k * s > std::numeric_limits<std::uint32_t>::max() ||
        p.n * s > std::numeric_limits<std::uint32_t>::max()) {
      throw UsageError("k and n must each be below 2^32 bytes per row");
    }
    check_smem(p);
    return p;
  }

  require_positive(p.batch, "batch");
  require_positive(p.heads, "heads");
  require_positive(p.seq, "seq");
  require_positive(p.head_dim, "head_dim");
  require_positive(p.block_q, "block_q");
  require_positive(p.block_kv, "block_kv");
  require_positive(p.block_k, "block_k");
  require_positive(p.stages, "stages");
  require_positive(p.softmax_rows, "softmax_rows");
  if (p.sram_bytes && *p.sram_bytes == 0) throw UsageError("sram_bytes must be > 0, got 0");
  p.tile_m.reset();
  p.tile_n.reset();
  p.tile_k.reset();

  const std::uint64_t bh = checked_mul(p.batch, p.heads, "batch·heads");
  const std::uint64_t qkv = checked_mul({bh, p.seq, p.head_dim, s}, "Q (batch·heads·seq·head_dim)");
  if (p.seq * s > std::numeric_limits<std::uint32_t>::max() / 2 ||
      p.head_dim * s > std::numeric_limits<std::uint32_t>::max() / 2) {
    throw UsageError("seq and head_dim must each be below 2^31 bytes per row");
  }

  switch (p.workload) {
    case WorkloadKind::naive: {
      if (p.head_dim > 256) {
        throw UsageError("naive attention holds the whole head dim in one qk tile: head_dim must be "
                         "<= 256, got " + std::to_string(p.head_dim));
      }
      fill(p.block_q, 128);
      fill(p.block_kv, 128);
      fill(p.block_k, 64);
      fill(p.softmax_rows, 4);
      if (*p.softmax_rows > 32) {
        throw UsageError("softmax_rows must be <= 32 (one warp per row, at most 1024 threads per "
                         "CTA), got " + std::to_string(*p.softmax_rows));
      }
      p.stages.reset();
      p.sram_bytes.reset();
      p.allow_spill = false;
      const std::uint64_t snn = checked_mul({bh, p.seq, p.seq, s}, "S (batch·heads·seq²)");
      checked_mul(qkv, ceil_div(p.seq, *p.block_kv), "the K traffic of qk");
      checked_mul(qkv, ceil_div(p.seq, *p.block_q), "the Q traffic of qk");
      checked_mul(snn, 4, "the S and P traffic");
      break;
    }
    case WorkloadKind::flash1: {
      if (!p.block_q || !p.block_kv) {
        if (!p.sram_bytes) {
          throw UsageError("flash1's default block sizes need the on-chip memory size M: give "
                           "sram_bytes (--sram SIZE or --config FILE) or both block_q and block_kv");
        }
        const std::uint64_t m_elems = *p.sram_bytes / s;
        if (m_elems < 4 * p.head_dim) {
          throw UsageError("sram_bytes " + std::to_string(*p.sram_bytes) + " holds " +
                           std::to_string(m_elems) + " elements, less than 4·head_dim = " +
                           std::to_string(4 * p.head_dim) + " (Algorithm 1 needs M >= 4d)");
        }
        const auto [br, bc] = flash1_default_blocks(m_elems, p.head_dim);
        if (bc > std::numeric_limits<std::uint32_t>::max()) {
          throw UsageError("sram_bytes is too large for a block size");
        }
        if (!p.block_q) p.block_q = static_cast<std::uint32_t>(br);
        if (!p.block_kv) p.block_kv = static_cast<std::uint32_t>(bc);
      }
      p.block_k.reset();
      p.stages.reset();
      p.softmax_rows.reset();
      const std::uint64_t passes = ceil_div(p.seq, *p.block_kv);
      checked_mul(qkv, checked_mul(passes, 2, "flash1 passes"), "the Q and O traffic of flash1");
      break;
    }
    case WorkloadKind::flash2: {
      fill(p.block_q, 128);
      fill(p.block_kv, p.head_dim <= 64 ? 128 : 64);
      fill(p.stages, 2);
      if (*p.stages > 64) {
        throw UsageError("stages must be <= 64 (K/V blocks in flight), got " +
                         std::to_string(*p.stages));
      }
      p.block_k.reset();
      p.softmax_rows.reset();
      p.sram_bytes.reset();
      checked_mul(qkv, checked_mul(ceil_div(p.seq, *p.block_q), 2, "flash2 passes"),
                  "the K and V traffic of flash2");
      break;
    }
    case WorkloadKind::gemm: break;  // handled above
  }
  if (!p.smem_limit_bytes) p.allow_spill = false;  // no limit: nothing to spill against
  check_smem(p);
  if (const SpillPlan plan = spill_plan(p); plan.active) {
    const std::uint64_t slice = checked_mul(plan.scratch_elements, s, "the spill scratch per CTA");
    checked_mul(plan.scratch_rows, slice, "the spill scratch");
    if (slice > std::numeric_limits<std::uint32_t>::max()) {
      throw UsageError("the spill scratch per CTA (" + std::to_string(slice) +
                       " B) must be below 2^32 bytes: reduce block_q/block_kv");
    }
  }
  return p;
}

}  // namespace memwall
