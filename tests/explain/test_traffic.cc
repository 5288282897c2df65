#include <algorithm>

#include <catch2/catch.hpp>

#include "explain/traffic.h"
#include "models/closed_forms.h"
#include "sim/core/error.h"

using namespace memwall;
using namespace memwall::explain;

namespace {

WorkloadParams shape(std::uint64_t n, std::uint64_t d) {
  WorkloadParams p;
  p.seq = n;
  p.head_dim = d;
  p.heads = 3;
  p.batch = 2;
  p.sram_bytes = 64 * 1024;
  return p;
}

}  // namespace

TEST_CASE("The calculator's bytes are the closed forms of each variant", "[traffic]") {
  const TrafficTable t = compute_traffic(shape(4096, 64));
  REQUIRE(t.variants.size() == 4u);  // naive, flash1, flash2, flash3
  for (const TrafficVariant& v : t.variants) {
    WorkloadParams p = shape(4096, 64);
    p.workload = v.kind;
    const Traffic expected = closed_form_traffic(p);
    CHECK(v.traffic.read_bytes == expected.read_bytes);
    CHECK(v.traffic.write_bytes == expected.write_bytes);
    REQUIRE(v.traffic.by_tensor.size() == expected.by_tensor.size());
    for (std::size_t i = 0; i < expected.by_tensor.size(); ++i) {
      CHECK(v.traffic.by_tensor[i].tensor == expected.by_tensor[i].tensor);
      CHECK(v.traffic.by_tensor[i].read_bytes == expected.by_tensor[i].read_bytes);
      CHECK(v.traffic.by_tensor[i].write_bytes == expected.by_tensor[i].write_bytes);
    }
  }
}

TEST_CASE("Naive's S and P each cross global memory twice, N^2 elements per head each way",
          "[traffic]") {
  const std::uint64_t n = 32768, d = 64, bh = 6, s = 2;
  const TrafficTable t = compute_traffic(shape(n, d));
  const TrafficVariant* naive = t.find(WorkloadKind::naive);
  REQUIRE(naive != nullptr);
  for (const char* name : {"S", "P"}) {
    const TensorTraffic* x = naive->traffic.find(name);
    REQUIRE(x != nullptr);
    CHECK(x->read_bytes == bh * n * n * s);
    CHECK(x->write_bytes == bh * n * n * s);
  }
}

TEST_CASE("Flash2 reads Q once and K, V once per query block, and writes O and L", "[traffic]") {
  const std::uint64_t n = 1000, d = 64, bh = 6, s = 4;
  WorkloadParams p = shape(n, d);
  p.dtype = Dtype::fp32;
  p.block_q = 96;
  p.block_kv = 32;
  const TrafficTable t = compute_traffic(p);
  const TrafficVariant* f2 = t.find(WorkloadKind::flash2);
  REQUIRE(f2 != nullptr);
  const std::uint64_t tr = (n + 95) / 96;
  CHECK(f2->traffic.find("Q")->read_bytes == bh * n * d * s);
  CHECK(f2->traffic.find("K")->read_bytes == tr * bh * n * d * s);
  CHECK(f2->traffic.find("V")->read_bytes == tr * bh * n * d * s);
  CHECK(f2->traffic.write_bytes == bh * n * d * s + bh * n * 4);
}

TEST_CASE("FLOPs are 4·B·H·N²·d and the ratios divide the totals", "[traffic]") {
  const TrafficTable t = compute_traffic(shape(2048, 128));
  CHECK(t.matmul_flops == 4.0 * 6 * 2048.0 * 2048.0 * 128);
  const std::string text = format_traffic(t);
  const double r = static_cast<double>(t.find(WorkloadKind::naive)->total_bytes()) /
                   static_cast<double>(t.find(WorkloadKind::flash2)->total_bytes());
  char expected[64];
  std::snprintf(expected, sizeof expected, "naive / flash2 = %.2f", r);
  CHECK(text.find(expected) != std::string::npos);
  CHECK(traffic_json(t).find("\"naive/flash2\": ") != std::string::npos);
}

