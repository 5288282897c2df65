// The backward workloads (flash2-bwd, naive-bwd): their ops move exactly their closed-form bytes,
// their gradients equal a plainly derived reference, which itself agrees with finite differences
// of the forward, and the closed forms equal their step-by-step derivations.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "models/closed_forms.h"
#include "models/model_source.h"
#include "models/reference.h"
#include "models/workload.h"
#include "sim/core/error.h"
#include "tests/models/closed_form_check.h"

using namespace memwall;
using test::require_ops_match_closed_form;

namespace {

struct Shape {
  std::uint64_t batch, heads, kv_heads, seq, seq_kv, d;
  bool causal;
  std::uint32_t block_q, block_kv;
};

WorkloadParams params_of(WorkloadKind kind, const Shape& v) {
  WorkloadParams p;
  p.workload = kind;
  p.batch = v.batch;
  p.heads = v.heads;
  p.kv_heads = v.kv_heads;
  p.seq = v.seq;
  p.seq_kv = v.seq_kv;
  p.causal = v.causal;
  p.head_dim = v.d;
  p.block_q = v.block_q;
  p.block_kv = v.block_kv;
  if (kind == WorkloadKind::naive_bwd) {
    p.block_k = 24;
    p.softmax_rows = 3;
  }
  return p;
}

const Shape kShapes[] = {
    {1, 2, 2, 200, 200, 32, false, 64, 48},  // blocks divide nothing
    {1, 2, 2, 200, 200, 32, true, 64, 64},  // causal
    {2, 4, 2, 97, 97, 16, true, 32, 16},  // causal, grouped, odd N
    {1, 4, 1, 50, 333, 32, true, 16, 48},  // Nkv > Nq, bottom-right mask, multi-query
    {1, 2, 2, 150, 90, 32, false, 64, 32},  // Nkv < Nq
};

const TensorTraffic& tensor(const Traffic& t, const std::string& name) {
  const TensorTraffic* x = t.find(name);
  REQUIRE(x != nullptr);
  return *x;
}

}  // namespace

TEST_CASE("Each backward workload's ops move exactly its closed-form bytes", "[backward]") {
  for (const Shape& v : kShapes) {
    for (WorkloadKind kind : {WorkloadKind::flash2_bwd, WorkloadKind::naive_bwd}) {
      for (Dtype dtype : {Dtype::fp16, Dtype::fp32}) {
        WorkloadParams p = params_of(kind, v);
        p.dtype = dtype;
        INFO(to_string(kind) << " " << to_string(dtype) << " H=" << v.heads << " Hkv=" << v.kv_heads
                             << " Nq=" << v.seq << " Nkv=" << v.seq_kv << " causal=" << v.causal);
        require_ops_match_closed_form(p);
      }
    }
  }
}

TEST_CASE("Each backward workload's dQ, dK, dV equal the plainly derived gradients",
          "[backward][numerics]") {
  for (const Shape& v : kShapes) {
    for (WorkloadKind kind : {WorkloadKind::flash2_bwd, WorkloadKind::naive_bwd}) {
      INFO(to_string(kind) << " H=" << v.heads << " Hkv=" << v.kv_heads << " Nq=" << v.seq
                           << " Nkv=" << v.seq_kv << " causal=" << v.causal);
      const VerifyResult r = verify_workload(params_of(kind, v), 11);
      CHECK(r.output == "dQ, dK, dV");
      CHECK(r.max_abs_error < 1e-12);
    }
  }
}

TEST_CASE("The gradient reference agrees with central finite differences of the forward",
          "[backward][numerics]") {
  // f = Σ dO∘O(Q, K, V) with O the masked softmax attention; ∂f/∂x ≈ (f(x + h) − f(x − h))/2h.
  for (const bool causal : {false, true}) {
    const WorkloadParams p =
        resolve_workload(params_of(WorkloadKind::flash2_bwd, {1, 2, 1, 5, 7, 4, causal, 64, 64}));
    const auto w = make_workload(p);
    EigenBackend data = w->make_data(5);
    const auto grads = attention_grad_reference(*w, data);
    const std::uint8_t dout = w->tensor_id("dO");
    const auto f = [&](EigenBackend& x) {
      return attention_reference(*w, x).cwiseProduct(x.t(dout)).sum();
    };
    const double h = 1e-5;
    const char* names[] = {"Q", "K", "V"};
    for (std::size_t g = 0; g < 3; ++g) {
      const std::uint8_t id = w->tensor_id(names[g]);
      for (Eigen::Index r = 0; r < data.t(id).rows(); ++r) {
        for (Eigen::Index c = 0; c < data.t(id).cols(); ++c) {
          INFO(names[g] << "(" << r << ", " << c << ") causal=" << causal);
          const double x = data.t(id)(r, c);
          data.t(id)(r, c) = x + h;
          const double up = f(data);
          data.t(id)(r, c) = x - h;
          const double down = f(data);
          data.t(id)(r, c) = x;
          CHECK(grads[g](r, c) == Approx((up - down) / (2 * h)).margin(1e-8));
        }
      }
    }
  }
}

