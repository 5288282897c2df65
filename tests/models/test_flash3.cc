// flash3: the FlashAttention-3-style forward's op stream (models/flash3.h) — its bytes against the
// closed form and against the SM-side counters of the real kernel (traces/measured/h200-flash3),
// its products' FLOPs, its persistent grid and shared memory, its limits, its asynchronous
// products and the order of its loads.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "models/closed_forms.h"
#include "models/flash3.h"
#include "models/model_source.h"
#include "models/workload.h"
#include "models/workload_registry.h"
#include "sim/core/error.h"
#include "tests/models/closed_form_check.h"
#include "tests/support/ncu_csv.h"
#include "traces/traffic_counter.h"

using namespace memwall;

namespace {

WorkloadParams flash3(std::uint64_t batch, std::uint64_t heads, std::uint64_t kv_heads,
                      std::uint64_t seq, std::uint64_t seq_kv, std::uint64_t d, bool causal) {
  WorkloadParams p;
  p.workload = WorkloadKind::flash3;
  p.batch = batch;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.seq = seq;
  p.seq_kv = seq_kv;
  p.head_dim = d;
  p.causal = causal;
  return p;
}

/// Every op of every CTA of `p`'s model.
template <class F>
void for_each_op(const WorkloadParams& p, F&& f) {
  const auto source = make_model_source(p);
  KernelInfo k;
  std::vector<Op> ops;
  while (source->next_kernel(k)) {
    while (source->next_cta(ops)) {
      for (const Op& op : ops) f(op);
    }
  }
}

}  // namespace

TEST_CASE("flash3's ops move exactly its closed form's bytes", "[flash3]") {
  for (const WorkloadParams& p : {
           flash3(1, 2, 2, 200, 200, 64, false),  // ragged: a Q block of 72 rows, 64 + 8
           flash3(1, 2, 2, 333, 333, 128, true),
           flash3(2, 4, 2, 256, 256, 64, true),  // grouped-query
           flash3(1, 2, 2, 100, 300, 64, true),  // Nq < Nkv: the mask aligned bottom-right
           flash3(1, 8, 2, 1, 700, 128, false),  // decode
           flash3(1, 3, 3, 384, 512, 64, false),
           flash3(2, 140, 140, 130, 130, 64, true),  // more tiles than SMs: several per CTA
       }) {
    INFO(p.seq << " " << p.kv_seq() << " d " << p.head_dim << " causal " << p.causal);
    test::require_ops_match_closed_form(p);
  }
  // stages change the run-ahead, not the bytes.
  WorkloadParams p = flash3(1, 4, 4, 1000, 1000, 64, true);
  for (std::uint32_t stages : {2u, 3u, 6u}) {
    p.stages = stages;
    test::require_ops_match_closed_form(p);
  }
}

TEST_CASE("flash3's closed form: Q, O and L once; K and V per Q block over the keys it sees",
          "[flash3]") {
  // B·H = 2, N = 333, d = 128, causal: Q blocks of 128, 128, 77 rows see keys [0, 128), [0, 256)
  // and [0, 333).
  const WorkloadParams p = resolve_workload(flash3(1, 2, 2, 333, 333, 128, true));
  const Traffic t = flash3_traffic(p);
  const std::uint64_t row = 128 * 2;
  CHECK(t.find("Q")->read_bytes == 2 * 333 * row);
  CHECK(t.find("K")->read_bytes == 2 * (128 + 256 + 333) * row);
  CHECK(t.find("V")->read_bytes == t.find("K")->read_bytes);
  CHECK(t.find("O")->write_bytes == 2 * 333 * row);
  CHECK(t.find("L")->write_bytes == 2 * 333 * 4);
  // Without the mask every Q block reads all of K and V: ⌈N / 128⌉·N rows per head.
  const Traffic full = flash3_traffic(resolve_workload(flash3(1, 2, 2, 333, 333, 128, false)));
  CHECK(full.find("K")->read_bytes == 2 * 3 * 333 * row);
}

TEST_CASE("flash3's products are asynchronous and take 4·128·128·d FLOPs per visible block",
          "[flash3]") {
  for (const WorkloadParams& raw :
       {flash3(1, 2, 2, 333, 333, 128, true), flash3(2, 140, 140, 130, 130, 64, false)}) {
    const WorkloadParams p = resolve_workload(raw);
    // Visible blocks of each Q block, summed over the heads.
    const std::uint64_t tr = (p.seq + 127) / 128;
    std::uint64_t blocks = 0;
    for (std::uint64_t qb = 0; qb < tr; ++qb) {
      const std::uint64_t last_row = std::min((qb + 1) * 128, p.seq) - 1;
      const std::uint64_t keys =
          p.causal ? std::min(p.kv_seq(), last_row + p.kv_seq() - p.seq + 1) : p.kv_seq();
      blocks += (keys + 127) / 128;
    }
    blocks *= p.batch_heads();
    std::uint64_t tensor = 0, sync_tensor = 0;
    std::set<std::uint16_t> compute_tags;
    for_each_op(p, [&](const Op& op) {
      if (op.kind != OpKind::compute || op.unit != ComputeUnit::tensor) return;
      tensor += op.amount;
      if (op.tag == 0) sync_tensor += op.amount;
      compute_tags.insert(op.tag);
    });
    CHECK(tensor == blocks * 4 * 128 * 128 * p.head_dim);
    CHECK(sync_tensor == 0);
    CHECK(compute_tags.size() == 4);  // S and P·V of each consumer warpgroup
  }
}

