// The simulator on the real workloads (models/): conservation of bytes, run ≡ replay, and the
// naive-vs-FlashAttention-2 traffic properties on the H200 preset. Expectations come from the
// closed forms (models/closed_forms.h) and the config.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "models/closed_forms.h"
#include "models/compiled_instructions.h"
#include "models/model_source.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "sim/report/report_json.h"
#include "tests/support/engine.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

using namespace memwall;

namespace {

WorkloadParams attention(WorkloadKind kind, std::uint64_t seq, std::uint64_t head_dim,
                         std::uint64_t heads) {
  WorkloadParams p;
  p.workload = kind;
  p.seq = seq;
  p.head_dim = head_dim;
  p.heads = heads;
  p.sram_bytes = 96 * 1024;  // flash1's M
  return p;
}

/// `base` with the attention variants: `heads` query heads on `kv_heads` K/V heads, the mask, a
/// key length and splits of its own.
WorkloadParams variant(WorkloadParams base, std::uint64_t heads, std::uint64_t kv_heads,
                       bool causal, std::uint64_t seq_kv, std::uint32_t splits) {
  base.heads = heads;
  base.kv_heads = kv_heads;
  base.causal = causal;
  base.seq_kv = seq_kv;
  if (base.workload == WorkloadKind::flash2) base.splits = splits;
  return base;
}

WorkloadParams small_gemm() {
  WorkloadParams p;
  p.workload = WorkloadKind::gemm;
  p.m = 512;
  p.n = 512;
  p.k = 256;
  return p;
}

RunResult simulate_model(const HardwareConfig& config, const WorkloadParams& params,
                         SimOptions options = {}) {
  const std::unique_ptr<TraceSource> source = make_model_source(params);
  return simulate(config, *source, options);
}

/// Copies a source into a trace file.
void write_trace(TraceSource& source, const std::string& path) {
  TraceWriter writer(path);
  writer.begin(source.workload());
  KernelInfo k;
  std::vector<Op> ops;
  while (source.next_kernel(k)) {
    writer.kernel(k);
    while (source.next_cta(ops)) {
      writer.cta_begin();
      for (const Op& op : ops) writer.op(op);
      writer.cta_end();
    }
  }
  writer.end();
}

std::uint64_t dram_bytes(const RunResult& r) {
  return r.traffic.dram_read_bytes + r.traffic.dram_write_bytes;
}

}  // namespace

TEST_CASE(
    "Every workload conserves bytes: loaded sectors are hits plus misses, stored bytes "
    "reach DRAM or stay dirty, and every DRAM byte has a tensor and a reason",
    "[run][conservation]") {
  const HardwareConfig c = test::small_config();  // 1 MiB L2: the shapes below overflow it
  for (const WorkloadParams& p :
       {attention(WorkloadKind::naive, 512, 64, 2), attention(WorkloadKind::flash1, 512, 64, 2),
        attention(WorkloadKind::flash2, 512, 64, 2), small_gemm(),
        // Variants, in shapes whose boxes are whole sectors (rows of L: multiples of 8 floats).
        variant(attention(WorkloadKind::naive, 320, 64, 4), 4, 2, true, 768, 1),
        variant(attention(WorkloadKind::flash1, 320, 64, 4), 4, 1, true, 320, 1),
        variant(attention(WorkloadKind::flash2, 320, 64, 4), 4, 2, true, 768, 3),
        variant(attention(WorkloadKind::flash2, 1, 64, 8), 8, 1, false, 5000, 6)}) {
    for (const bool flush : {false, true}) {
      SimOptions options;
      options.flush_l2_between_kernels = flush;
      const RunResult r = simulate_model(c, p, options);
      INFO(r.workload.name << (flush ? " with flushes" : ""));
      const TrafficCounters& t = r.traffic;
      CHECK(t.l2_read_bytes == (t.l2_hit_sectors + t.l2_miss_sectors) * c.l2.sector_size.count);
      const std::uint64_t left =
          t.dram_write_bytes + r.dram_dirty_bytes_at_end + r.dram_flush_writeback_bytes;
      if (p.workload == WorkloadKind::flash1) {
        CHECK(left <= t.l2_write_bytes);  // O, ℓ, m are rewritten in L2 on every pass
      } else {
        CHECK(left == t.l2_write_bytes);  // every output sector is stored once
      }
      std::uint64_t by_tensor_read = 0;
      std::uint64_t by_tensor_write = 0;
      std::uint64_t by_tensor_reread = 0;
      for (const TensorDramBytes& tb : r.dram_bytes_by_tensor) {
        CHECK(tb.name != "(untracked)");
        CHECK(tb.reread <= tb.read);
        by_tensor_read += tb.read;
        by_tensor_write += tb.write;
        by_tensor_reread += tb.reread;
      }
      CHECK(by_tensor_read == t.dram_read_bytes);
      CHECK(by_tensor_write == t.dram_write_bytes);
      // The tensors' split of their reads is the run's, tensor by tensor summed.
      CHECK(by_tensor_reread == r.dram_bytes_by_reason.reread);
      CHECK(by_tensor_read - by_tensor_reread == r.dram_bytes_by_reason.compulsory);
      CHECK(r.dram_bytes_by_reason.compulsory + r.dram_bytes_by_reason.reread == t.dram_read_bytes);
      CHECK(r.dram_bytes_by_reason.writeback == t.dram_write_bytes);
      // SM→L2 traffic is the closed form's (the boxes here are whole sectors).
      const Traffic cf = closed_form_traffic(p);
      CHECK(t.l2_read_bytes == cf.read_bytes);
      CHECK(t.l2_write_bytes == cf.write_bytes);
    }
  }
}

