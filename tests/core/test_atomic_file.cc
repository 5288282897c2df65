#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/core/interrupt.h"
#include "tests/support/cli.h"

using namespace memwall;
namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) { return memwall::test::slurp(p.string()); }

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("memwall-test-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("A committed atomic file replaces the target whole", "[atomic_file]") {
  const fs::path dir = fresh_dir("atomic-commit");
  const fs::path target = dir / "out.json";
  write_file_atomically(target.string(), "old");
  write_file_atomically(target.string(), "new content");
  CHECK(read_all(target) == "new content");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
}

TEST_CASE("An atomic file abandoned before commit leaves the old target and no temporary",
          "[atomic_file]") {
  const fs::path dir = fresh_dir("atomic-abandon");
  const fs::path target = dir / "out.csv";
  write_file_atomically(target.string(), "complete");
  try {
    AtomicFile file(target.string());
    file.stream() << "half a row,";
    throw Interrupted();
  } catch (const Interrupted&) {}
  CHECK(read_all(target) == "complete");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
}

TEST_CASE("An atomic file in a missing directory is a clear error", "[atomic_file]") {
  CHECK_THROWS_WITH(AtomicFile("/nonexistent-dir-memwall/x.json"),
                    Catch::Contains("cannot create"));
}

TEST_CASE("The interrupt flag makes throw_if_interrupted throw with exit code 130", "[interrupt]") {
  clear_interrupt();
  CHECK_NOTHROW(throw_if_interrupted());
  request_interrupt();
  try {
    throw_if_interrupted();
    FAIL("expected Interrupted");
  } catch (const Interrupted& e) {
    CHECK(e.exit_code() == 130);
  }
  clear_interrupt();
}
