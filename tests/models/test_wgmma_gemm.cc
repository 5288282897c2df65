// `--gemm wgmma`: the Hopper-native GEMM kernel's op stream (models/wgmma_gemm.h) for the gemm
// workload and naive attention's qk and pv: its bytes, its grid, its numbers, its limits, and its
// SM->L2 bytes against the SM-side counters of the real kernel (traces/measured/h200-hopper-gemm).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/closed_forms.h"
#include "models/model_source.h"
#include "models/reference.h"
#include "models/wgmma_gemm.h"
#include "models/workload.h"
#include "sim/core/error.h"
#include "tests/models/closed_form_check.h"
#include "tests/support/cli.h"
#include "tests/support/ncu_csv.h"
#include "traces/copy_trace.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"
#include "traces/traffic_counter.h"

using namespace memwall;

namespace {

WorkloadParams gemm(std::uint64_t m, std::uint64_t n, std::uint64_t k, std::uint32_t tm,
                    std::uint32_t tn) {
  WorkloadParams p;
  p.workload = WorkloadKind::gemm;
  p.gemm = GemmKernel::wgmma;
  p.m = m;
  p.n = n;
  p.k = k;
  p.tile_m = tm;
  p.tile_n = tn;
  return p;
}

WorkloadParams naive(std::uint64_t batch, std::uint64_t heads, std::uint64_t n, std::uint64_t d,
                     std::uint32_t bq, std::uint32_t bkv) {
  WorkloadParams p;
  p.workload = WorkloadKind::naive;
  p.gemm = GemmKernel::wgmma;
  p.batch = batch;
  p.heads = heads;
  p.seq = n;
  p.head_dim = d;
  p.block_q = bq;
  p.block_kv = bkv;
  return p;
}

}  // namespace

TEST_CASE(
    "The wgmma kernel's stages are as many as fit 227 KiB, at most 4, and its shared memory "
    "is the kernel's allocation",
    "[wgmma]") {
  // The instantiations of models/cuda/hopper/wgmma_gemm.cu: (128, 128, 4), (128, 256, 3),
  // (256, 128, 3), (128, 64, 4).
  CHECK(wgmma_stages(128, 128, 2, 0) == 4);
  CHECK(wgmma_stages(128, 256, 2, 0) == 3);
  CHECK(wgmma_stages(256, 128, 2, 0) == 3);
  CHECK(wgmma_stages(128, 64, 2, 0) == 4);
  CHECK(wgmma_stages(256, 256, 2, 0) == 0);  // the staging buffer alone is 128 KiB
  // Tile<BM, BN, STAGES>::kSmemBytes: 1024 + STAGES·(BM + BN)·128 + BM·BN·2 + 256.
  CHECK(wgmma_smem_bytes(128, 256, 3, 2) == 1024 + 3 * (128 + 256) * 128 + 128 * 256 * 2 + 256);
  // A smaller per-block limit takes stages away.
  CHECK(wgmma_stages(128, 128, 2, 100 * 1024) == 2);
}

TEST_CASE(
    "--gemm wgmma moves its closed-form bytes and FLOPs on a persistent grid of "
    "min(tiles, SMs)",
    "[wgmma][closed_forms]") {
  struct G {
    std::uint64_t m, n, k;
    std::uint32_t tm, tn;
  };
  for (const G& g : {G{256, 256, 256, 128, 128}, G{300, 170, 99, 128, 64},
                     G{17, 1000, 200, 256, 128}, G{2048, 2048, 128, 128, 256}}) {
    WorkloadParams p = gemm(g.m, g.n, g.k, g.tm, g.tn);
    INFO("gemm " << g.m << "x" << g.n << "x" << g.k << " tile " << g.tm << "x" << g.tn);
    test::require_ops_match_closed_form(p);
    const std::vector<KernelInfo> k = kernel_launches(resolve_workload(p));
    REQUIRE(k.size() == 1);
    const std::uint64_t tiles = ceil_div(g.m, g.tm) * ceil_div(g.n, g.tn);
    CHECK(k[0].ctas == std::min<std::uint64_t>(tiles, p.sm_count));
    CHECK(k[0].threads_per_cta == kWgmmaThreads);
    CHECK(count_traffic(*make_model_source(p)).kernels.size() == 1);
  }
  struct N {
    std::uint64_t b, h, kvh, n, d;
    std::uint32_t bq, bkv;
  };
  for (const N& s : {N{1, 2, 2, 256, 64, 128, 128}, N{2, 4, 2, 200, 128, 128, 256},
                     N{1, 8, 1, 300, 64, 256, 64}}) {
    WorkloadParams p = naive(s.b, s.h, s.n, s.d, s.bq, s.bkv);
    p.kv_heads = s.kvh;
    INFO("naive B=" << s.b << " H=" << s.h << " Hkv=" << s.kvh << " N=" << s.n << " d=" << s.d);
    test::require_ops_match_closed_form(p);
    const std::vector<KernelInfo> k = kernel_launches(resolve_workload(p));
    REQUIRE(k.size() == 3);
    CHECK(k[0].ctas == std::min<std::uint64_t>(
                           s.b * s.h * ceil_div(s.n, s.bq) * ceil_div(s.n, s.bkv), p.sm_count));
    CHECK(k[2].ctas == std::min<std::uint64_t>(s.b * s.h * ceil_div(s.n, s.bq), p.sm_count));
  }
  // Fewer SMs, fewer persistent CTAs, the same bytes.
  WorkloadParams few = gemm(1024, 1024, 256, 128, 128);
  few.sm_count = 16;
  test::require_ops_match_closed_form(few);
  CHECK(kernel_launches(resolve_workload(few))[0].ctas == 16);
}

