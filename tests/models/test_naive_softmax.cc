// Naive attention's softmax streams rows too long for shared memory (issue 18, finding 22):
// the default follows the config's per-CTA shared memory, the streamed kernel's ops move exactly
// its closed form (S read twice), and its online max and sum give the full softmax.
#include <catch2/catch.hpp>

#include <string>

#include "models/closed_forms.h"
#include "models/reference.h"
#include "models/workload.h"
#include "sim/core/error.h"
#include "tests/models/closed_form_check.h"

using namespace memwall;
using test::require_ops_match_closed_form;

namespace {

WorkloadParams naive(std::uint64_t seq, std::uint64_t d) {
  WorkloadParams p;
  p.workload = WorkloadKind::naive;
  p.heads = 2;
  p.seq = seq;
  p.head_dim = d;
  return p;
}

std::string listed(const WorkloadParams& resolved, const std::string& name) {
  for (const auto& [key, value] : resolved.named()) {
    if (key == name) return value;
  }
  return "";
}

}  // namespace

TEST_CASE(
    "Finding 22: the softmax keeps rows in shared memory where they fit and streams them "
    "where they do not",
    "[naive][first-hour]") {
  WorkloadParams p = naive(16384, 64);
  p.smem_limit_bytes = 4 * 16384 * 2;  // softmax_rows (4) rows of S exactly
  WorkloadParams r = resolve_workload(p);
  REQUIRE(*r.softmax_chunk == 0);
  REQUIRE(listed(r, "softmax_chunk").empty());  // unlisted: reports and traces as before
  REQUIRE(kernel_launches(r)[1].smem_bytes_per_cta == *p.smem_limit_bytes);

  p.smem_limit_bytes = *p.smem_limit_bytes - 1;
  r = resolve_workload(p);
  REQUIRE(*r.softmax_chunk == 1024);
  REQUIRE(listed(r, "softmax_chunk") == "1024");
  REQUIRE(kernel_launches(r)[1].smem_bytes_per_cta == 0);

  // Asked to keep the rows in shared memory, the old refusal stands and names the way out.
  p.softmax_chunk = 0;
  try {
    resolve_workload(p);
    FAIL("expected a UsageError");
  } catch (const UsageError& e) {
    REQUIRE_THAT(e.what(),
                 Catch::Contains("softmax_rows <= 3") && Catch::Contains("--softmax-chunk 1024"));
  }
  // Without a limit (no config), the rows stay in shared memory.
  REQUIRE(*resolve_workload(naive(1 << 20, 64)).softmax_chunk == 0);
}

TEST_CASE("The streamed softmax's ops move its closed form: S read twice, P written once",
          "[naive][closed_forms]") {
  struct Case {
    std::uint64_t seq, seq_kv, heads, kv_heads;
    bool causal;
    std::uint32_t chunk, rows;
    Dtype dtype;
  };
  for (const Case& c :
       {Case{256, 256, 2, 2, false, 64, 4, Dtype::fp16},  // chunks divide N
        Case{200, 200, 2, 2, false, 48, 3, Dtype::fp32},  // partial chunk and rows
        Case{97, 300, 4, 2, true, 1024, 5, Dtype::fp16}}) {  // one chunk, GQA, causal
    WorkloadParams p = naive(c.seq, 32);
    p.seq_kv = c.seq_kv;
    p.heads = c.heads;
    p.kv_heads = c.kv_heads;
    p.causal = c.causal;
    p.softmax_chunk = c.chunk;
    p.softmax_rows = c.rows;
    p.dtype = c.dtype;
    INFO("N=" << c.seq << " Nkv=" << c.seq_kv << " chunk=" << c.chunk);
    require_ops_match_closed_form(p);
    WorkloadParams whole = p;
    whole.softmax_chunk = 0;
    const Traffic streamed = closed_form_traffic(p), kept = closed_form_traffic(whole);
    const std::uint64_t score = c.heads * c.seq * c.seq_kv * element_bytes(c.dtype);
    REQUIRE(streamed.read_bytes == kept.read_bytes + score);
    REQUIRE(streamed.write_bytes == kept.write_bytes);
  }
}

TEST_CASE("The streamed softmax's online max and sum equal the full softmax to 1e-10",
          "[naive][numerics]") {
  for (const bool causal : {false, true}) {
    for (const std::uint32_t chunk : {8u, 13u, 1024u}) {
      WorkloadParams p = naive(70, 16);
      p.causal = causal;
      p.softmax_chunk = chunk;
      p.block_q = 32;
      p.block_kv = 16;
      p.block_k = 24;
      const auto w = make_workload(p);
      EigenBackend data = w->make_data(11);
      // Row 0's maximum arrives in the last chunk (key 69 is made large along row 0 of Q), so a
      // sum that is not rescaled when the maximum grows would be wrong.
      data.t(w->tensor_id("Q")).row(0).setConstant(1.0);
      data.t(w->tensor_id("K")).row(69).setConstant(3.0);
      w->compute_all(data);
      INFO("causal=" << causal << " chunk=" << chunk);
      REQUIRE((data.t(output_tensor(*w)) - reference_output(*w, data)).cwiseAbs().maxCoeff() <
              1e-10);
    }
  }
}