TEST_CASE("Without an SRAM size or both blocks, flash1 is left out with the reason", "[traffic]") {
  WorkloadParams p = shape(1024, 64);
  p.sram_bytes.reset();
  const TrafficTable t = compute_traffic(p);
  CHECK(t.find(WorkloadKind::flash1) == nullptr);
  CHECK(t.variants.size() == 3u);
  CHECK(t.flash1_missing.find("--sram") != std::string::npos);
  p.block_q = 64;
  p.block_kv = 64;
  const TrafficTable with_blocks = compute_traffic(p);
  CHECK(with_blocks.find(WorkloadKind::flash1) != nullptr);
}

TEST_CASE(
    "Flash3 reads each query block's visible K/V blocks of 128 keys, whatever the tiling asked",
    "[traffic]") {
  // Nq = 1000 (the last Q block has 104 rows), Nkv = 1500, causal aligned bottom-right, two
  // query heads per K/V head: every query head reads its K/V head's blocks through the L2.
  const std::uint64_t nq = 1000, nkv = 1500, d = 128, bh = 6, s = 2, br = 128, bc = 128;
  WorkloadParams p = shape(nq, d);
  p.seq_kv = nkv;
  p.kv_heads = 1;  // heads 3 is not a multiple of 2; 1 is multi-query
  p.causal = true;
  p.block_q = 64;  // the other variants' tiling: flash3's is its kernel's
  p.block_kv = 32;
  const TrafficTable t = compute_traffic(p);
  const TrafficVariant* f3 = t.find(WorkloadKind::flash3);
  REQUIRE(f3 != nullptr);
  std::uint64_t kv_rows = 0;
  for (std::uint64_t r0 = 0; r0 < nq; r0 += br) {
    const std::uint64_t last = std::min(r0 + br, nq) - 1;  // query row, sees keys <= last + 500
    const std::uint64_t visible = last + (nkv - nq) + 1;
    kv_rows += std::min((visible + bc - 1) / bc * bc, nkv);
  }
  CHECK(f3->traffic.find("Q")->read_bytes == bh * nq * d * s);
  CHECK(f3->traffic.find("K")->read_bytes == bh * kv_rows * d * s);
  CHECK(f3->traffic.find("V")->read_bytes == bh * kv_rows * d * s);
  CHECK(f3->traffic.write_bytes == bh * nq * d * s + bh * nq * 4);
  CHECK(format_traffic(t).find("flash3  Br = 128, Bc = 128, 2 stages") != std::string::npos);
  CHECK(traffic_json(t).find("\"flash2/flash3\": ") != std::string::npos);
}

TEST_CASE("Where its kernel does not run, flash3 is left out with the kernel's reason",
          "[traffic]") {
  WorkloadParams p = shape(1024, 96);
  CHECK(compute_traffic(p).find(WorkloadKind::flash3) == nullptr);
  CHECK(compute_traffic(p).flash3_missing.find("head_dim must be 64 or 128") != std::string::npos);
  p.head_dim = 64;
  p.dtype = Dtype::fp32;
  CHECK(compute_traffic(p).flash3_missing.find("fp16 only") != std::string::npos);
  p.dtype = Dtype::fp16;
  p.arch = 80;  // what an A100 config sets
  const TrafficTable ampere = compute_traffic(p);
  CHECK(ampere.find(WorkloadKind::flash3) == nullptr);
  CHECK(ampere.flash3_missing.find("sm.arch >= 90") != std::string::npos);
  CHECK(format_traffic(ampere).find("flash3 is left out") != std::string::npos);
  CHECK(traffic_json(ampere).find("\"flash3_missing\"") != std::string::npos);
}

TEST_CASE("A zero shape is a usage error", "[traffic]") {
  CHECK_THROWS_AS(compute_traffic(shape(0, 64)), UsageError);
  CHECK_THROWS_AS(compute_traffic(shape(64, 0)), UsageError);
}