TEST_CASE("--gemm wgmma computes the same products: gemm A·B and naive attention, GQA included",
          "[wgmma][numerics]") {
  CHECK(verify_workload(gemm(200, 264, 136, 128, 128)).max_abs_error < 1e-10);
  CHECK(verify_workload(gemm(130, 70, 300, 256, 64)).max_abs_error < 1e-10);
  WorkloadParams p = naive(1, 4, 200, 64, 128, 256);
  p.kv_heads = 2;
  CHECK(verify_workload(p).max_abs_error < 1e-9);
  CHECK(verify_workload(naive(2, 1, 130, 128, 128, 64)).max_abs_error < 1e-9);
}

TEST_CASE("--gemm wgmma refuses what the kernel cannot run, naming the parameter", "[wgmma]") {
  WorkloadParams p = gemm(256, 256, 256, 128, 128);
  p.tile_k = 32;
  CHECK_THROWS_WITH(resolve_workload(p), Catch::Contains("tile_k must be 64"));
  p = gemm(256, 256, 256, 64, 128);
  CHECK_THROWS_WITH(resolve_workload(p), Catch::Contains("tile_m must be 128 or 256"));
  p = gemm(256, 256, 256, 128, 96);
  CHECK_THROWS_WITH(resolve_workload(p), Catch::Contains("tile_n must be 64, 128 or 256"));
  p = gemm(256, 256, 256, 256, 256);
  CHECK_THROWS_WITH(resolve_workload(p), Catch::Contains("does not fit two stages"));
  p = gemm(256, 256, 256, 128, 128);
  p.dtype = Dtype::fp32;
  CHECK_THROWS_WITH(resolve_workload(p), Catch::Contains("fp16 only"));
  WorkloadParams a = naive(1, 1, 256, 96, 128, 128);
  CHECK_THROWS_WITH(resolve_workload(a), Catch::Contains("head_dim"));
  a = naive(1, 1, 256, 64, 64, 64);
  CHECK_THROWS_WITH(resolve_workload(a), Catch::Contains("block_q must be 128 or 256"));
  a = naive(1, 1, 256, 64, 128, 128);
  a.block_k = 32;
  CHECK_THROWS_WITH(resolve_workload(a), Catch::Contains("block_k must be 64"));
  // The default tile_k of the mma_sync gemm is unchanged.
  WorkloadParams m = gemm(256, 256, 256, 128, 128);
  m.gemm = GemmKernel::mma_sync;
  CHECK(*resolve_workload(m).tile_k == 32);
  CHECK(*resolve_workload(gemm(256, 256, 256, 128, 128)).tile_k == 64);
}

