// End-to-end tests of `memwall workloads` and of the workload flags every command generates from
// the registry, through the built `memwall` executable.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "models/workload_reference.h"
#include "models/workload_registry.h"
#include "studies/sweep_workload.h"
#include "tests/support/cli.h"

using namespace memwall;

namespace {

using memwall::test::run_memwall;
using memwall::test::slurp;
using Result = memwall::test::CliResult;

}  // namespace

TEST_CASE("memwall workloads lists every workload with its summary and parameters",
          "[cli][workloads]") {
  const Result all = run_memwall("workloads");
  CHECK(all.code == 0);
  CHECK(all.out == workloads_text());
  for (const WorkloadPlugin* plugin : workload_plugins()) {
    INFO(plugin->name());
    CHECK_THAT(all.out, Catch::Contains(std::string(plugin->name()) + ": " +
                                        std::string(plugin->summary())));
    const Result one = run_memwall("workloads " + std::string(plugin->name()));
    CHECK(one.code == 0);
    CHECK(one.out == workload_text(*plugin));
  }
  const Result bad = run_memwall("workloads flash9");
  CHECK(bad.code == 2);
  CHECK_THAT(
      bad.out,
      Catch::Contains(
          "unknown workload \"flash9\" (known: naive, flash1, flash2, gemm, naive-bwd, flash2-bwd, flash3)"));
}

TEST_CASE("memwall workloads --markdown writes the reference docs/workloads.md holds",
          "[cli][workloads]") {
  const std::string out = memwall::test::temp_path("workloads_cli", "workloads.md");
  const Result r = run_memwall("workloads --markdown -o " + out);
  CHECK(r.code == 0);
  CHECK(slurp(out) == workloads_markdown());
  CHECK(slurp(std::string(MEMWALL_SOURCE_DIR) + "/docs/workloads.md") == slurp(out));
  std::filesystem::remove(out);
  CHECK(run_memwall("workloads naive --markdown").code == 2);
}

TEST_CASE("Every command that takes a workload offers every parameter's flag", "[cli][workloads]") {
  for (const char* command : {"run --help", "trace --help", "verify --help"}) {
    INFO(command);
    const Result r = run_memwall(command);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("-w,--workload"));
    for (const CatalogueParam& param : workload_param_catalogue()) {
      if (!param.spec->flag.empty())
        CHECK_THAT(r.out, Catch::Contains(std::string(param.spec->flag) + " "));
    }
  }
  for (const char* command : {"sweep --help", "io --help"}) {
    INFO(command);
    const Result r = run_memwall(command);
    REQUIRE(r.code == 0);
    for (const WorkloadAxis& axis : workload_axes())
      CHECK_THAT(r.out, Catch::Contains(axis.flags + " "));
  }
}

TEST_CASE("A shared flag's help is the same in every command", "[cli][workloads]") {
  const std::string help = catalogue_param_help(*find_workload_param("block_kv"));
  for (const char* command : {"run --help", "trace --help", "verify --help", "traffic --help"}) {
    INFO(command);
    CHECK_THAT(run_memwall(command).out, Catch::Contains(help));
  }
}
