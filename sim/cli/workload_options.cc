#include "sim/cli/workload_options.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "sim/core/error.h"
#include "sim/core/units.h"

namespace memwall {
namespace {

/// An optional uint32 tiling flag: set only when given.
void add_tile(CLI::App& app, const char* name, std::optional<std::uint32_t>& field,
              const char* description) {
  app.add_option_function<std::uint32_t>(
         name, [&field](const std::uint32_t& v) { field = v; }, description)
      ->type_name("INT");
}

/// `path` relative to the working directory when it lies below it; `fallback` when empty.
std::string display_path(const std::string& path, const std::string& fallback) {
  if (path.empty()) return fallback;
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string() + "/";
  if (!ec && path.size() > cwd.size() && path.compare(0, cwd.size(), cwd) == 0) {
    return path.substr(cwd.size());
  }
  return path;
}

}  // namespace

std::string workload_names() {
  std::string out;
  for (WorkloadKind k : kAllWorkloads) out += (out.empty() ? "" : "|") + std::string(to_string(k));
  return out;
}

void add_workload_options(CLI::App& app, WorkloadParams& p) {
  std::vector<std::string> names;
  for (WorkloadKind k : kAllWorkloads) names.emplace_back(to_string(k));
  app.add_option_function<std::string>(
         "-w,--workload", [&p](const std::string& v) { p.workload = parse_workload_kind(v); },
         "Workload: naive (qk, softmax, pv launches), flash1 (FlashAttention Alg. 1), flash2 "
         "(FlashAttention-2 forward), gemm (C = A·B) [default: flash2]")
      ->check(CLI::IsMember(names))
      ->type_name("NAME");
  app.add_option_function<std::string>(
         "--dtype", [&p](const std::string& v) { p.dtype = parse_dtype(v); },
         "Element type of Q/K/V/O/S/P (A/B/C): fp16 (2 bytes) or fp32 (4 bytes) [default: fp16]")
      ->check(CLI::IsMember({"fp16", "fp32"}))
      ->type_name("NAME");
  app.add_option("--batch", p.batch, "Batch size B")->capture_default_str()->type_name("INT");
  app.add_option("--heads", p.heads, "Heads H")->capture_default_str()->type_name("INT");
  app.add_option("--seq", p.seq, "Sequence length N (tokens per head)")
      ->capture_default_str()
      ->type_name("INT");
  app.add_option("--head-dim", p.head_dim, "Head dimension d")
      ->capture_default_str()
      ->type_name("INT");
  add_tile(app, "--block-q", p.block_q,
           "Rows of Q per tile: naive bm, flash Br [default: 128; flash1: min(ceil(M/4d), d)]");
  add_tile(app, "--block-kv", p.block_kv,
           "Rows of K/V per tile: naive bn, flash Bc [default: naive 128; flash2 128 for d <= 64, "
           "else 64; flash1 ceil(M/4d)]");
  add_tile(app, "--block-k", p.block_k, "naive pv: columns of P per k chunk [default: 64]");
  add_tile(app, "--stages", p.stages, "flash2: K/V blocks in flight (pipelining depth) [default: 2]");
  add_tile(app, "--softmax-rows", p.softmax_rows, "naive softmax: rows of S per CTA [default: 4]");
  app.add_option_function<std::string>(
         "--sram",
         [&p](const std::string& v) {
           try {
             p.sram_bytes = parse_bytes(v).count;
           } catch (const UnitError& e) {
             throw UsageError(std::string("--sram: ") + e.what());
           }
         },
         "flash1: on-chip memory M per CTA for the default block sizes, e.g. 96KiB (wins over a "
         "config's smem_per_block)")
      ->type_name("SIZE");
  app.add_option("--m", p.m, "gemm: rows of A and C")->capture_default_str()->type_name("INT");
  app.add_option("--n", p.n, "gemm: columns of B and C")->capture_default_str()->type_name("INT");
  app.add_option("--k", p.k, "gemm: columns of A, rows of B")->capture_default_str()->type_name("INT");
  add_tile(app, "--tile-m", p.tile_m, "gemm: output tile rows [default: 128]");
  add_tile(app, "--tile-n", p.tile_n, "gemm: output tile columns [default: 128]");
  add_tile(app, "--tile-k", p.tile_k, "gemm: k chunk per loop step [default: 32]");
  app.add_flag(
      "--allow-spill", p.allow_spill,
      "flash1/flash2: tiles over the shared memory per block (the config's sm.smem_per_block, or "
      "--sram) are kept on chip as far as they fit and the rest spilled to global memory, instead "
      "of rejected (see docs/spill.md)");
}

WorkloadParams resolve_workload_options(const WorkloadParams& params, const HardwareConfig* config) {
  WorkloadParams p = params;
  if (config != nullptr) {
    if (!p.sram_bytes && p.workload == WorkloadKind::flash1) p.sram_bytes = config->sm.smem_per_block.count;
    p.smem_limit_bytes = config->sm.smem_per_block.count;
    p.smem_limit_source = "sm.smem_per_block of " + display_path(config->source_file, config->name);
  }
  // With --allow-spill, --sram (when given) is the shared memory a spilling CTA may keep.
  if (p.allow_spill && params.sram_bytes) {
    p.smem_limit_bytes = *params.sram_bytes;
    p.smem_limit_source = "--sram";
  }
  return resolve_workload(p);
}

}  // namespace memwall
