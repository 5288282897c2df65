// Spilling flash1/flash2 (models/spill.h): rejection without --allow-spill, the spill plan, the
// closed form of the extra traffic, and exact numerics with the spilled rows going through global.
#include <catch2/catch.hpp>

#include <string>

#include "models/closed_forms.h"
#include "models/model_source.h"
#include "models/reference.h"
#include "models/spill.h"
#include "models/workload.h"
#include "sim/core/error.h"
#include "tests/models/closed_form_check.h"
#include "traces/traffic_counter.h"

using namespace memwall;

namespace {

WorkloadParams flash(WorkloadKind kind, std::uint64_t n, std::uint64_t d, std::uint32_t bq,
                     std::uint32_t bkv, std::uint64_t limit, bool spill) {
  WorkloadParams p = test::attention(kind, n, d, bq, bkv);
  p.smem_limit_bytes = limit;
  p.allow_spill = spill;
  return p;
}

using test::require_ops_match_closed_form;

std::uint64_t spill_bytes(const WorkloadParams& p) {
  const TensorTraffic t = spill_traffic(resolve_workload(p));
  return t.read_bytes + t.write_bytes;
}

}  // namespace

TEST_CASE("Tiles over the shared memory per block are rejected with what fits", "[spill]") {
  // flash2 d = 128, fp16: (256 + 2·2·256)·256 B = 320 KiB over 227 KiB.
  const std::uint64_t limit = 227 * 1024, row = 128 * 2;
  WorkloadParams p = flash(WorkloadKind::flash2, 1024, 128, 256, 256, limit, false);
  p.smem_limit_source = "sm.smem_per_block of h200.yaml";
  const std::uint64_t fit_kv = (limit / row - 256) / 4;
  try {
    resolve_workload(p);
    FAIL("oversized tiles were accepted");
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains(std::to_string((256 + 4 * 256) * row) + " B"));
    CHECK_THAT(msg, Catch::Contains(std::to_string(limit) + " B, sm.smem_per_block of h200.yaml"));
    CHECK_THAT(msg,
               Catch::Contains("block_kv <= " + std::to_string(fit_kv) + " fits at block_q 256"));
    CHECK_THAT(msg, Catch::Contains("--allow-spill"));
  }
  // The block_kv it names fits; one more does not.
  p.block_kv = static_cast<std::uint32_t>(fit_kv);
  CHECK_NOTHROW(resolve_workload(p));
  p.block_kv = static_cast<std::uint32_t>(fit_kv + 1);
  CHECK_THROWS_AS(resolve_workload(p), UsageError);

  // flash1 with explicit blocks: (512 + 2·512)·256 B over the limit; block_kv <= (908 − 512) / 2.
  WorkloadParams f1 = flash(WorkloadKind::flash1, 2048, 128, 512, 512, limit, false);
  CHECK_THROWS_WITH(resolve_workload(f1),
                    Catch::Contains("block_kv <= " + std::to_string((limit / row - 512) / 2) +
                                    " fits at block_q 512"));
}

TEST_CASE("With tiles that fit, allow_spill changes no op and no launch", "[spill]") {
  for (WorkloadKind kind : {WorkloadKind::flash1, WorkloadKind::flash2}) {
    const WorkloadParams plain = flash(kind, 200, 32, 64, 48, 64 * 1024, false);
    const WorkloadParams spill = flash(kind, 200, 32, 64, 48, 64 * 1024, true);
    REQUIRE_FALSE(spill_plan(resolve_workload(spill)).active);
    const auto a = make_workload(plain), b = make_workload(spill);
    REQUIRE(a->info().tensors.size() == b->info().tensors.size());
    REQUIRE(a->kernels().size() == b->kernels().size());
    for (std::size_t k = 0; k < a->kernels().size(); ++k) {
      REQUIRE(a->kernels()[k].smem_bytes_per_cta == b->kernels()[k].smem_bytes_per_cta);
      for (std::uint64_t c = 0; c < a->kernels()[k].ctas; ++c) {
        std::vector<Op> ops_a, ops_b;
        Recorder ra(ops_a), rb(ops_b);
        a->emit_cta(k, c, ra);
        b->emit_cta(k, c, rb);
        REQUIRE(ops_a == ops_b);
      }
    }
    // Without a flag the parameter list is unchanged; with it, allow_spill is recorded.
    const auto named = resolve_workload(plain).named();
    for (const auto& [key, value] : named) CHECK(key != "allow_spill");
    bool recorded = false;
    for (const auto& [key, value] : resolve_workload(spill).named()) {
      recorded = recorded || (key == "allow_spill" && value == "1");
    }
    CHECK(recorded);
  }
}