TEST_CASE("Replaying a trace file gives the same JSON report as running the model",
          "[run][replay]") {
  const HardwareConfig c = test::small_config();
  for (const WorkloadParams& p :
       {attention(WorkloadKind::naive, 256, 64, 2), attention(WorkloadKind::flash2, 512, 64, 2),
        variant(attention(WorkloadKind::flash2, 1, 64, 4), 4, 2, false, 3000, 4),
        variant(attention(WorkloadKind::flash2, 256, 64, 4), 4, 4, true, 256, 1)}) {
    const std::string direct = run_to_json(simulate_model(c, p));
    const std::string path = "build-test-run-replay.mwt";
    {
      const std::unique_ptr<TraceSource> source = make_model_source(p);
      write_trace(*source, path);
    }
    std::string replayed;
    {
      TraceReader reader(path);
      replayed = run_to_json(simulate(c, reader));
    }
    std::remove(path.c_str());
    CHECK(direct == replayed);
  }
}

TEST_CASE(
    "Grouped-query flash2 on the H200 preset reads K and V from DRAM once per K/V head "
    "while the SMs read them once per query head",
    "[run][h200][variants]") {
  // The group's CTAs run together and the 60 MiB L2 holds every K/V head: the L2 model, not a
  // formula, turns the per-query-head SM→L2 bytes into per-K/V-head DRAM bytes.
  const HardwareConfig h200 = load_config("h200");
  const std::uint64_t b = 2, h = 16, hkv = 2, n = 2048, d = 128, s = 2;
  WorkloadParams p = attention(WorkloadKind::flash2, n, d, h);
  p.batch = b;
  p.kv_heads = hkv;
  const RunResult r = simulate_model(h200, p);
  const Traffic cf = closed_form_traffic(p);
  for (const char* name : {"K", "V"}) {
    INFO(name);
    const auto it = std::find_if(r.dram_bytes_by_tensor.begin(), r.dram_bytes_by_tensor.end(),
                                 [&](const TensorDramBytes& t) { return t.name == name; });
    REQUIRE(it != r.dram_bytes_by_tensor.end());
    CHECK(it->read == b * hkv * n * d * s);  // per K/V head
    CHECK(cf.find(name)->read_bytes == b * h * ceil_div(n, 128) * n * d * s);  // per query head
  }
  CHECK(r.traffic.l2_read_bytes == cf.read_bytes);
}

TEST_CASE(
    "naive attention's launches issue their CUDA kernels' warp instructions: softmax 188 per "
    "row and 167.75 per 256 keys, qk its per-tile count, pv its per-chunk and per-CTA terms",
    "[run][issue]") {
  const HardwareConfig h200 = load_config("h200");
  for (const std::uint64_t d : {64, 128}) {
    const InstructionTerms qk = kernel_instructions("qk", d, 128, 128, 0).terms;
    const InstructionTerms pv = kernel_instructions("pv", d, 128, 64, 0).terms;
    REQUIRE(qk.per_cta > 0);
    REQUIRE(pv.per_step > 0);
    for (const std::uint64_t n : {256, 1000, 1024}) {
      INFO("d " << d << ", N " << n);
      const std::uint64_t bh = 3, tiles = ceil_div(n, 128);
      const RunResult r = simulate_model(h200, attention(WorkloadKind::naive, n, d, bh));
      for (const KernelResult& k : r.kernels) {
        INFO(k.name);
        std::uint64_t expected = bh * n * (188 + ceil_div(671 * n, 1024));  // softmax
        if (k.name == "qk") expected = bh * tiles * tiles * qk.per_cta;
        if (k.name == "pv") expected = bh * tiles * (pv.per_cta + ceil_div(n, 64) * pv.per_step);
        CHECK(k.traffic.warp_instructions == expected);
      }
    }
  }
}

