// A model generates its ops CTA by CTA; its trace file replays the same ops; pipelining shows.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "models/closed_forms.h"
#include "models/model_source.h"
#include "models/workload.h"
#include "tests/support/cli.h"
#include "traces/copy_trace.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

using namespace memwall;

namespace {

std::string temp_path(const std::string& name) { return memwall::test::temp_path("models", name); }

WorkloadParams small(WorkloadKind kind) {
  WorkloadParams p;
  p.workload = kind;
  p.batch = 2;
  p.heads = 2;
  p.seq = 200;
  p.head_dim = kind == WorkloadKind::flash3 ? 64 : 32;  // flash3's kernel: 64 or 128
  p.block_q = 64;
  p.block_kv = 48;
  p.m = 150;
  p.n = 130;
  p.k = 70;
  return p;
}

}  // namespace

TEST_CASE("A model's trace file replays exactly the model's kernels and ops", "[model_source]") {
  for (WorkloadKind kind : kAllWorkloads) {
    INFO(to_string(kind));
    const WorkloadParams p = small(kind);
    const std::string path = temp_path("replay.mwt");
    {
      const auto source = make_model_source(p);
      TraceWriter writer(path);
      copy_trace(*source, writer);
    }
    TraceReader reader(path);
    const auto model = make_model_source(p);
    REQUIRE(reader.workload() == model->workload());
    KernelInfo a, b;
    std::vector<Op> x, y;
    while (model->next_kernel(b)) {
      REQUIRE(reader.next_kernel(a));
      REQUIRE(a == b);
      while (model->next_cta(y)) {
        REQUIRE(reader.next_cta(x));
        REQUIRE(x == y);
      }
      REQUIRE_FALSE(reader.next_cta(x));
    }
    REQUIRE_FALSE(reader.next_kernel(a));
    std::filesystem::remove(path);
  }
}

TEST_CASE("The trace header's parameters give back the workload's parameters", "[model_source]") {
  for (WorkloadKind kind : kAllWorkloads) {
    WorkloadParams p = small(kind);
    if (kind == WorkloadKind::flash1) p.block_q.reset(), p.sram_bytes = 32 * 1024;
    const auto w = make_workload(p);
    const WorkloadParams back = resolve_workload(params_from_named(w->info().params));
    REQUIRE(back.named() == w->params().named());
  }
}

TEST_CASE("flash2 with stages > 1 issues the next K/V loads before waiting on the current",
          "[model_source]") {
  WorkloadParams p = small(WorkloadKind::flash2);
  p.stages = 3;
  const auto w = make_workload(p);
  std::vector<Op> ops;
  Recorder rec(ops);
  w->emit_cta(0, 0, rec);
  // Q (tag 0), then K/V of blocks 0, 1, 2 under tags 1, 2, 3, all before the first wait.
  REQUIRE(ops[0].kind == OpKind::load);
  REQUIRE(ops[0].tag == 0);
  for (int j = 0; j < 3; ++j) {
    REQUIRE(ops[1 + 2 * j].kind == OpKind::load);
    REQUIRE(ops[1 + 2 * j].tag == 1 + j);
    REQUIRE(ops[2 + 2 * j].tag == 1 + j);
  }
  // Then the CTA's warp instructions (an issue op) and their dependency chain (an asynchronous
  // latency op), then the first wait.
  REQUIRE(ops[7].kind == OpKind::compute);
  REQUIRE(ops[7].unit == ComputeUnit::issue);
  REQUIRE(ops[8].kind == OpKind::compute);
  REQUIRE(ops[8].unit == ComputeUnit::latency);
  REQUIRE(ops[8].tag != 0);
  REQUIRE(ops[9].kind == OpKind::wait);
  // Block 3 (tag 1 again) is issued only after block 0's wait on tag 1.
  std::size_t wait_tag1 = 0, load_block3 = 0;
  const std::uint64_t k_base = w->info().tensors[w->tensor_id("K")].base;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == OpKind::wait && ops[i].tag == 1 && wait_tag1 == 0) wait_tag1 = i;
    if (ops[i].kind == OpKind::load && ops[i].box.base == k_base + 3 * 48 * 32 * 2) load_block3 = i;
  }
  REQUIRE(wait_tag1 > 0);
  REQUIRE(load_block3 > wait_tag1);
  REQUIRE(ops[load_block3].tag == 1);

  p.stages = 1;  // no pipelining: every K/V load waits for the previous block
  const auto w1 = make_workload(p);
  ops.clear();
  w1->emit_cta(0, 0, rec);
  // Q, block 0's K and V, the issue and latency ops, then the wait.
  REQUIRE(ops[5].kind == OpKind::wait);
}

