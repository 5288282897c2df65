// The `memwall config` commands exit 2 on a bad config and 0 on good ones.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "tests/hw/config_test_util.h"
#include "tests/support/cli.h"

namespace {
/// The exit code of `memwall ARGS`.
int run(const std::string& args) { return memwall::test::run_memwall(args).code; }
}  // namespace

TEST_CASE("memwall config validate exits 0 on the presets and 2 when any file fails", "[cli]") {
  memwall::test::TempDir dir;
  const std::string bad = dir.write(
      "bad.yaml", memwall::test::replaced(memwall::test::kSmallConfig, "  ways: 16", "  wayz: 16"));
  CHECK(run("config validate h200 a100-40gb teaching-gpu") == 0);
  CHECK(run("config validate h200 " + bad) == 2);
  CHECK(run("config show h200 --set l2.size=\"3 parsecs\"") == 2);
  CHECK(run("config show h200") == 0);
}

TEST_CASE("memwall config show is byte-identical across runs and dot/reference write their files",
          "[cli]") {
  memwall::test::TempDir dir;
  const std::string a = dir.path() + "/a.txt", b = dir.path() + "/b.txt";
  REQUIRE(std::system((std::string(MEMWALL_EXE) + " config show h200 > " + a).c_str()) == 0);
  REQUIRE(std::system((std::string(MEMWALL_EXE) + " config show h200 > " + b).c_str()) == 0);
  CHECK(!memwall::test::slurp(a).empty());
  CHECK(memwall::test::slurp(a) == memwall::test::slurp(b));

  const std::string dot = dir.path() + "/t.dot";
  CHECK(run("config dot teaching-gpu -o " + dot) == 0);
  CHECK(memwall::test::slurp(dot).rfind("digraph memwall {", 0) == 0);

  const std::string ref = dir.path() + "/ref.md";
  CHECK(run("config reference -o " + ref) == 0);
  CHECK(memwall::test::slurp(ref) ==
        memwall::test::slurp(std::string(MEMWALL_SOURCE_DIR) + "/docs/config-reference.md"));
}
