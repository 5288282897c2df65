// Finding 20 of the first-hour walkthrough: config errors that pointed the wrong way. Each now
// names the real problem; positions and texts are computed from the config given.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include "sim/core/error.h"
#include "sim/hw/config_loader.h"
#include "sim/hw/config_schema.h"
#include "tests/hw/config_test_util.h"

using namespace memwall;
using namespace memwall::test;

namespace {

std::string slurp_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string error_of(const std::string& path, const std::vector<std::string>& overrides = {}) {
  try {
    (void)load_config(path, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError for " << path);
  return {};
}

}  // namespace

TEST_CASE(
    "Finding 20: a section's name in the wrong case or given to --set as a key names the "
    "section, not a key spelt like it",
    "[config][first-hour]") {
  TempDir dir;
  const std::string upper = dir.write("gpu.yaml", replaced(kSmallConfig, "sm:\n", "SM:\n"));
  const std::string message = error_of(upper);
  CHECK_THAT(message, Catch::Contains(":" + position_of(slurp_text(upper), "SM:") +
                                      ": SM: unknown key (did you mean "
                                      "the section \"sm\"? names are lowercase)"));
  CHECK_THAT(message, !Catch::Contains("efficiency"));
  const std::string section = error_of(dir.write("ok.yaml", kSmallConfig), {"l2=5"});
  CHECK_THAT(
      section,
      Catch::StartsWith("--set l2=5: l2: is a section, not a key: name one of its keys (l2.size"));
  CHECK_THAT(section, !Catch::Contains("efficiency"));
}

TEST_CASE("Finding 20: --config naming a directory says it is one", "[config][first-hour]") {
  TempDir dir;
  const std::string message = error_of(dir.path());
  CHECK_THAT(message, Catch::StartsWith(dir.path() + ": is a directory, not a config file"));
  CHECK_THAT(message, !Catch::Contains("no such file"));
}

TEST_CASE("Finding 20: a tab in the indentation is named with its line", "[config][first-hour]") {
  TempDir dir;
  const std::string text = replaced(kSmallConfig, "  count: 4", "\tcount: 4");
  const std::string message = error_of(dir.write("gpu.yaml", text));
  const std::string line =
      position_of(text, "\tcount").substr(0, position_of(text, "\tcount").find(':'));
  CHECK_THAT(message, Catch::Contains("malformed YAML"));
  CHECK_THAT(message, Catch::EndsWith("(line " + line +
                                      " is indented with a tab: YAML indents with spaces only)"));
}

TEST_CASE("Finding 20: every missing required key is named at once", "[config][first-hour]") {
  TempDir dir;
  std::vector<std::string> required;
  for (const KeyDecl& key : config_schema()) {
    if (key.required && key.store != nullptr) required.emplace_back(key.path);
  }
  REQUIRE(required.size() > 2);
  // Only the name: every other required key is missing.
  const std::string message = error_of(dir.write("gpu.yaml", "name: bare\n"));
  CHECK_THAT(message,
             Catch::Contains(std::to_string(required.size() - 1) + " required keys are missing: "));
  for (const std::string& key : required) {
    if (key != "name") CHECK_THAT(message, Catch::Contains(key));
  }
  // One missing key keeps the one-key message.
  const std::string one =
      error_of(dir.write("one.yaml", replaced(kSmallConfig, "  ways: 16\n", "")));
  CHECK_THAT(one, Catch::Contains("l2.ways: missing required key"));
}

TEST_CASE("Finding 20: a huge bad value is cut in the message, naming how much was left out",
          "[config][first-hour]") {
  TempDir dir;
  const std::string huge(10u << 20, '7');
  const std::string message =
      error_of(dir.write("gpu.yaml", replaced(kSmallConfig, "  count: 4", "  count: x" + huge)));
  CHECK(message.size() < 1200);
  CHECK_THAT(message, Catch::Contains("sm.count: "));
  CHECK_THAT(message, Catch::Contains(" bytes cut] ..."));
  const std::string via_set = error_of(dir.write("ok.yaml", kSmallConfig), {"sm.count=x" + huge});
  CHECK(via_set.size() < 1200);
}
