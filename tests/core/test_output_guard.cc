// refuse_clobbering: an output that names an input file (or another output) is refused up front.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/error.h"
#include "sim/core/output_guard.h"

using namespace memwall;
namespace fs = std::filesystem;

TEST_CASE("Finding 7: an output that is one of the inputs is refused, whatever its spelling",
          "[output_guard][first-hour]") {
  const fs::path dir = fs::temp_directory_path() / "memwall-output-guard";
  fs::create_directories(dir / "sub");
  const std::string input = (dir / "base.yaml").string();
  std::ofstream(input) << "name: x\n";
  const std::string other = (dir / "out.yaml").string();

  CHECK_THROWS_WITH(refuse_clobbering({{"-o", input}}, {{"--config", input}}),
                    Catch::Contains("-o " + input + " is the file --config reads"));
  // Another spelling of the same path, and a symbolic link to it.
  const std::string dotted = (dir / "sub" / ".." / "base.yaml").string();
  CHECK_THROWS_AS(refuse_clobbering({{"--json", dotted}}, {{"--config", input}}), UsageError);
  const fs::path link = dir / "link.yaml";
  fs::remove(link);
  fs::create_symlink(input, link);
  CHECK_THROWS_AS(refuse_clobbering({{"-o", link.string()}}, {{"--config", input}}), UsageError);
  // Two outputs into one file.
  CHECK_THROWS_WITH(refuse_clobbering({{"-o", other}, {"--json", other}}, {}),
                    Catch::Contains("--json and -o both write"));
  // Distinct files, empty paths and standard output pass.
  CHECK_NOTHROW(refuse_clobbering({{"-o", other}, {"--json", ""}, {"--csv", "-"}},
                                  {{"--config", input}, {"--measured", ""}}));
  fs::remove_all(dir);
}
