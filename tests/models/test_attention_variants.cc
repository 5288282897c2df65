// The attention variants — causal mask, grouped-query heads, a key length of its own, decode
// packing and split-KV — in naive, flash1 and flash2: their ops move exactly their closed-form
// bytes, the closed forms equal the step-by-step derivations of docs/models.md, their numerics
// match the masked full softmax, and bad combinations are one clear error.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "models/closed_forms.h"
#include "models/flash2.h"
#include "models/model_source.h"
#include "models/reference.h"
#include "models/workload.h"
#include "sim/core/error.h"
#include "tests/models/closed_form_check.h"
#include "traces/traffic_counter.h"

using namespace memwall;
using test::require_ops_match_closed_form;

namespace {

struct Variant {
  std::uint64_t batch, heads, kv_heads, seq, seq_kv;
  bool causal;
  std::uint32_t block_q, block_kv, splits;
};

WorkloadParams params_of(WorkloadKind kind, const Variant& v, std::uint64_t d = 32) {
  WorkloadParams p;
  p.workload = kind;
  p.batch = v.batch;
  p.heads = v.heads;
  p.kv_heads = v.kv_heads;
  p.seq = v.seq;
  p.seq_kv = v.seq_kv;
  p.causal = v.causal;
  p.head_dim = d;
  p.block_q = v.block_q;
  p.block_kv = v.block_kv;
  if (kind == WorkloadKind::naive) {
    p.block_k = 24;
    p.softmax_rows = 3;
  }
  if (kind == WorkloadKind::flash2) {
    p.stages = 2;
    p.splits = v.splits;
  }
  return p;
}

std::string error_of(const WorkloadParams& p) {
  try {
    resolve_workload(p);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

const TensorTraffic& tensor(const Traffic& t, const std::string& name) {
  const TensorTraffic* x = t.find(name);
  REQUIRE(x != nullptr);
  return *x;
}

// Shapes where neither N divides by the blocks, Nq ≠ Nkv, G = 1, 2, 4, splits 1..5.
const Variant kVariants[] = {
    {1, 2, 2, 200, 200, true, 64, 48, 1},  // causal, blocks divide nothing
    {2, 4, 2, 97, 97, true, 32, 16, 1},  // causal GQA, odd N
    {1, 4, 1, 100, 333, true, 32, 48, 1},  // causal, Nkv > Nq (bottom-right), multi-query
    {1, 4, 2, 150, 90, false, 64, 32, 1},  // Nkv < Nq, not causal
    {1, 2, 2, 64, 500, true, 16, 32, 4},  // split-KV with the mask: some splits empty
    {2, 8, 2, 1, 777, false, 128, 64, 5},  // decode, packed (G = 4), split
    {1, 8, 8, 1, 300, true, 128, 64, 3},  // decode without GQA: one row per head
    {1, 6, 3, 33, 1000, true, 16, 128, 2},  // causal, short Q against a long KV, split
};

}  // namespace

TEST_CASE("Each attention variant's ops move exactly its closed-form bytes", "[variants]") {
  for (const Variant& v : kVariants) {
    for (WorkloadKind kind : {WorkloadKind::naive, WorkloadKind::flash1, WorkloadKind::flash2}) {
      if (kind != WorkloadKind::flash2 && v.splits > 1) continue;
      for (Dtype dtype : {Dtype::fp16, Dtype::fp32}) {
        WorkloadParams p = params_of(kind, v);
        p.dtype = dtype;
        INFO(to_string(kind) << " " << to_string(dtype) << " B=" << v.batch << " H=" << v.heads
                             << " Hkv=" << v.kv_heads << " Nq=" << v.seq << " Nkv=" << v.seq_kv
                             << " causal=" << v.causal << " splits=" << v.splits);
        require_ops_match_closed_form(p);
      }
    }
  }
}

TEST_CASE("Each attention variant's output is the masked full softmax of its K/V head",
          "[variants][numerics]") {
  for (const Variant& v : kVariants) {
    for (WorkloadKind kind : {WorkloadKind::naive, WorkloadKind::flash1, WorkloadKind::flash2}) {
      if (kind != WorkloadKind::flash2 && v.splits > 1) continue;
      INFO(to_string(kind) << " H=" << v.heads << " Hkv=" << v.kv_heads << " Nq=" << v.seq
                           << " Nkv=" << v.seq_kv << " causal=" << v.causal
                           << " splits=" << v.splits);
      const VerifyResult r = verify_workload(params_of(kind, v), 7);
      CHECK(r.max_abs_error < 1e-12);
    }
  }
}

TEST_CASE("Causal flash2 reads K and V over exactly the blocks at or below the diagonal",
          "[variants][closed_forms]") {
  // Nq = Nkv = N = Tr·Br, Br a multiple of Bc: Q block m sees (m + 1)·Br keys, so K (and V) move
  // Σₘ (m + 1)·Br = Br·Tr(Tr + 1)/2 rows per head: (Tr + 1)/(2·Tr) of the unmasked Tr·N.
  const std::uint64_t bh = 3, d = 64, s = 2;
  for (const auto& [n, br, bc] :
       {std::tuple{1024u, 128u, 64u}, std::tuple{1024u, 128u, 128u}, std::tuple{768u, 256u, 64u}}) {
    WorkloadParams p = params_of(WorkloadKind::flash2, {1, bh, bh, n, n, true, br, bc, 1}, d);
    const std::uint64_t tr = n / br;
    const Traffic t = closed_form_traffic(p);
    CHECK(tensor(t, "K").read_bytes == bh * d * s * br * tr * (tr + 1) / 2);
    CHECK(tensor(t, "V").read_bytes == tensor(t, "K").read_bytes);
    p.causal = false;
    const Traffic full = closed_form_traffic(p);
    CHECK(tensor(full, "K").read_bytes * (tr + 1) == 2 * tr * tensor(t, "K").read_bytes);
    CHECK(tensor(full, "Q").read_bytes == tensor(t, "Q").read_bytes);  // every Q block once
  }
  // Nkv = Nq + off with off a multiple of Bc: Q block m sees (m + 1)·Br + off keys.
  const std::uint64_t n = 512, off = 256, br = 128, bc = 64, tr = n / br;
  const WorkloadParams p =
      params_of(WorkloadKind::flash2, {1, 1, 1, n, n + off, true, br, bc, 1}, d);
  CHECK(tensor(closed_form_traffic(p), "K").read_bytes ==
        d * s * (br * tr * (tr + 1) / 2 + tr * off));
}

TEST_CASE("Causal flash1 skips, in each pass, the Q blocks above the diagonal",
          "[variants][closed_forms]") {
  // N = Tc·Bc, Br = Bc: pass j visits Q blocks j..Tc−1, (Tc − j)·Br rows; Σ = Br·Tc(Tc + 1)/2.
  const std::uint64_t n = 512, b = 64, d = 32, s = 2, tc = n / b;
  const WorkloadParams p = params_of(
      WorkloadKind::flash1,
      {1, 1, 1, n, n, true, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b), 1}, d);
  const Traffic t = closed_form_traffic(p);
  CHECK(tensor(t, "Q").read_bytes == d * s * b * tc * (tc + 1) / 2);
  CHECK(tensor(t, "K").read_bytes == n * d * s);  // each K/V block loaded once
  CHECK(tensor(t, "O").write_bytes == d * s * (b * tc * (tc + 1) / 2 + n));  // + the init
}

TEST_CASE("Grouped-query heads read K/V per query head from a smaller K/V tensor",
          "[variants][closed_forms]") {
  // SM→L2 traffic is per query head: the K bytes flash2 and naive load do not depend on Hkv;
  // the K tensor itself is Hkv/H of the multi-head one.
  for (WorkloadKind kind : {WorkloadKind::naive, WorkloadKind::flash2}) {
    const WorkloadParams mha = params_of(kind, {2, 8, 8, 256, 256, false, 64, 64, 1});
    const WorkloadParams gqa = params_of(kind, {2, 8, 2, 256, 256, false, 64, 64, 1});
    INFO(to_string(kind));
    CHECK(tensor(closed_form_traffic(gqa), "K").read_bytes ==
          tensor(closed_form_traffic(mha), "K").read_bytes);
    const auto w_mha = make_workload(mha), w_gqa = make_workload(gqa);
    const std::uint8_t k = w_gqa->tensor_id("K");
    CHECK(w_gqa->tensor_rows(k) * 4 == w_mha->tensor_rows(k));
  }
}

TEST_CASE("Decode with grouped-query heads packs a K/V head's query heads into one Q block",
          "[variants]") {
  // seq 1, H = 32, Hkv = 8 (G = 4): one CTA per (batch, K/V head), each reading its K/V head once.
  const std::uint64_t b = 2, h = 32, hkv = 8, nkv = 4096, d = 128, s = 2;
  WorkloadParams p = params_of(WorkloadKind::flash2, {b, h, hkv, 1, nkv, false, 128, 64, 1}, d);
  const WorkloadParams r = resolve_workload(p);
  const AttentionShape a = flash2_shape(r);
  CHECK(a.batch_heads == b * hkv);
  CHECK(a.nq == h / hkv);
  CHECK(kernel_launches(r)[0].ctas == b * hkv);
  const Traffic t = closed_form_traffic(p);
  CHECK(tensor(t, "K").read_bytes == b * hkv * nkv * d * s);
  CHECK(tensor(t, "Q").read_bytes == b * h * d * s);
  // Without grouping (Hkv = H) nothing is packed: one single-row CTA per query head.
  p.kv_heads = h;
  CHECK(kernel_launches(resolve_workload(p))[0].ctas == b * h);
}

TEST_CASE("Split-KV writes each split's partial O and L in fp32 and the combine reads them back",
          "[variants]") {
  const std::uint64_t b = 1, h = 4, nq = 64, nkv = 2048, d = 64, splits = 4;
  const WorkloadParams p =
      params_of(WorkloadKind::flash2,
                {b, h, h, nq, nkv, false, 64, 128, static_cast<std::uint32_t>(splits)}, d);
  const Traffic t = closed_form_traffic(p);
  CHECK(tensor(t, "O_accum").write_bytes == splits * b * h * nq * d * 4);
  CHECK(tensor(t, "O_accum").read_bytes == tensor(t, "O_accum").write_bytes);
  CHECK(tensor(t, "L_accum").write_bytes == splits * b * h * nq * 4);
  CHECK(tensor(t, "Q").read_bytes == splits * b * h * nq * d * 2);  // each split loads its Q
  const auto launches = kernel_launches(resolve_workload(p));
  REQUIRE(launches.size() == 2);
  CHECK(launches[0].ctas == b * h * splits);
  CHECK(launches[1].name == "flash2_combine");
  // One combine CTA per 128·4/d rows of a head (its threads take 4 columns of a row each).
  CHECK(launches[1].ctas == b * h * ceil_div(nq, 128 * 4 / d));
  CHECK(launches[1].smem_bytes_per_cta == (splits + 1) * (128 * 4 / d) * 4);

  // The combined O equals the unsplit kernel's (not only the reference).
  WorkloadParams one = p;
  one.splits = 1;
  const auto ws = make_workload(p), w1 = make_workload(one);
  EigenBackend ds = ws->make_data(3), d1 = w1->make_data(3);
  ws->compute_all(ds);
  w1->compute_all(d1);
  CHECK((ds.t(ws->tensor_id("O")) - d1.t(w1->tensor_id("O"))).cwiseAbs().maxCoeff() < 1e-13);
  CHECK((ds.t(ws->tensor_id("L")) - d1.t(w1->tensor_id("L"))).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE("num_splits_heuristic picks what FlashAttention-2's picks", "[variants][splits]") {
  // 4 blocks on 10 SMs, 8 K/V blocks: splits 5..7 are ineligible (2 blocks each, as 4 splits);
  // wave efficiencies 0.4, 0.8, 0.6, 0.8, -, -, -, 0.8: the first within 85% of 0.8 is 2.
  CHECK(flash2_num_splits_heuristic(4, 10, 8, 128) == 2);
  // 8 blocks on 264 (2·132), 512 K/V blocks: 27 splits reach 0.82, 28 is ineligible (19 blocks
  // as 27), 29 reaches 0.879 ≥ 0.85·max (max ≤ 1): 29.
  CHECK(flash2_num_splits_heuristic(8, 264, 512, 128) == 29);
  // Blocks already filling 80% of the SMs: one split.
  CHECK(flash2_num_splits_heuristic(212, 264, 512, 128) == 1);
  CHECK(flash2_num_splits_heuristic(211, 264, 512, 128) > 1);
  // Never more splits than K/V blocks.
  CHECK(flash2_num_splits_heuristic(1, 264, 3, 128) <= 3);

  // --splits auto, decode B = 1, H = 32, Hkv = 8, d = 128, Nkv = 65536 on 132 SMs: packed to
  // 8 heads of 4 rows, one 64-row block each, 512 blocks of 128 keys: the case above.
  WorkloadParams p = params_of(WorkloadKind::flash2, {1, 32, 8, 1, 65536, false, 128, 64, 0}, 128);
  p.sm_count = 132;
  CHECK(*resolve_workload(p).splits == 29u);
  p.sm_count = 66;  // half the SMs: the heuristic on 2·66 (the config's count is what it uses)
  CHECK(*resolve_workload(p).splits == flash2_num_splits_heuristic(8, 132, 512, 128));
}

TEST_CASE("Impossible attention variants are one clear error naming the parameters",
          "[variants][errors]") {
  WorkloadParams p = params_of(WorkloadKind::flash2, {1, 32, 5, 128, 128, false, 64, 64, 1});
  CHECK_THAT(error_of(p), Catch::StartsWith("heads (32) must be a multiple of kv_heads (5)"));
  p.kv_heads = 64;
  CHECK_THAT(error_of(p), Catch::StartsWith("heads (32) must be a multiple of kv_heads (64)"));
  for (WorkloadKind kind : {WorkloadKind::naive, WorkloadKind::flash1, WorkloadKind::flash2}) {
    WorkloadParams c = params_of(kind, {1, 1, 1, 300, 200, true, 64, 64, 1});
    CHECK_THAT(error_of(c), Catch::StartsWith("causal needs seq <= seq_kv"));
    CHECK_THAT(error_of(c), Catch::Contains("got seq 300 and seq_kv 200"));
  }
  WorkloadParams s = params_of(WorkloadKind::flash2, {1, 1, 1, 64, 1000, false, 64, 128, 9});
  CHECK_THAT(error_of(s), Catch::StartsWith("splits (9) must be at most the K/V blocks of a head, "
                                            "ceil(seq_kv / block_kv) = 8"));
  s.splits = 8;
  CHECK(error_of(s).empty());
  // Spilling is modelled for full attention only.
  WorkloadParams spill = params_of(WorkloadKind::flash2, {1, 1, 1, 256, 256, true, 128, 128, 1});
  spill.allow_spill = true;
  spill.smem_limit_bytes = 16 * 1024;
  CHECK_THAT(error_of(spill), Catch::StartsWith("allow_spill is modelled for full attention only"));
}
