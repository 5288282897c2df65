// The closed forms of models/closed_forms.h equal, exactly, the bytes the kernels' ops move.
#include <catch2/catch.hpp>

#include "models/closed_forms.h"
#include "models/flash1.h"
#include "models/model_source.h"
#include "models/workload.h"
#include "tests/models/closed_form_check.h"
#include "traces/traffic_counter.h"

using namespace memwall;

namespace {

WorkloadParams attention(WorkloadKind kind, std::uint64_t bh_batch, std::uint64_t heads,
                         std::uint64_t n, std::uint64_t d) {
  WorkloadParams p;
  p.workload = kind;
  p.batch = bh_batch;
  p.heads = heads;
  p.seq = n;
  p.head_dim = d;
  return p;
}

using test::require_ops_match_closed_form;

}  // namespace

TEST_CASE("Each attention workload's ops move exactly its closed-form bytes", "[closed_forms]") {
  struct Shape {
    std::uint64_t b, h, n, d;
    std::uint32_t bq, bkv, bk, stages, rows;
  };
  const Shape shapes[] = {
      {1, 1, 256, 64, 128, 128, 64, 2, 4},  // tiles divide N
      {2, 3, 200, 64, 64, 48, 40, 3, 3},  // N divisible by none of the blocks
      {1, 2, 97, 32, 32, 16, 24, 1, 5},  // odd N, single stage
      {1, 1, 300, 128, 128, 64, 64, 2, 4},  // default flash2 tiling for d = 128
  };
  for (const Shape& s : shapes) {
    for (WorkloadKind kind : {WorkloadKind::naive, WorkloadKind::flash1, WorkloadKind::flash2}) {
      for (Dtype dtype : {Dtype::fp16, Dtype::fp32}) {
        WorkloadParams p = attention(kind, s.b, s.h, s.n, s.d);
        p.dtype = dtype;
        p.block_q = s.bq;
        p.block_kv = s.bkv;
        if (kind == WorkloadKind::naive) {
          p.block_k = s.bk;
          p.softmax_rows = s.rows;
        }
        if (kind == WorkloadKind::flash2) p.stages = s.stages;
        INFO(to_string(kind) << " " << to_string(dtype) << " B=" << s.b << " H=" << s.h
                             << " N=" << s.n << " d=" << s.d);
        require_ops_match_closed_form(p);
      }
    }
  }
}

TEST_CASE("flash1 with block sizes from the SRAM size moves its closed-form bytes",
          "[closed_forms]") {
  WorkloadParams p = attention(WorkloadKind::flash1, 1, 2, 333, 64);
  p.sram_bytes = 48 * 1024;
  require_ops_match_closed_form(p);
  const WorkloadParams r = resolve_workload(p);
  const std::uint64_t m_elems = *p.sram_bytes / 2;
  REQUIRE(*r.block_kv == ceil_div(m_elems, 4 * 64));
  REQUIRE(*r.block_q == std::min<std::uint64_t>(ceil_div(m_elems, 4 * 64), 64));
}

TEST_CASE("gemm's ops move s·(MK·⌈N/tile_n⌉ + KN·⌈M/tile_m⌉) read and s·MN written",
          "[closed_forms]") {
  struct Shape {
    std::uint64_t m, n, k;
    std::uint32_t tm, tn, tk;
  };
  for (const Shape& s : {Shape{256, 256, 256, 128, 128, 32}, Shape{300, 170, 99, 64, 48, 40},
                         Shape{17, 1000, 33, 128, 128, 32}}) {
    WorkloadParams p;
    p.workload = WorkloadKind::gemm;
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.tile_m = s.tm;
    p.tile_n = s.tn;
    p.tile_k = s.tk;
    require_ops_match_closed_form(p);
    const Traffic t = closed_form_traffic(p);
    REQUIRE(t.read_bytes ==
            2 * (s.m * s.k * ceil_div(s.n, s.tn) + s.k * s.n * ceil_div(s.m, s.tm)));
    REQUIRE(t.write_bytes == 2 * s.m * s.n);
  }
}

TEST_CASE("naive moves Algorithm 0's 3Nd + 2N² read and 2N² + Nd written when tiles cover N",
          "[closed_forms]") {
  for (std::uint64_t n : {64, 100, 128}) {
    const std::uint64_t d = 32, s = 2, bh = 3;
    WorkloadParams p = attention(WorkloadKind::naive, 1, bh, n, d);
    p.block_q = 128;
    p.block_kv = 128;
    const TraceCounts counts = count_traffic(*make_model_source(p));
    REQUIRE(counts.read_bytes == bh * s * (3 * n * d + 2 * n * n));
    REQUIRE(counts.write_bytes == bh * s * (2 * n * n + n * d));
    const Traffic a0 = algorithm0_traffic(bh, n, d, 2);
    REQUIRE(counts.read_bytes == a0.read_bytes);
    REQUIRE(counts.write_bytes == a0.write_bytes);
  }
}

TEST_CASE("flash2's per-head traffic is Nd + 2Nd·⌈N/Br⌉ read and Nd + 4N bytes written",
          "[closed_forms]") {
  const std::uint64_t n = 1000, d = 64, s = 2, br = 128;
  WorkloadParams p = attention(WorkloadKind::flash2, 1, 1, n, d);
  p.block_q = br;
  const TraceCounts counts = count_traffic(*make_model_source(p));
  REQUIRE(counts.read_bytes == s * (n * d + 2 * n * d * ceil_div(n, br)));
  REQUIRE(counts.write_bytes == s * n * d + 4 * n);
}

TEST_CASE("flash1 counts the initialisation of O, l and m as writes", "[closed_forms]") {
  WorkloadParams p = attention(WorkloadKind::flash1, 1, 2, 500, 64);
  p.block_q = 64;
  p.block_kv = 96;
  const WorkloadParams r = resolve_workload(p);
  const Traffic with = flash1_traffic(r, true);
  const Traffic without = flash1_traffic(r, false);
  REQUIRE(with.read_bytes == without.read_bytes);
  REQUIRE(with.write_bytes - without.write_bytes == 2 * (500 * 64 * 2 + 2 * 500 * 4));
}