TEST_CASE("flash3 runs a persistent grid with the kernel's shared memory and registers",
          "[flash3]") {
  const WorkloadParams p = resolve_workload(flash3(2, 16, 16, 8192, 8192, 128, false));
  REQUIRE(*p.stages == 2);
  const std::vector<KernelInfo> k = kernel_launches(p);
  REQUIRE(k.size() == 1);
  CHECK(k[0].ctas == std::min<std::uint64_t>(32 * 64, p.sm_count));
  CHECK(k[0].threads_per_cta == 384);
  CHECK(k[0].registers_per_thread == kFlash3Registers);
  // 1 KiB + Q + 2 stages of K and V + O staging + 256: the kernel's Fa3::kSmemBytes.
  CHECK(k[0].smem_bytes_per_cta == 1024 + 32768 + 2 * 2 * 32768 + 32768 + 256);
  CHECK(*resolve_workload(flash3(1, 1, 1, 512, 512, 64, false)).stages == 4);
  // Fewer tiles than SMs: one CTA each.
  CHECK(kernel_launches(resolve_workload(flash3(1, 2, 2, 300, 300, 64, false)))[0].ctas == 6);
}

TEST_CASE("flash3 refuses what its kernel cannot run, naming the reason", "[flash3]") {
  const auto error = [](WorkloadParams p) {
    try {
      resolve_workload(p);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  WorkloadParams p = flash3(1, 2, 2, 256, 256, 96, false);
  CHECK_THAT(error(p), Catch::Contains("head_dim must be 64 or 128"));
  p.head_dim = 64;
  p.dtype = Dtype::fp32;
  CHECK_THAT(error(p), Catch::Contains("fp16 only"));
  p.dtype = Dtype::fp16;
  p.arch = 80;
  CHECK_THAT(error(p), Catch::Contains("sm.arch >= 90"));
  p.arch = 90;
  p.stages = 1;
  CHECK_THAT(error(p), Catch::Contains("stages must be >= 2"));
  p.stages = 2;
  CHECK(error(p).empty());
}

TEST_CASE("flash3's loads come in the producer's order, each before its first wait", "[flash3]") {
  // Per CTA: Q, then K and V of each block, tile after tile; every wait on a K/V tag follows a
  // load under it; one CTA of 3 tiles (N = 300 has 3 Q blocks; grid 1 of 1 SM).
  WorkloadParams raw = flash3(1, 1, 1, 300, 300, 64, true);
  raw.sm_count = 1;
  const WorkloadParams p = resolve_workload(raw);
  const auto w = make_workload(p);
  std::vector<Op> ops;
  Recorder rec(ops);
  w->emit_cta(0, 0, rec);
  const std::uint8_t q = w->tensor_id("Q"), k = w->tensor_id("K"), v = w->tensor_id("V");
  std::vector<char> order;  // one letter per box of 64 columns
  std::set<std::uint16_t> loaded;
  std::uint64_t waits = 0;
  for (const Op& op : ops) {
    if (op.kind == OpKind::load) {
      order.push_back(op.tensor == q ? 'Q' : op.tensor == k ? 'K' : op.tensor == v ? 'V' : '?');
      loaded.insert(op.tag);
    }
    if (op.kind == OpKind::wait && op.tag <= 1 + 2 * *p.stages) {
      CHECK(loaded.count(op.tag) == 1);
      ++waits;
    }
  }
  // Causal, longest first: Q blocks 2, 1, 0 see 3, 2, 1 blocks.
  CHECK(std::string(order.begin(), order.end()) == "QKVKVKVQKVKVQKV");
  CHECK(waits > 0);
}

TEST_CASE(
    "The model's SM->L2 bytes of flash3 equal the SM-side counters of the real kernel (ncu on the "
    "H200)",
    "[flash3][measured]") {
  const test::NcuCsv ncu(std::string(MEMWALL_SOURCE_DIR) +
                         "/traces/measured/h200-flash3/fa3_ncu.csv");
  // The four --profile cases of flash3_attention.cu, in order.
  const std::vector<WorkloadParams> cases = {
      flash3(2, 16, 16, 8192, 8192, 128, false), flash3(2, 16, 16, 8192, 8192, 128, true),
      flash3(4, 32, 32, 4096, 4096, 64, false), flash3(4, 32, 8, 4096, 4096, 64, true)};
  REQUIRE(ncu.rows().size() == cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    const TraceCounts c = count_traffic(*make_model_source(cases[i]));
    const auto& r = ncu.rows()[i];
    CHECK(ncu.count(r, "l1tex__m_xbar2l1tex_read_bytes.sum") == c.read_bytes);
    // All of it TMA loads.
    CHECK(ncu.count(r, "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum") == c.read_bytes);
    CHECK(ncu.count(r, "l1tex__m_l1tex2xbar_write_bytes.sum") == c.write_bytes);
  }
}