TEST_CASE("flash2-bwd visits, per K/V block, the Q blocks at or below the diagonal",
          "[backward][closed_forms]") {
  // N = T·B, Br = Bc = B: K/V block j is seen by Q blocks j..T−1, (T − j)·B rows; Σ = B·T(T+1)/2.
  // Without the mask every block sees all N rows: T·N.
  const std::uint64_t n = 512, b = 64, d = 64, s = 2, t = n / b, bh = 3;
  WorkloadParams p = params_of(
      WorkloadKind::flash2_bwd,
      {1, bh, bh, n, n, d, true, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b)});
  const Traffic causal = closed_form_traffic(p);
  const std::uint64_t rows = b * t * (t + 1) / 2;
  CHECK(tensor(causal, "Q").read_bytes == bh * rows * d * s);
  CHECK(tensor(causal, "dQ_accum").write_bytes == bh * (n + rows) * d * 4);  // cleared, then added
  CHECK(tensor(causal, "K").read_bytes == bh * n * d * s);  // each K/V block loaded once
  p.causal = false;
  const Traffic full = closed_form_traffic(p);
  CHECK(tensor(full, "Q").read_bytes == bh * t * n * d * s);
  CHECK(tensor(full, "L").read_bytes == bh * t * n * 4);
}

TEST_CASE("Grouped backward passes write dK, dV per query head and sum each group",
          "[backward][closed_forms]") {
  for (WorkloadKind kind : {WorkloadKind::flash2_bwd, WorkloadKind::naive_bwd}) {
    INFO(to_string(kind));
    const std::uint64_t h = 8, hkv = 2, n = 256, d = 64, s = 2;
    const WorkloadParams p = resolve_workload(params_of(kind, {1, h, hkv, n, n, d, false, 64, 64}));
    const Traffic t = closed_form_traffic(p);
    CHECK(tensor(t, "dK_expanded").write_bytes == h * n * d * s);
    CHECK(tensor(t, "dK_expanded").read_bytes == h * n * d * s);
    CHECK(tensor(t, "dK").write_bytes == hkv * n * d * s);
    const auto launches = kernel_launches(p);
    CHECK(launches.back().ctas == hkv * ceil_div(n, 64));
    // Without groups there is nothing to sum.
    const WorkloadParams mha = resolve_workload(params_of(kind, {1, h, h, n, n, d, false, 64, 64}));
    CHECK(closed_form_traffic(mha).find("dK_expanded") == nullptr);
  }
}

TEST_CASE("naive-bwd moves P twice, dP and dS through global memory, N² each way",
          "[backward][closed_forms]") {
  const std::uint64_t n = 256, d = 64, s = 2;
  const Traffic t =
      closed_form_traffic(params_of(WorkloadKind::naive_bwd, {1, 1, 1, n, n, d, true, 128, 128}));
  CHECK(tensor(t, "P").read_bytes == 2 * n * n * s);
  CHECK(tensor(t, "dP").read_bytes == n * n * s);
  CHECK(tensor(t, "dP").write_bytes == n * n * s);
  CHECK(tensor(t, "dS").read_bytes == 2 * n * n * s);
  CHECK(tensor(t, "dS").write_bytes == n * n * s);
}

TEST_CASE("A backward of a workload that has none is one clear error", "[backward][errors]") {
  CHECK_THROWS_WITH(
      parse_workload_kind("flash1-bwd"),
      Catch::Contains("flash1-bwd is not provided") && Catch::Contains("naive-bwd, flash2-bwd"));
  CHECK(parse_workload_kind("flash2-bwd") == WorkloadKind::flash2_bwd);
}
