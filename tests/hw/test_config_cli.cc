// The `memwall config` commands exit 2 on a bad config and 0 on good ones.
#include <catch2/catch.hpp>

#include <cstdlib>
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
