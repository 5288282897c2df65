// Parameters are validated with one clear error naming the parameter; defaults follow the contract.
#include <catch2/catch.hpp>

#include "models/workload.h"
#include "sim/core/error.h"

using namespace memwall;

namespace {

std::string error_of(const WorkloadParams& p) {
  try {
    resolve_workload(p);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("A zero shape or tile is rejected naming the parameter", "[params]") {
  WorkloadParams p;
  p.seq = 0;
  REQUIRE_THAT(error_of(p), Catch::Contains("seq"));
  p = WorkloadParams{};
  p.head_dim = 0;
  REQUIRE_THAT(error_of(p), Catch::Contains("head_dim"));
  p = WorkloadParams{};
  p.block_q = 0;
  REQUIRE_THAT(error_of(p), Catch::Contains("block_q"));
  p = WorkloadParams{};
  p.workload = WorkloadKind::gemm;
  p.tile_k = 0;
  REQUIRE_THAT(error_of(p), Catch::Contains("tile_k"));
}

TEST_CASE("naive softmax takes at most 32 rows per CTA (one warp each)", "[params]") {
  WorkloadParams p;
  p.workload = WorkloadKind::naive;
  p.softmax_rows = 33;
  REQUIRE_THAT(error_of(p), Catch::Contains("softmax_rows must be <= 32"));
  p.softmax_rows = 32;
  REQUIRE(error_of(p).empty());
}

TEST_CASE("Byte counts that would overflow 64 bits are rejected", "[params]") {
  WorkloadParams p;
  p.workload = WorkloadKind::naive;
  p.batch = 1u << 20;
  p.heads = 1u << 20;
  p.seq = 1u << 20;
  REQUIRE_THAT(error_of(p), Catch::Contains("overflows 64 bits"));
}

TEST_CASE("A tiling whose shared memory exceeds the per-CTA limit is rejected with what fits",
          "[params]") {
  WorkloadParams p;
  p.workload = WorkloadKind::flash2;
  p.head_dim = 128;
  p.smem_limit_bytes = 64 * 1024;  // Q 128×128×2 + 2 stages × (K + V) 64×128×2 = 96 KiB
  REQUIRE_THAT(error_of(p), Catch::Contains("flash2_fwd") && Catch::Contains("98304"));
  p.stages = 1;  // 32 KiB + 32 KiB = 64 KiB fits
  REQUIRE(error_of(p).empty());

  WorkloadParams n;
  n.workload = WorkloadKind::naive;
  n.seq = 16384;
  n.smem_limit_bytes = 100 * 1024;  // 4 rows × 32 KiB do not fit; 3 do
  n.softmax_chunk = 0;  // rows kept in shared memory (by default they would stream)
  REQUIRE_THAT(error_of(n), Catch::Contains("softmax_rows <= 3"));
}

TEST_CASE("flash1 without block sizes needs the SRAM size", "[params]") {
  WorkloadParams p;
  p.workload = WorkloadKind::flash1;
  REQUIRE_THAT(error_of(p), Catch::Contains("sram_bytes"));
  p.block_q = 64;
  p.block_kv = 64;
  REQUIRE(error_of(p).empty());
}

TEST_CASE("flash2's default blocks are 128×128 for d <= 64 and 128×64 above", "[params]") {
  WorkloadParams p;
  p.head_dim = 64;
  WorkloadParams r = resolve_workload(p);
  REQUIRE((*r.block_q == 128 && *r.block_kv == 128 && *r.stages == 2));
  p.head_dim = 128;
  r = resolve_workload(p);
  REQUIRE((*r.block_q == 128 && *r.block_kv == 64));
}

TEST_CASE("Each CTA's ops depend on its index alone and cover the grid in order", "[params]") {
  WorkloadParams p;
  p.workload = WorkloadKind::naive;
  p.seq = 300;
  const auto w = make_workload(p);
  REQUIRE(w->kernels().size() == 3);
  REQUIRE(w->kernels()[0].name == "qk");
  REQUIRE(w->kernels()[0].ctas == ceil_div(300, 128) * ceil_div(300, 128));
  REQUIRE(w->kernels()[1].ctas == ceil_div(300, 4));
  REQUIRE(w->kernels()[2].ctas == ceil_div(300, 128));
  std::vector<Op> a, b;
  Recorder ra(a), rb(b);
  w->emit_cta(0, 5, ra);
  w->emit_cta(0, 5, rb);
  REQUIRE(a == b);
  // The last qk CTA (i = j = 2) loads the partial Q and K blocks of 300 − 256 = 44 rows.
  a.clear();
  w->emit_cta(0, w->kernels()[0].ctas - 1, ra);
  REQUIRE(a[0].kind == OpKind::load);
  REQUIRE(a[0].box.rows == 44);
  REQUIRE(a[0].box.row_bytes == 64 * 2);
}

TEST_CASE("Tensors are separate allocations aligned to 256 bytes", "[params]") {
  WorkloadParams p;
  p.workload = WorkloadKind::flash2;
  p.seq = 77;
  p.head_dim = 24;
  const auto w = make_workload(p);
  std::uint64_t end = 0;
  for (const TensorInfo& t : w->info().tensors) {
    REQUIRE(t.base % kTensorAlignment == 0);
    REQUIRE(t.base >= end);
    end = t.base + t.bytes;
  }
}
