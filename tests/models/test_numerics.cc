// The kernels, run on real data with the Eigen backend, compute attention (and gemm) exactly.
#include <catch2/catch.hpp>

#include <cmath>

#include "models/reference.h"
#include "models/workload.h"
#include "sim/core/error.h"

using namespace memwall;

namespace {

WorkloadParams attention(WorkloadKind kind, std::uint64_t heads, std::uint64_t n, std::uint64_t d,
                         std::uint32_t bq, std::uint32_t bkv) {
  WorkloadParams p;
  p.workload = kind;
  p.batch = 1;
  p.heads = heads;
  p.seq = n;
  p.head_dim = d;
  p.block_q = bq;
  p.block_kv = bkv;
  return p;
}

/// Runs `p` on `data` and returns max |O − reference|.
double error_on(const WorkloadParams& p, std::uint64_t seed, bool late_max) {
  const auto w = make_workload(p);
  EigenBackend data = w->make_data(seed);
  if (late_max) {
    // Row 0 of Q points along the last key, which is made large: the maximum of score row 0
    // arrives in the last K/V tile, so an unrescaled accumulation over-weights earlier tiles.
    auto& q = data.t(w->tensor_id("Q"));
    auto& k = data.t(w->tensor_id("K"));
    const auto last = static_cast<Eigen::Index>(p.seq - 1);
    q.row(0).setConstant(1.0);
    k.row(last).setConstant(2.0);
  }
  w->compute_all(data);
  return (data.t(output_tensor(*w)) - reference_output(*w, data)).cwiseAbs().maxCoeff();
}

}  // namespace

TEST_CASE("flash1, flash2 and naive equal softmax(QKᵀ·scale)V to 1e-10 in double", "[numerics]") {
  struct Shape {
    std::uint64_t h, n, d;
    std::uint32_t bq, bkv;
  };
  for (const Shape& s : {Shape{2, 128, 32, 32, 32}, Shape{1, 100, 16, 32, 24},
                         Shape{3, 77, 8, 16, 10}, Shape{1, 50, 64, 128, 128}}) {
    for (WorkloadKind kind : {WorkloadKind::naive, WorkloadKind::flash1, WorkloadKind::flash2}) {
      WorkloadParams p = attention(kind, s.h, s.n, s.d, s.bq, s.bkv);
      if (kind == WorkloadKind::naive) p.block_k = 20;
      INFO(to_string(kind) << " H=" << s.h << " N=" << s.n << " d=" << s.d);
      REQUIRE(error_on(p, 7 + s.n, false) < 1e-10);
    }
  }
}

TEST_CASE("flash2 computes the same output with any number of stages", "[numerics]") {
  for (std::uint32_t stages : {1u, 2u, 3u, 8u}) {
    WorkloadParams p = attention(WorkloadKind::flash2, 1, 90, 16, 32, 16);
    p.stages = stages;
    REQUIRE(error_on(p, 3, false) < 1e-10);
  }
}

TEST_CASE("Without the online-softmax rescale, a row whose maximum arrives late is wrong",
          "[numerics]") {
  for (WorkloadKind kind : {WorkloadKind::flash1, WorkloadKind::flash2}) {
    WorkloadParams p = attention(kind, 1, 96, 16, 32, 32);
    INFO(to_string(kind));
    REQUIRE(error_on(p, 5, true) < 1e-10);
    p.online_rescale = false;
    REQUIRE(error_on(p, 5, true) > 1e-3);
  }
}

TEST_CASE("gemm computes A·B to 1e-10", "[numerics]") {
  WorkloadParams p;
  p.workload = WorkloadKind::gemm;
  p.m = 70;
  p.n = 50;
  p.k = 45;
  p.tile_m = 32;
  p.tile_n = 16;
  p.tile_k = 20;
  REQUIRE(verify_workload(p).max_abs_error < 1e-10);
}

TEST_CASE("verify refuses a shape too large to compute in double", "[numerics]") {
  WorkloadParams p = attention(WorkloadKind::naive, 1, 4096, 64, 128, 128);
  REQUIRE_THROWS_AS(verify_workload(p, 1, 1024), UsageError);
}
