#include "explain/traffic.h"

#include <cstdio>
#include <string>

#include "models/attention_params.h"
#include "models/flash3.h"
#include "models/workload_registry.h"
#include "sim/core/error.h"
#include "sim/core/json_writer.h"
#include "sim/core/units.h"

namespace memwall::explain {
namespace {

constexpr WorkloadKind kVariants[] = {WorkloadKind::naive, WorkloadKind::flash1,
                                      WorkloadKind::flash2, WorkloadKind::flash3};

std::string u64(std::uint64_t v) { return std::to_string(v); }

std::string human(std::uint64_t bytes) { return format_bytes(Bytes{bytes}); }

/// (query, key) pairs of one head the mask leaves visible: Σᵢ keys_visible(i), which is
/// Nq·(Nkv − Nq) + Nq(Nq + 1)/2 with the causal mask and Nq·Nkv without.
std::uint64_t visible_pairs(const AttentionShape& a) {
  if (!a.causal) return a.nq * a.nkv;
  return a.nq * (a.nkv - a.nq) + a.nq * (a.nq + 1) / 2;
}

/// ", Nkv = 65536, kv heads 8, causal": the variant parameters that differ from full
/// multi-head attention.
std::string variant_text(const WorkloadParams& p) {
  std::string out;
  if (p.kv_seq() != p.seq) out += ", Nkv = " + std::to_string(p.kv_seq());
  if (p.kv_head_count() != p.heads) out += ", kv heads " + std::to_string(p.kv_head_count());
  if (p.causal) out += ", causal";
  return out;
}

double ratio(std::uint64_t a, std::uint64_t b) {
  return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
}

}  // namespace

const TrafficVariant* TrafficTable::find(WorkloadKind kind) const {
  for (const TrafficVariant& v : variants) {
    if (v.kind == kind) return &v;
  }
  return nullptr;
}

TrafficTable compute_traffic(const WorkloadParams& asked, const HardwareConfig* config) {
  WorkloadParams shape = asked;
  if (config != nullptr) {
    shape.sram_bytes = config->sm.smem_per_block.count;
    shape.smem_limit_bytes = config->sm.smem_per_block.count;
    shape.sm_count = config->sm.count;  // what --splits auto divides the work over
    shape.arch = config->sm.arch;  // flash3 needs Hopper's wgmma and TMA
  }
  TrafficTable table;
  table.shape = shape;
  for (WorkloadKind kind : kVariants) {
    WorkloadParams p = shape;
    p.workload = kind;
    if (kind == WorkloadKind::flash1 && !p.sram_bytes && !(p.block_q && p.block_kv)) {
      table.flash1_missing =
          "flash1 is left out: its block sizes come from the on-chip memory M (Bc = ceil(M/4d), "
          "Br = min(Bc, d)); give --sram SIZE or --config FILE, or both --block-q and --block-kv";
      continue;
    }
    TrafficVariant v;
    v.kind = kind;
    if (kind == WorkloadKind::flash3) {
      // The Hopper kernel's tiles are its own (128 x 128) and it has no split-KV: the tiling
      // asked for is the other variants'.
      p.block_q.reset();
      p.block_kv.reset();
      p.splits.reset();
      try {
        v.params = resolve_workload(p);
      } catch (const UsageError& e) {
        std::string_view why = e.what();
        if (why.starts_with("flash3: ")) why.remove_prefix(8);
        table.flash3_missing = "flash3 is left out: " + std::string(why);
        continue;
      }
    } else {
      if (config != nullptr) choose_gemm_kernel(p);  // naive's products: the chip's kernel
      v.params = resolve_workload(p);
    }
    v.traffic = closed_form_traffic(v.params);
    table.variants.push_back(v);
  }
  const WorkloadParams& r = table.variants.front().params;
  table.matmul_flops = 4.0 * static_cast<double>(r.batch_heads()) *
                       static_cast<double>(visible_pairs(attention_shape(r))) *
                       static_cast<double>(r.head_dim);
  return table;
}

std::string format_traffic(const TrafficTable& t) {
  std::string out;
  char line[320];
  const WorkloadParams& p = t.variants.front().params;
  std::snprintf(
      line, sizeof line,
      "Global-memory traffic from the closed forms: batch %llu x heads %llu, N = %llu, d = %llu%s, "
      "%s (statistics l, m, L in fp32)\n"
      "(bytes the kernels request from global memory: HBM bytes if the L2 caught no reuse; "
      "`memwall run` shows what the L2 saves)\n",
      static_cast<unsigned long long>(p.batch), static_cast<unsigned long long>(p.heads),
      static_cast<unsigned long long>(p.seq), static_cast<unsigned long long>(p.head_dim),
      variant_text(p).c_str(), std::string(to_string(p.dtype)).c_str());
  out += line;
  for (const TrafficVariant& v : t.variants) {
    std::snprintf(line, sizeof line, "  %-7s %s\n", std::string(to_string(v.kind)).c_str(),
                  workload_plugin(v.kind).tiling_text(v.params).c_str());
    out += line;
  }
  if (!t.flash1_missing.empty()) out += "  " + t.flash1_missing + "\n";
  if (!t.flash3_missing.empty()) out += "  " + t.flash3_missing + "\n";
  out += "\n";
  std::snprintf(line, sizeof line, "%-8s %-6s %22s %22s %12s %12s\n", "variant", "tensor",
                "read bytes", "written bytes", "read", "written");
  out += line;
  for (const TrafficVariant& v : t.variants) {
    const std::string name(to_string(v.kind));
    for (const TensorTraffic& x : v.traffic.by_tensor) {
      std::snprintf(line, sizeof line, "%-8s %-6s %22s %22s %12s %12s\n", name.c_str(),
                    x.tensor.c_str(), u64(x.read_bytes).c_str(), u64(x.write_bytes).c_str(),
                    human(x.read_bytes).c_str(), human(x.write_bytes).c_str());
      out += line;
    }
    std::snprintf(line, sizeof line, "%-8s %-6s %22s %22s %12s %12s   total %s\n", name.c_str(),
                  "all", u64(v.traffic.read_bytes).c_str(), u64(v.traffic.write_bytes).c_str(),
                  human(v.traffic.read_bytes).c_str(), human(v.traffic.write_bytes).c_str(),
                  human(v.total_bytes()).c_str());
    out += line;
  }
  out += "\n";
  const bool square = p.kv_seq() == p.seq;
  if (p.causal) {
    std::snprintf(line, sizeof line,
                  "matmul FLOPs (QK^T and PV over the pairs the mask leaves visible, "
                  "4 x B x H x (Nq(Nkv-Nq) + Nq(Nq+1)/2) x d): %.6e\n",
                  t.matmul_flops);
  } else {
    std::snprintf(
        line, sizeof line,
        "matmul FLOPs (QK^T and PV, 4 x B x H x %s x d, the same for every variant): %.6e\n",
        square ? "N^2" : "Nq x Nkv", t.matmul_flops);
  }
  out += line;
  for (const TrafficVariant& v : t.variants) {
    std::snprintf(line, sizeof line, "  %-7s %22s bytes  %10.2f FLOP/byte\n",
                  std::string(to_string(v.kind)).c_str(), u64(v.total_bytes()).c_str(),
                  t.matmul_flops / static_cast<double>(v.total_bytes()));
    out += line;
  }
  if (const TrafficVariant* naive = t.find(WorkloadKind::naive)) {
    const TensorTraffic* s = naive->traffic.find("S");
    const TensorTraffic* pp = naive->traffic.find("P");
    if (s && pp) {
      const std::uint64_t bh = naive->params.batch_heads();
      std::snprintf(line, sizeof line,
                    "naive, per head: S written + read = %s + %s, P written + read = %s + %s "
                    "(%s x %u B each way%s)\n",
                    human(s->write_bytes / bh).c_str(), human(s->read_bytes / bh).c_str(),
                    human(pp->write_bytes / bh).c_str(), human(pp->read_bytes / bh).c_str(),
                    naive->params.kv_seq() == naive->params.seq ? "N^2" : "Nq x Nkv",
                    naive->params.element_size(), naive->params.causal ? ", masked or not" : "");
      out += line;
    }
  }
  out += "ratios of total HBM bytes:\n";
  for (std::size_t a = 0; a < t.variants.size(); ++a) {
    for (std::size_t b = a + 1; b < t.variants.size(); ++b) {
      std::snprintf(line, sizeof line, "  %s / %s = %.2f\n",
                    std::string(to_string(t.variants[a].kind)).c_str(),
                    std::string(to_string(t.variants[b].kind)).c_str(),
                    ratio(t.variants[a].total_bytes(), t.variants[b].total_bytes()));
      out += line;
    }
  }
  return out;
}

std::string traffic_json(const TrafficTable& t) {
  using Layout = JsonWriter::Layout;
  const WorkloadParams& p = t.variants.front().params;
  constexpr int kExact = 17;  // the byte ratios and FLOPs round-trip exactly
  JsonWriter w;
  w.open("", '{');
  w.integer("batch", p.batch);
  w.integer("heads", p.heads);
  w.integer("seq", p.seq);
  w.integer("head_dim", p.head_dim);
  w.integer("kv_heads", p.kv_head_count());
  w.integer("seq_kv", p.kv_seq());
  w.boolean("causal", p.causal);
  w.string("dtype", to_string(p.dtype));
  w.number("matmul_flops", t.matmul_flops, kExact);
  w.open("variants", '[');
  for (const TrafficVariant& v : t.variants) {
    w.open("", '{', Layout::kInline);
    w.string("workload", to_string(v.kind));
    w.integer("block_q", v.kind == WorkloadKind::flash3 ? kFlash3BlockQ : *v.params.block_q);
    w.integer("block_kv", v.kind == WorkloadKind::flash3 ? kFlash3BlockKv : *v.params.block_kv);
    if (v.params.stages && v.kind == WorkloadKind::flash3) w.integer("stages", *v.params.stages);
    if (v.params.sram_bytes) w.integer("sram_bytes", *v.params.sram_bytes);
    if (v.params.splits) w.integer("splits", *v.params.splits);
    w.integer("read_bytes", v.traffic.read_bytes);
    w.integer("write_bytes", v.traffic.write_bytes);
    w.integer("total_bytes", v.total_bytes());
    w.number("flop_per_byte", t.matmul_flops / static_cast<double>(v.total_bytes()), kExact);
    w.open("tensors", '[');
    for (const TensorTraffic& x : v.traffic.by_tensor) {
      w.open("", '{');
      w.string("tensor", x.tensor);
      w.integer("read_bytes", x.read_bytes);
      w.integer("write_bytes", x.write_bytes);
      w.close();
    }
    w.close();
    w.close();
  }
  w.close();
  w.open("ratios", '{', Layout::kInline);
  for (std::size_t a = 0; a < t.variants.size(); ++a) {
    for (std::size_t b = a + 1; b < t.variants.size(); ++b) {
      w.number(std::string(to_string(t.variants[a].kind)) + "/" +
                   std::string(to_string(t.variants[b].kind)),
               ratio(t.variants[a].total_bytes(), t.variants[b].total_bytes()), kExact);
    }
  }
  w.close();
  if (!t.flash1_missing.empty()) w.string("flash1_missing", t.flash1_missing);
  if (!t.flash3_missing.empty()) w.string("flash3_missing", t.flash3_missing);
  w.close();
  return w.take();
}

}  // namespace memwall::explain