TEST_CASE("The source resumes nothing after its last kernel and skips unpulled CTAs",
          "[model_source]") {
  const auto source = make_model_source(small(WorkloadKind::naive));
  KernelInfo k;
  std::vector<Op> ops;
  REQUIRE_FALSE(source->next_cta(ops));  // before the first kernel
  REQUIRE(source->next_kernel(k));
  REQUIRE(k.name == "qk");
  REQUIRE(source->next_cta(ops));
  REQUIRE(source->next_kernel(k));
  REQUIRE(k.name == "softmax");
  REQUIRE(source->next_kernel(k));
  REQUIRE(k.name == "pv");
  REQUIRE_FALSE(source->next_kernel(k));
  REQUIRE_FALSE(source->next_kernel(k));
}

namespace {

/// The exit code of `memwall ARGS`.
int run(const std::string& args) { return memwall::test::run_memwall(args).code; }

}  // namespace

TEST_CASE("memwall trace --counts writes the counted bytes and the closed form as JSON", "[cli]") {
  const std::string json = temp_path("counts.json");
  REQUIRE(run("trace --workload naive --seq 300 --head-dim 32 --heads 2 --counts --json " + json) ==
          0);
  WorkloadParams p;
  p.workload = WorkloadKind::naive;
  p.seq = 300;
  p.head_dim = 32;
  p.heads = 2;
  const Traffic t = closed_form_traffic(p);
  const std::string text = memwall::test::slurp(json);
  REQUIRE_THAT(text, Catch::Contains("\"global_read_bytes\": " + std::to_string(t.read_bytes)));
  REQUIRE_THAT(text, Catch::Contains("\"global_write_bytes\": " + std::to_string(t.write_bytes)));
  const TensorTraffic* s = t.find("S");
  REQUIRE_THAT(text, Catch::Contains("\"S\": {\"read_bytes\": " + std::to_string(s->read_bytes)));
  REQUIRE_THAT(text, Catch::Contains("\"matches_closed_form\": true"));
  std::filesystem::remove(json);
}

TEST_CASE("memwall verify exits 0 within tolerance, 1 above it, 2 on bad parameters", "[cli]") {
  REQUIRE(run("verify --workload flash2 --seq 100 --head-dim 16 --block-kv 24") == 0);
  REQUIRE(run("verify --workload flash2 --seq 100 --head-dim 16 --block-kv 24 --no-rescale") == 1);
  REQUIRE(run("verify --workload flash2 --seq 0") == 2);
  REQUIRE(run("verify --workload flash1 --seq 100") == 2);  // no --sram, no blocks
  REQUIRE(run("trace --workload flash2 --seq 64 --sram lots --counts") == 2);
}

TEST_CASE(
    "memwall trace writes a file that trace stat and trace dump read, and rejects a "
    "damaged one with exit 2",
    "[cli]") {
  const std::string path = temp_path("cli.mwt");
  REQUIRE(run("trace --workload flash1 --seq 200 --sram 16KiB -o " + path) == 0);
  REQUIRE(run("trace stat " + path) == 0);
  REQUIRE(run("trace dump " + path + " --limit 10") == 0);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  REQUIRE(run("trace stat " + path) == 2);
  std::filesystem::remove(path);
}
