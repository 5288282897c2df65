// Naive attention's softmax streams rows too long for shared memory (issue 18, finding 22):
// the default follows the config's per-CTA shared memory, the streamed kernel's ops move exactly
// its closed form (S read twice), and its online max and sum give the full softmax.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/closed_forms.h"
#include "models/model_source.h"
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

TEST_CASE(
    "The streamed softmax's warp instructions equal the H200's smsp__inst_executed, and it reads "
    "S twice from DRAM at lengths whose rows the L2 cannot keep",
    "[naive][measured]") {
  // traces/measured/h200-softmax-stream.csv: naive_softmax_stream_kernel under Nsight Compute
  // (its README says how it was measured); DRAM bytes there are ncu's Gbyte, to 3 digits.
  std::ifstream in("traces/measured/h200-softmax-stream.csv");
  REQUIRE(in);
  std::string line;
  std::getline(in, line);
  REQUIRE(line ==
          "batch,heads,seq,head_dim,softmax_rows,kernel,inst_executed,dram_read_gbyte,"
          "dram_write_gbyte,ncu_time_ms,time_s");
  int rows_read = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> cell;
    std::stringstream fields(line);
    for (std::string c; std::getline(fields, c, ',');) cell.push_back(c);
    REQUIRE(cell.size() == 11);
    WorkloadParams p = naive(std::stoull(cell[2]), std::stoull(cell[3]));
    p.batch = std::stoull(cell[0]);
    p.heads = std::stoull(cell[1]);
    p.softmax_rows = static_cast<std::uint32_t>(std::stoul(cell[4]));
    p.softmax_chunk = 1024;  // what the H200 preset's 227 KiB per CTA resolves to at this N
    INFO(line);
    // The model's issue ops of the softmax launch, pulled from its op stream.
    const auto source = make_model_source(p);
    KernelInfo kernel;
    std::vector<Op> ops;
    std::uint64_t issued = 0;
    while (source->next_kernel(kernel)) {
      if (kernel.name != "softmax") continue;
      while (source->next_cta(ops)) {
        for (const Op& op : ops) {
          if (op.kind == OpKind::compute && op.unit == ComputeUnit::issue) issued += op.amount;
        }
      }
    }
    CHECK(issued == std::stoull(cell[6]));
    const double score = static_cast<double>(p.batch * p.heads * p.seq * p.seq) * 2;
    CHECK(std::stod(cell[7]) * 1e9 == Approx(2 * score).epsilon(0.01));  // S read twice
    CHECK(std::stod(cell[8]) * 1e9 == Approx(score).epsilon(0.01));  // P written once
    ++rows_read;
  }
  REQUIRE(rows_read == 2);
}
