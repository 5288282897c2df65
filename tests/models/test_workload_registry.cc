// The workload registry: every plugin registered once under its name, every parameter declared
// completely, shared parameters consistent, resolution driven by the declarations, and the
// committed reference equal to the generated one.
#include <catch2/catch.hpp>

#include <algorithm>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "models/workload.h"
#include "models/workload_reference.h"
#include "models/workload_registry.h"
#include "sim/core/error.h"

using namespace memwall;

namespace {

/// Parameters that resolve for every workload (flash1 needs an SRAM size for its blocks).
WorkloadParams defaults_of(WorkloadKind kind) {
  WorkloadParams p;
  p.workload = kind;
  p.sram_bytes = 96 * 1024;
  return p;
}

std::string error_of(const WorkloadParams& p) {
  try {
    resolve_workload(p);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("docs/workloads.md is the text `memwall workloads --markdown` generates", "[registry]") {
  std::ifstream in(std::string(MEMWALL_SOURCE_DIR) + "/docs/workloads.md");
  REQUIRE(in.good());
  std::stringstream committed;
  committed << in.rdbuf();
  INFO(
      "docs/workloads.md is stale: regenerate it with "
      "`memwall workloads --markdown -o docs/workloads.md`");
  CHECK(committed.str() == workloads_markdown());
}

TEST_CASE("Each registration line names a plugin of that name, in the registered order",
          "[registry]") {
  std::vector<std::string> lines = {
#define MEMWALL_TEST_NAME(name) #name,
      MEMWALL_WORKLOADS(MEMWALL_TEST_NAME)
#undef MEMWALL_TEST_NAME
  };
  for (std::string& line : lines) std::replace(line.begin(), line.end(), '_', '-');  // flash2-bwd
  const auto plugins = workload_plugins();
  REQUIRE(plugins.size() == lines.size());
  REQUIRE(std::size(kAllWorkloads) == lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    INFO(lines[i]);
    CHECK(plugins[i]->name() == lines[i]);
    CHECK(to_string(kAllWorkloads[i]) == lines[i]);
    CHECK(parse_workload_kind(lines[i]) == kAllWorkloads[i]);
    CHECK(&workload_plugin(kAllWorkloads[i]) == plugins[i]);
    CHECK(find_workload_plugin(lines[i]) == plugins[i]);
    CHECK_FALSE(plugins[i]->summary().empty());
  }
  CHECK_THROWS_WITH(parse_workload_kind("flash9"),
                    Catch::Contains("known: naive, flash1, flash2, gemm"));
}

TEST_CASE("Every parameter is declared with its flag, unit, help, default and bounds",
          "[registry]") {
  for (const WorkloadPlugin* plugin : workload_plugins()) {
    std::set<std::string_view> names;
    for (const ParamSpec& spec : plugin->params()) {
      INFO(plugin->name() << " " << spec.name);
      CHECK(names.insert(spec.name).second);
      CHECK_FALSE(spec.help.empty());
      CHECK(static_cast<bool>(spec.field.get));
      CHECK(static_cast<bool>(spec.field.set));
      if (spec.type == ParamType::kCount || spec.type == ParamType::kTile) {
        CHECK_FALSE(spec.unit.empty());
        // A tile is at least 1, unless its help says what 0 means (naive's softmax_chunk) or
        // why it is more (flash3's stages).
        if (spec.min == 0) {
          CHECK_THAT(std::string(spec.help), Catch::Contains("; 0 "));
        } else if (spec.min > 1) {
          CHECK_THAT(std::string(spec.help),
                     Catch::Contains("at least " + std::to_string(spec.min) + " ("));
        }
        CHECK_FALSE(param_default_text(spec).empty());
      }
      if (spec.max != 0) CHECK_FALSE(spec.max_reason.empty());
      if (spec.type == ParamType::kChoice) CHECK_FALSE(spec.choices.empty());
      // A default fixed in the declaration is exactly what resolution fills in.
      if (spec.default_value != 0) {
        CHECK(spec.field.get(resolve_workload(defaults_of(parse_workload_kind(plugin->name())))) ==
              spec.default_value);
      }
    }
  }
}

TEST_CASE("A parameter several workloads declare has one flag, one type and one field",
          "[registry]") {
  std::set<std::string_view> flags;
  for (const CatalogueParam& param : workload_param_catalogue()) {
    INFO(param.spec->name);
    REQUIRE_FALSE(param.uses.empty());
    CHECK(param.uses.front().spec == param.spec);
    if (!param.spec->flag.empty()) CHECK(flags.insert(param.spec->flag).second);
    CHECK(find_workload_param(param.spec->name) == &param);
    for (const ParamUse& use : param.uses) {
      CHECK(use.spec->flag == param.spec->flag);
      CHECK(use.spec->type == param.spec->type);
      CHECK(use.spec->field.offset() == param.spec->field.offset());
      // The same field: a value stored through one declaration reads back through the other.
      WorkloadParams p;
      use.spec->field.set(p, 1);
      CHECK(param.spec->field.get(p) == std::optional<std::uint64_t>(1));
    }
  }
}

TEST_CASE("A workload's parameter list is its declarations, in order, and parses back",
          "[registry]") {
  for (WorkloadKind kind : kAllWorkloads) {
    const WorkloadPlugin& plugin = workload_plugin(kind);
    INFO(plugin.name());
    WorkloadParams p = defaults_of(kind);
    p.smem_limit_bytes = 1 << 30;
    p.allow_spill = true;
    const WorkloadParams r = resolve_workload(p);
    const auto named = r.named();
    REQUIRE(named.front() == std::make_pair(std::string("workload"), std::string(plugin.name())));
    std::size_t next = 0;  // every listed name is the next declared one that is set
    for (std::size_t i = 1; i < named.size(); ++i) {
      while (next < plugin.params().size() && plugin.params()[next].name != named[i].first) ++next;
      CHECK(next < plugin.params().size());
    }
    CHECK(params_from_named(named).named() == named);
  }
}

TEST_CASE("Resolution clears the parameters a workload does not declare", "[registry]") {
  WorkloadParams p;
  p.workload = WorkloadKind::naive;
  p.stages = 3;
  p.sram_bytes = 65536;
  p.tile_m = 64;
  p.allow_spill = true;
  p.smem_limit_bytes = 1 << 20;
  const WorkloadParams r = resolve_workload(p);
  CHECK_FALSE(r.stages);
  CHECK_FALSE(r.sram_bytes);
  CHECK_FALSE(r.tile_m);
  CHECK_FALSE(r.allow_spill);
  CHECK(r.smem_limit_bytes == p.smem_limit_bytes);  // set by the command, kept for the check

  // A parameter another workload ignores is not checked either: its zero is not an error here.
  WorkloadParams g;
  g.workload = WorkloadKind::gemm;
  g.seq = 0;
  g.block_q = 0;
  CHECK(error_of(g).empty());
}

TEST_CASE("Bounds come from the declarations and name the parameter", "[registry]") {
  for (WorkloadKind kind : kAllWorkloads) {
    for (const ParamSpec& spec : workload_plugin(kind).params()) {
      if (spec.type == ParamType::kChoice || spec.type == ParamType::kSwitch) continue;
      INFO(to_string(kind) << " " << spec.name);
      if (spec.min == 1 && spec.auto_word.empty()) {  // with an auto word, 0 stands for it
        WorkloadParams p = defaults_of(kind);
        spec.field.set(p, 0);
        if (spec.name != "smem_limit_bytes") {
          CHECK_THAT(error_of(p), Catch::StartsWith(std::string(spec.name) + " must be > 0"));
        }
      }
      if (spec.max != 0) {
        WorkloadParams p = defaults_of(kind);
        spec.field.set(p, spec.max + 1);
        CHECK_THAT(error_of(p), Catch::StartsWith(std::string(spec.name) +
                                                  " must be <= " + std::to_string(spec.max)));
        spec.field.set(p, spec.max);
        CHECK_THAT(error_of(p), !Catch::Contains(std::string(spec.name) + " must be"));
      }
    }
  }
}

TEST_CASE("Parameters parse from text by their type, with errors naming them", "[registry]") {
  WorkloadParams p;
  set_workload_param_text(p, "workload", "gemm");
  set_workload_param_text(p, "dtype", "fp32");
  set_workload_param_text(p, "tile_k", "64");
  set_workload_param_text(p, "sram_bytes", "64 KiB");
  set_workload_param_text(p, "allow_spill", "1");
  CHECK(p.workload == WorkloadKind::gemm);
  CHECK(p.dtype == Dtype::fp32);
  CHECK(p.tile_k == 64u);
  CHECK(p.sram_bytes == 65536u);
  CHECK(p.allow_spill);
  set_workload_param_text(p, "sram_bytes", "4096");
  CHECK(p.sram_bytes == 4096u);
  CHECK_THROWS_WITH(set_workload_param_text(p, "seq", "12x"),
                    Catch::Contains("seq: expected a whole number"));
  CHECK_THROWS_WITH(set_workload_param_text(p, "block_q", "4294967296"),
                    Catch::Contains("block_q: 4294967296 is too large"));
  CHECK_THROWS_WITH(set_workload_param_text(p, "dtype", "fp8"),
                    Catch::Contains("unknown dtype \"fp8\" (known: fp16, fp32)"));
  CHECK_THROWS_WITH(set_workload_param_text(p, "sram_bytes", "12 parsecs"),
                    Catch::StartsWith("sram_bytes: "));
  // A tile with an auto word takes the word or a number > 0, never 0 (which stands for the word).
  set_workload_param_text(p, "splits", "auto");
  CHECK(p.splits == 0u);
  set_workload_param_text(p, "splits", "3");
  CHECK(p.splits == 3u);
  CHECK_THROWS_WITH(set_workload_param_text(p, "splits", "0"),
                    Catch::StartsWith("splits must be > 0 or auto, got 0"));
  CHECK_THROWS_WITH(set_workload_param_text(p, "blok_q", "1"),
                    Catch::Contains("unknown workload parameter \"blok_q\""));
}

TEST_CASE("The catalogue follows the contract's order, the order of WorkloadParams' fields",
          "[registry]") {
  std::vector<std::string> names;
  for (const CatalogueParam& param : workload_param_catalogue()) {
    names.emplace_back(param.spec->name);
  }
  CHECK(names == std::vector<std::string>{"dtype",
                                          "batch",
                                          "heads",
                                          "seq",
                                          "head_dim",
                                          "kv_heads",
                                          "seq_kv",
                                          "causal",
                                          "block_q",
                                          "block_kv",
                                          "block_k",
                                          "stages",
                                          "softmax_rows",
                                          "softmax_chunk",
                                          "sram_bytes",
                                          "splits",
                                          "m",
                                          "n",
                                          "k",
                                          "tile_m",
                                          "tile_n",
                                          "tile_k",
                                          "gemm",
                                          "smem_limit_bytes",
                                          "allow_spill"});
}

TEST_CASE("A shared flag's help names the workloads whose help or default differ", "[registry]") {
  CHECK(catalogue_param_help(*find_workload_param("stages")) ==
        "flash2: K/V blocks in flight (pipelining depth) [default: 2]; flash3: K/V buffers in "
        "shared memory, at least 2 (one filled while another is read); with Q and the O staging "
        "buffer they must fit smem_per_block [default: 4 for head_dim 64, 2 for 128 (the "
        "kernel's instantiations)]");
  CHECK(catalogue_param_help(*find_workload_param("seq")) ==
        "naive, flash1, flash2, naive-bwd, flash2-bwd, flash3: Sequence length N (tokens per "
        "head) [default: 1024]");
  const std::string dtype = catalogue_param_help(*find_workload_param("dtype"));
  CHECK_THAT(dtype, Catch::EndsWith("[default: fp16]"));
  CHECK_THAT(dtype, !Catch::Contains("naive"));  // every workload declares it alike
  const std::string block_kv = catalogue_param_help(*find_workload_param("block_kv"));
  for (const char* part : {"naive: ", "[default: 128]; flash1: ", "flash2: ",
                           "[default: 128 for head_dim ≤ 64, else 64]"}) {
    CHECK_THAT(block_kv, Catch::Contains(part));
  }
}

TEST_CASE("The text listing names every parameter of every workload", "[registry]") {
  const std::string all = workloads_text();
  for (const WorkloadPlugin* plugin : workload_plugins()) {
    const std::string one = workload_text(*plugin);
    CHECK_THAT(one, Catch::StartsWith(std::string(plugin->name()) + ": " +
                                      std::string(plugin->summary())));
    CHECK_THAT(all, Catch::Contains(one));
    for (const ParamSpec& spec : plugin->params()) {
      CHECK_THAT(one, Catch::Contains("  " + std::string(spec.name) + " "));
    }
    std::istringstream lines(one);
    for (std::string line; std::getline(lines, line);) CHECK(line.back() != ' ');
  }
}