TEST_CASE(
    "The model's SM->L2 bytes of the wgmma kernels equal the SM-side counters of the real "
    "ones (ncu on the H200)",
    "[wgmma][measured]") {
  // gemm_ncu.csv: ncu's raw page in base units (bytes), numbers with thousands separators.
  const test::NcuCsv ncu(std::string(MEMWALL_SOURCE_DIR) +
                         "/traces/measured/h200-hopper-gemm/gemm_ncu.csv");
  const auto bytes = [&](const std::vector<std::string>& r, const std::string& name) {
    return ncu.count(r, name);
  };
  // The three profiled shapes (wgmma_gemm --profile): grids of 132 CTAs.
  struct Expect {
    std::string tile;
    bool nn;
    WorkloadParams p;
    std::size_t kernel;
  };
  const auto qk = [&](std::uint32_t bq, std::uint32_t bkv) {
    return naive(64, 1, 4096, 128, bq, bkv);
  };
  const std::vector<Expect> expect = {
      {"<128, 128, 4, 0>", false, gemm(8192, 8192, 8192, 128, 128), 0},
      {"<128, 256, 3, 0>", false, gemm(8192, 8192, 8192, 128, 256), 0},
      {"<256, 128, 3, 0>", false, gemm(8192, 8192, 8192, 256, 128), 0},
      {"<128, 128, 4, 1>", true, qk(128, 128), 2},
  };
  std::map<std::string, std::vector<std::vector<std::string>>> launches;  // tile -> rows, in order
  for (const std::vector<std::string>& r : ncu.rows()) {
    if (ncu.text(r, "Grid Size") != "(132, 1, 1)") continue;
    const std::string name = ncu.text(r, "Kernel Name");
    const std::size_t at =
        name.find("wgmma_gemm_kernel<") + std::string("wgmma_gemm_kernel").size();
    launches[name.substr(at, name.find('>', at) - at + 1)].push_back(r);
  }
  // That run's kernels also carried the clock probe: CTA 0 stores 4 words of 8 bytes (clock64 and
  // %globaltimer at start and end), each a 32-byte sector at the crossbar.
  constexpr std::uint64_t kProbeBytes = 4 * 32;
  // Each tile's launches in --profile order: the 8192^3 GEMM twice, then naive-qk twice (tn
  // tiles; the 128 x 128 nn tile is naive-pv's).
  for (const Expect& e : expect) {
    INFO(e.tile);
    const auto& rows = launches.at(e.tile);
    const TraceCounts c = count_traffic(*make_model_source(e.p));
    REQUIRE(c.kernels.size() > e.kernel);
    CHECK(bytes(rows.at(0), "l1tex__m_xbar2l1tex_read_bytes.sum") ==
          c.kernels[e.kernel].read_bytes);
    CHECK(bytes(rows.at(0), "l1tex__m_l1tex2xbar_write_bytes.sum") ==
          c.kernels[e.kernel].write_bytes + kProbeBytes);
  }
  for (const auto& [bq, bkv, tile] :
       {std::tuple{128u, 128u, "<128, 128, 4, 0>"}, std::tuple{128u, 256u, "<128, 256, 3, 0>"},
        std::tuple{256u, 128u, "<256, 128, 3, 0>"}}) {
    INFO("naive-qk " << tile);
    const auto& rows = launches.at(tile);
    REQUIRE(rows.size() == 4);
    const TraceCounts c = count_traffic(*make_model_source(qk(bq, bkv)));
    CHECK(bytes(rows.at(2), "l1tex__m_xbar2l1tex_read_bytes.sum") == c.kernels[0].read_bytes);
    CHECK(bytes(rows.at(2), "l1tex__m_l1tex2xbar_write_bytes.sum") ==
          c.kernels[0].write_bytes + kProbeBytes);
  }
}

TEST_CASE(
    "A --gemm wgmma trace (format version 4) replays the model's ops exactly, store tags "
    "included",
    "[wgmma][trace_file]") {
  const WorkloadParams p = naive(1, 2, 300, 64, 128, 256);
  const std::string path = memwall::test::temp_path("wgmma", "naive.mwt");
  {
    auto source = make_model_source(p);
    TraceWriter writer(path);
    copy_trace(*source, writer);
  }
  TraceReader reader(path);
  CHECK(reader.version() == kTraceVersion);
  auto model = make_model_source(p);
  KernelInfo a, b;
  std::vector<Op> ra, rb;
  std::uint64_t tagged_stores = 0;
  while (model->next_kernel(a)) {
    REQUIRE(reader.next_kernel(b));
    CHECK(a.name == b.name);
    while (model->next_cta(ra)) {
      REQUIRE(reader.next_cta(rb));
      REQUIRE(ra.size() == rb.size());
      for (std::size_t i = 0; i < ra.size(); ++i) {
        CHECK(ra[i].kind == rb[i].kind);
        CHECK(ra[i].tag == rb[i].tag);
        CHECK(ra[i].box.base == rb[i].box.base);
        tagged_stores += ra[i].kind == OpKind::store && ra[i].tag != 0;
      }
    }
    CHECK_FALSE(reader.next_cta(rb));
  }
  CHECK(tagged_stores > 0);
  std::filesystem::remove(path);
}