TEST_CASE(
    "flash2 issues its kernel's warp instructions per K/V tile, per masked tile and per CTA, "
    "and its backward per (K/V block, Q block) pair and per CTA",
    "[run][issue]") {
  const HardwareConfig h200 = load_config("h200");
  const std::uint64_t bh = 2, n = 1000;
  const std::uint64_t t = ceil_div(n, 128);  // Q blocks, and K/V blocks at 128
  SECTION("forward, the plain kernel at d = 64 (128 x 128 tiles)") {
    const InstructionTerms f = kernel_instructions("flash2_fwd", 64, 128, 128, 2).terms;
    const RunResult r = simulate_model(h200, attention(WorkloadKind::flash2, n, 64, bh));
    CHECK(r.kernels.at(0).traffic.warp_instructions == bh * t * (f.per_cta + t * f.per_step));
  }
  SECTION("forward, the variant kernel with the causal mask (one masked tile per Q block)") {
    const InstructionTerms f = kernel_instructions("flash2_fwd_variant", 64, 128, 128, 2).terms;
    WorkloadParams p = attention(WorkloadKind::flash2, n, 64, bh);
    p.causal = true;
    const RunResult r = simulate_model(h200, p);
    // Q block i visits K/V blocks 0..i, the last masked.
    const std::uint64_t visited = t * (t + 1) / 2;
    CHECK(r.kernels.at(0).traffic.warp_instructions ==
          bh * (t * f.per_cta + visited * f.per_step + t * f.per_masked_step));
  }
  SECTION("backward at d = 128 (64 x 128 blocks)") {
    const InstructionTerms f = kernel_instructions("flash2_bwd", 128, 64, 128, 0).terms;
    const RunResult r = simulate_model(h200, attention(WorkloadKind::flash2_bwd, n, 128, bh));
    const auto main = std::find_if(r.kernels.begin(), r.kernels.end(),
                                   [](const KernelResult& k) { return k.name == "flash2_bwd"; });
    REQUIRE(main != r.kernels.end());
    const std::uint64_t kv_blocks = ceil_div(n, 128), q_blocks = ceil_div(n, 64);
    CHECK(main->traffic.warp_instructions == bh * kv_blocks * (f.per_cta + q_blocks * f.per_step));
  }
}

TEST_CASE(
    "On the H200 preset at N=4096, d=64, B·H=64, naive attention moves at least 20x the "
    "DRAM bytes of FlashAttention-2, whose K/V re-reads hit in L2",
    "[run][h200]") {
  const HardwareConfig h200 = load_config("h200");
  const std::uint64_t n = 4096;
  const std::uint64_t d = 64;
  const std::uint64_t bh = 64;
  const WorkloadParams flash2 = attention(WorkloadKind::flash2, n, d, bh);
  const RunResult f = simulate_model(h200, flash2);
  const RunResult v = simulate_model(h200, attention(WorkloadKind::naive, n, d, bh));
  CHECK(dram_bytes(v) >= 20 * dram_bytes(f));

  // SM→L2 reads follow Theorem 2's closed form.
  const Traffic cf = closed_form_traffic(flash2);
  CHECK(static_cast<double>(f.traffic.l2_read_bytes) ==
        Approx(static_cast<double>(cf.read_bytes)).epsilon(0.01));
  // DRAM reads stay near compulsory: Q, K and V once each.
  const double compulsory = 3.0 * n * d * 2 /* fp16 */ * bh;
  CHECK(static_cast<double>(f.traffic.dram_read_bytes) >= compulsory);
  CHECK(static_cast<double>(f.traffic.dram_read_bytes) <= 1.10 * compulsory);
  CHECK(f.traffic.l2_hit_rate() > 0.9);
}
