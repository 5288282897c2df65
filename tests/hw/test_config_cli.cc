// The `memwall config` commands exit 2 on a bad config and 0 on good ones.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "tests/hw/config_test_util.h"

namespace {
int run(const std::string& args) {
  const int status = std::system((std::string(MEMWALL_EXE) + " " + args + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
}  // namespace

TEST_CASE("memwall config validate exits 0 on the presets and 2 when any file fails", "[cli]") {
  memwall::test::TempDir dir;
  const std::string bad = dir.write("bad.yaml", memwall::test::replaced(memwall::test::kSmallConfig,
                                                                       "  ways: 16", "  wayz: 16"));
  CHECK(run("config validate h200 a100-40gb teaching-gpu") == 0);
  CHECK(run("config validate h200 " + bad) == 2);
  CHECK(run("config show h200 --set l2.size=\"3 parsecs\"") == 2);
  CHECK(run("config show h200") == 0);
}

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("memwall config show is byte-identical across runs and dot/reference write their files",
          "[cli]") {
  memwall::test::TempDir dir;
  const std::string a = dir.path() + "/a.txt", b = dir.path() + "/b.txt";
  REQUIRE(std::system((std::string(MEMWALL_EXE) + " config show h200 > " + a).c_str()) == 0);
  REQUIRE(std::system((std::string(MEMWALL_EXE) + " config show h200 > " + b).c_str()) == 0);
  CHECK(!slurp(a).empty());
  CHECK(slurp(a) == slurp(b));

  const std::string dot = dir.path() + "/t.dot";
  CHECK(run("config dot teaching-gpu -o " + dot) == 0);
  CHECK(slurp(dot).rfind("digraph memwall {", 0) == 0);

  const std::string ref = dir.path() + "/ref.md";
  CHECK(run("config reference -o " + ref) == 0);
  CHECK(slurp(ref) == slurp(std::string(MEMWALL_SOURCE_DIR) + "/docs/config-reference.md"));
}