TEST_CASE("allow_spill is dropped where there is nothing to spill against", "[spill]") {
  WorkloadParams no_limit = flash(WorkloadKind::flash2, 256, 64, 256, 256, 0, true);
  no_limit.smem_limit_bytes.reset();
  CHECK_FALSE(resolve_workload(no_limit).allow_spill);
  WorkloadParams naive = flash(WorkloadKind::naive, 256, 64, 64, 64, 1 << 20, true);
  CHECK_FALSE(resolve_workload(naive).allow_spill);
  for (const auto& [key, value] : resolve_workload(no_limit).named()) CHECK(key != "allow_spill");
}

TEST_CASE("A spilling kernel's ops move exactly the closed-form bytes, spill included", "[spill]") {
  struct Case {
    std::uint64_t n, d;
    std::uint32_t bq, bkv;
    std::uint64_t limit;
  };
  const Case cases[] = {
      {256, 64, 128, 128, 40 * 1024},  // Q kept, K/V partly, no score row
      {200, 64, 64, 48, 18 * 1024},  // N divisible by neither block
      {97, 32, 64, 64, 9 * 1024},  // odd N, partial Q and K/V edge tiles
      {300, 32, 64, 64, 2000},  // Q partly spilled, nothing else fits
      {128, 64, 64, 64, 100},  // not one row fits: everything spilled
      {256, 64, 64, 16, 12000},  // fp16: Q kept, K/V partly, some score rows kept
  };
  for (const Case& c : cases) {
    for (WorkloadKind kind : {WorkloadKind::flash1, WorkloadKind::flash2}) {
      for (Dtype dtype : {Dtype::fp16, Dtype::fp32}) {
        WorkloadParams p = flash(kind, c.n, c.d, c.bq, c.bkv, c.limit, true);
        p.dtype = dtype;
        INFO(to_string(kind) << " " << to_string(dtype) << " N=" << c.n << " d=" << c.d
                             << " limit=" << c.limit);
        const WorkloadParams r = resolve_workload(p);
        REQUIRE(spill_plan(r).active);
        REQUIRE(spill_bytes(p) > 0);
        require_ops_match_closed_form(p);
        // The forward kernel declares the limit as its shared memory.
        CHECK(make_workload(p)->kernels().back().smem_bytes_per_cta == c.limit);
        // A trace header's parameters give the same closed form.
        CHECK(closed_form_traffic(params_from_named(r.named())).read_bytes ==
              closed_form_traffic(p).read_bytes);
      }
    }
  }
}

TEST_CASE("The plan keeps whole rows in the order Q, K/V, scores", "[spill]") {
  // flash2 fp16 d = 64 (128 B rows), 2 stages: 64 Q rows take 8192 B of 12000; the K/V buffers
  // take 4·128 B per kept row: 7 rows (3584 B); the 224 B left hold 7 score rows of 16·2 B.
  const SpillPlan f2 =
      spill_plan(resolve_workload(flash(WorkloadKind::flash2, 256, 64, 64, 16, 12000, true)));
  CHECK(f2.q_keep_rows == 64);
  CHECK(f2.kv_keep_rows == (12000 - 8192) / (4 * 128));
  CHECK(f2.score_keep_rows == (12000 - 8192 - 7 * 4 * 128) / (16 * 2));
  // flash1 has one K/V buffer pair: 2·128 B per kept row.
  const SpillPlan f1 =
      spill_plan(resolve_workload(flash(WorkloadKind::flash1, 256, 64, 64, 16, 12000, true)));
  CHECK(f1.kv_keep_rows == (12000 - 8192) / (2 * 128));
  CHECK(f1.score_keep_rows == (12000 - 8192 - f1.kv_keep_rows * 2 * 128) / (16 * 2));
}

