// The committed config reference is the generated one, and the key table is consistent.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "sim/hw/config_schema.h"

using namespace memwall;

TEST_CASE("docs/config-reference.md is the text `memwall config reference` generates",
          "[reference]") {
  std::ifstream in(std::string(MEMWALL_SOURCE_DIR) + "/docs/config-reference.md");
  REQUIRE(in.good());
  std::stringstream committed;
  committed << in.rdbuf();
  INFO(
      "docs/config-reference.md is stale: regenerate it with "
      "`memwall config reference -o docs/config-reference.md`");
  CHECK(committed.str() == config_reference_markdown());
}

TEST_CASE("Every key of the table is documented and typed", "[reference]") {
  const std::string md = config_reference_markdown();
  for (const KeyDecl& k : config_schema()) {
    INFO(k.path);
    CHECK(md.find("| `" + std::string(k.path) + "` |") != std::string::npos);
    CHECK(!k.description.empty());
    CHECK(k.required == k.default_text.empty());
    CHECK(find_key(k.path) == &k);
  }
}

TEST_CASE("Misspelled keys find their intended key", "[reference]") {
  CHECK(suggest_key("l2.hit_latncy") == "l2.hit_latency");
  CHECK(suggest_key("sm.smem_per_blok") == "sm.smem_per_block");
  CHECK(suggest_key("hbm.bandwith") == "hbm.bandwidth");
  CHECK(suggest_key("xbar.port_bandwdth") == "xbar.port_bandwidth");
  CHECK(suggest_key("completely.unrelated_thing") == "");
}