TEST_CASE(
    "--gemm's default follows the chip: wgmma on sm.arch >= 90 where the kernel takes the shape, "
    "else mma_sync; a list without gemm is mma_sync",
    "[wgmma][defaults]") {
  const auto chosen = [](WorkloadParams p, std::uint32_t arch) {
    p.gemm.reset();
    p.arch = arch;
    choose_gemm_kernel(p);
    return *resolve_workload(p).gemm;
  };
  const WorkloadParams attention = naive(1, 2, 256, 64, 128, 128);
  const WorkloadParams product = gemm(256, 256, 256, 128, 128);
  CHECK(chosen(attention, kWgmmaMinArch) == GemmKernel::wgmma);
  CHECK(chosen(product, kWgmmaMinArch) == GemmKernel::wgmma);
  CHECK(chosen(attention, 80) == GemmKernel::mma_sync);
  CHECK(chosen(product, 80) == GemmKernel::mma_sync);
  // Shapes the wgmma kernel does not take fall back to mma_sync (each refused when asked for).
  WorkloadParams fp32 = attention;
  fp32.dtype = Dtype::fp32;
  CHECK(chosen(fp32, kWgmmaMinArch) == GemmKernel::mma_sync);
  CHECK(chosen(naive(1, 2, 256, 32, 128, 128), kWgmmaMinArch) == GemmKernel::mma_sync);
  CHECK(chosen(naive(1, 2, 256, 64, 64, 64), kWgmmaMinArch) == GemmKernel::mma_sync);
  WorkloadParams tile_k = product;
  tile_k.tile_k = 32;
  CHECK(chosen(tile_k, kWgmmaMinArch) == GemmKernel::mma_sync);
  WorkloadParams small_smem = attention;  // two 128 x 128 stages and the output: 97.25 KiB
  small_smem.smem_limit_bytes = wgmma_smem_bytes(128, 128, 2, 2) - 1;
  CHECK(chosen(small_smem, kWgmmaMinArch) == GemmKernel::mma_sync);
  small_smem.smem_limit_bytes = wgmma_smem_bytes(128, 128, 2, 2);
  CHECK(chosen(small_smem, kWgmmaMinArch) == GemmKernel::wgmma);
  // A choice already made stays; without a chip (no config) resolution takes mma_sync.
  WorkloadParams asked = attention;
  asked.gemm = GemmKernel::mma_sync;
  choose_gemm_kernel(asked);
  CHECK(asked.gemm == GemmKernel::mma_sync);
  WorkloadParams bare = attention;
  bare.gemm.reset();
  const WorkloadParams resolved = resolve_workload(bare);
  CHECK(resolved.gemm == GemmKernel::mma_sync);
  // gemm is listed only when wgmma, so a trace header or measured row without it reads back as
  // mma_sync whatever the chip.
  CHECK(params_from_named(resolved.named()).gemm == std::nullopt);
  CHECK(resolve_workload(params_from_named(resolved.named())).gemm == GemmKernel::mma_sync);
  const WorkloadParams hopper = resolve_workload(attention);
  CHECK(resolve_workload(params_from_named(hopper.named())).gemm == GemmKernel::wgmma);
  // flash2 has no gemm parameter: nothing to choose.
  WorkloadParams flash = attention;
  flash.workload = WorkloadKind::flash2;
  flash.gemm.reset();
  choose_gemm_kernel(flash);
  CHECK_FALSE(flash.gemm.has_value());
}

TEST_CASE(
    "The CLI: naive and gemm run wgmma on Hopper presets by default; --gemm wgmma on an "
    "A100 is refused, exit 2",
    "[wgmma][defaults][cli]") {
  using memwall::test::run_memwall;
  const std::string shape = " --workload naive --seq 256 --head-dim 64 --heads 2";
  CHECK(run_memwall("run -c h200" + shape).out.find("gemm=wgmma") != std::string::npos);
  CHECK(run_memwall("run -c h100-sxm" + shape).out.find("gemm=wgmma") != std::string::npos);
  CHECK(run_memwall("run -c h200 --gemm mma_sync" + shape).out.find("gemm=") == std::string::npos);
  const auto a100 = run_memwall("run -c a100-40gb" + shape);
  CHECK(a100.code == 0);
  CHECK(a100.out.find("gemm=") == std::string::npos);
  const auto refused = run_memwall("run -c a100-40gb --gemm wgmma" + shape);
  CHECK(refused.code == 2);
  CHECK(refused.out.find("--gemm wgmma runs on wgmma and TMA, which need sm.arch >= 90") !=
        std::string::npos);
  CHECK(refused.out.find("sm.arch is 80") != std::string::npos);
  CHECK(run_memwall("run -c h200 --workload gemm --m 512 --n 512 --k 512").out.find("gemm=wgmma") !=
        std::string::npos);
}