TEST_CASE("Spill grows as the blocks grow beyond the limit", "[spill]") {
  // Larger K/V blocks: more K/V and score bytes per CTA with no room, and more spill traffic.
  // Larger Q blocks: more of each CTA spilled; the traffic need not grow (fewer CTAs re-read K/V).
  const std::uint64_t limit = 16 * 1024;
  for (WorkloadKind kind : {WorkloadKind::flash1, WorkloadKind::flash2}) {
    std::uint64_t previous = 0, previous_scratch = 0;
    for (std::uint32_t bkv : {64u, 96u, 128u, 192u, 256u}) {
      const WorkloadParams p = flash(kind, 512, 64, 64, bkv, limit, true);
      const std::uint64_t bytes = spill_bytes(p);
      const std::uint64_t scratch = spill_plan(resolve_workload(p)).scratch_elements;
      INFO(to_string(kind) << " block_kv " << bkv);
      CHECK(bytes > previous);
      CHECK(scratch > previous_scratch);
      previous = bytes;
      previous_scratch = scratch;
    }
    previous_scratch = 0;
    for (std::uint32_t bq : {64u, 128u, 192u, 256u, 512u}) {
      const WorkloadParams p = flash(kind, 512, 64, bq, 64, limit, true);
      const std::uint64_t scratch = spill_plan(resolve_workload(p)).scratch_elements;
      INFO(to_string(kind) << " block_q " << bq);
      CHECK(scratch > previous_scratch);
      previous_scratch = scratch;
    }
  }
}

TEST_CASE("When no row fits, the score tile round-trips like naive attention's S and P",
          "[spill]") {
  // Limit below one row: every Q, K/V and score row is spilled (SS = N), so the score terms are
  // 2N² elements read and 2N² written per head: naive attention's S and P traffic.
  const std::uint64_t n = 128, d = 32, bh = 2, s = 2;
  for (WorkloadKind kind : {WorkloadKind::flash1, WorkloadKind::flash2}) {
    const WorkloadParams p = resolve_workload(flash(kind, n, d, 32, 32, 16, true));
    const SpillPlan plan = spill_plan(p);
    REQUIRE(plan.q_keep_rows == 0);
    REQUIRE(plan.kv_keep_rows == 0);
    REQUIRE(plan.score_keep_rows == 0);
    const Traffic naive = algorithm0_traffic(bh, n, d, s);
    const std::uint64_t sp_naive = naive.find("S")->write_bytes + naive.find("P")->write_bytes;
    const TensorTraffic t = spill_traffic(p);
    // The Q and K/V round trips come on top of the score terms (closed form in closed_forms.h).
    const std::uint64_t tr = n / 32, tc = n / 32;
    const std::uint64_t q_read = tc * d * n, kv_read = 2 * tr * d * n;
    CHECK(t.read_bytes == bh * s * (q_read + kv_read) + sp_naive);
    CHECK(t.read_bytes >= sp_naive);
    CHECK(t.write_bytes >= sp_naive);
  }
}

TEST_CASE("Spilled rows go through global memory and the output stays exact", "[spill]") {
  struct Case {
    std::uint64_t n, d;
    std::uint32_t bq, bkv;
    std::uint64_t limit;
  };
  const Case cases[] = {
      {200, 32, 64, 48, 6 * 1024},  // Q kept, K/V partly spilled, scores spilled
      {97, 16, 32, 32, 700},  // partial Q
      {64, 16, 32, 16, 16},  // nothing fits
      {256, 64, 64, 16, 12000},  // score rows partly kept
  };
  for (const Case& c : cases) {
    for (WorkloadKind kind : {WorkloadKind::flash1, WorkloadKind::flash2}) {
      const WorkloadParams p = flash(kind, c.n, c.d, c.bq, c.bkv, c.limit, true);
      INFO(to_string(kind) << " N=" << c.n << " limit=" << c.limit);
      REQUIRE(spill_plan(resolve_workload(p)).active);
      const VerifyResult r = verify_workload(p, 7);
      CHECK(r.max_abs_error <= 1e-10);
      // The scratch really holds spilled values (it is not left at zero).
      const auto w = make_workload(p);
      EigenBackend data = w->make_data(7);
      w->compute_all(data);
      CHECK(data.t(w->tensor_id("spill")).cwiseAbs().maxCoeff() > 0.0);
    }
  }
}
