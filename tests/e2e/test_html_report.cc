// `memwall run --html FILE`: the page, its numbers against the JSON report, its provenance, and
// the output check before simulating. (tests/e2e/html_report.py loads it in headless chromium.)
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/support/cli.h"

namespace {

namespace fs = std::filesystem;

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("memwall-test-html-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

using memwall::test::run_memwall;
using memwall::test::slurp;

const std::string kShape = " --seq 512 --head-dim 64 --heads 2";

/// The JSON text of the first number under "key": in `json` (as the report writes it).
std::string json_token(const std::string& json, const std::string& key) {
  const std::string label = "\"" + key + "\": ";
  const std::size_t at = json.find(label);
  REQUIRE(at != std::string::npos);
  const std::size_t start = at + label.size();
  const std::size_t end = json.find_first_not_of("+-0123456789.eE", start);
  REQUIRE(end > start);
  return json.substr(start, end - start);
}

}  // namespace

TEST_CASE("memwall run --html writes one page whose numbers are the JSON report's", "[run][html]") {
  Scratch s;
  const auto r = run_memwall("run --config h200 --workload flash2" + kShape +
                             " --set \"l2.size=30 MiB\" --html " + s / "page.html" + " --json " +
                             s / "page.json");
  REQUIRE(r.code == 0);
  const std::string page = slurp(s / "page.html");
  const std::string json = slurp(s / "page.json");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  for (const std::string key :
       {"time_s", "dram_read_bytes", "l2_read_bytes", "flops", "achieved_dram_bandwidth"}) {
    INFO(key);
    CHECK(page.find("data-key=\"" + key + "\" data-value=\"" + json_token(json, key) + "\"") !=
          std::string::npos);
  }
  // Kernel figures are keyed by their index in the JSON's "kernels" array.
  CHECK(page.find("data-key=\"kernels.0.resources.hbm_channel.requests\"") != std::string::npos);
  CHECK(page.find("data-key=\"dram_bytes_by_tensor.Q.read\"") != std::string::npos);
  CHECK(page.find("data-key=\"dram_bytes_by_tensor.Q.compulsory\"") != std::string::npos);
  CHECK(page.find("data-key=\"dram_bytes_by_tensor.Q.reread\"") != std::string::npos);
  CHECK(page.find("data-key=\"dram_bytes_by_reason.compulsory\"") != std::string::npos);
  // What produced it: the file, the override, the version; and nothing fetched from anywhere.
  CHECK(page.find("configs/h200.yaml") != std::string::npos);
  CHECK(page.find("--set l2.size=30 MiB") != std::string::npos);
  // The build as `memwall --version` names it ("memwall 0.1.0 (git DESCRIBE)").
  std::string build = run_memwall("--version").out;
  while (!build.empty() && (build.back() == '\n' || build.back() == '\r')) build.pop_back();
  REQUIRE_FALSE(build.empty());
  CHECK(page.find(">" + build + "<") != std::string::npos);
  CHECK(page.find("http") == std::string::npos);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("<svg") != std::string::npos);
}

TEST_CASE("Two workloads on one page are keyed by their index in the JSON array", "[run][html]") {
  Scratch s;
  REQUIRE(run_memwall("run --config h200 --workload naive,flash2" + kShape + " --html " +
                      s / "two.html" + " --json " + s / "two.json")
              .code == 0);
  const std::string page = slurp(s / "two.html");
  CHECK(page.find("data-key=\"0.time_s\"") != std::string::npos);
  CHECK(page.find("data-key=\"1.kernels.0.stall.compute\"") != std::string::npos);
  CHECK(page.find("<th>naive/flash2</th>") != std::string::npos);
  CHECK(page.find("data-key=\"time_s\"") == std::string::npos);
}

TEST_CASE("The same run gives the same page byte for byte", "[run][html]") {
  Scratch s;
  for (const char* name : {"a.html", "b.html"}) {
    REQUIRE(
        run_memwall("run --config h200 --workload naive,flash2" + kShape + " --html " + s / name)
            .code == 0);
  }
  CHECK(slurp(s / "a.html") == slurp(s / "b.html"));
}

TEST_CASE("--html is checked before anything is simulated, as every output", "[run][html]") {
  Scratch s;
  const auto missing =
      run_memwall("run --config h200" + kShape + " --html " + s / "nowhere/page.html");
  CHECK(missing.code == 2);
  CHECK(missing.out.find("--html") != std::string::npos);
  CHECK(missing.out.find("DRAM read") == std::string::npos);  // no report: nothing ran
  const auto clash =
      run_memwall("run --config h200" + kShape + " --html " + s / "x" + " --json " + s / "x");
  CHECK(clash.code == 2);
  CHECK(clash.out.find("--html") != std::string::npos);
  CHECK(clash.out.find("--json") != std::string::npos);
  const auto config =
      run_memwall("run --config configs/h200.yaml" + kShape + " --html configs/h200.yaml");
  CHECK(config.code == 2);
  CHECK(config.out.find("--config") != std::string::npos);
}
