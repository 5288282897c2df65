// End-to-end tests of the explainer commands (ledger, race, traffic, roofline) through the
// built `memwall` executable.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "models/closed_forms.h"
#include "models/explain/json_reader.h"
#include "sim/hw/config.h"
#include "sim/hw/config_loader.h"

using namespace memwall;

namespace {

struct Result {
  int exit_code = -1;
  std::string out;  ///< stdout and stderr together
};

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("memwall_explain_cli_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Result run(const std::string& args) {
  const std::string out_file = temp_path("out.txt");
  const std::string command = std::string(MEMWALL_EXE) + " " + args + " > " + out_file + " 2>&1";
  const int status = std::system(command.c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out_file);
  std::filesystem::remove(out_file);
  return r;
}

}  // namespace

TEST_CASE("memwall ledger prints the same ledger twice and rejects a zero row", "[cli][explain]") {
  const Result a = run("ledger --row-len 64 --tile 16 --late-max --seed 9");
  const Result b = run("ledger --row-len 64 --tile 16 --late-max --seed 9");
  CHECK(a.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.find("streamed, no rescale") != std::string::npos);
  const Result bad = run("ledger --row-len 0 --tile 4");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("--row-len must be at least 1") != std::string::npos);
}

TEST_CASE("memwall race prints one row per N with the CPU caveat", "[cli][explain]") {
  const Result r = run("race --seq 32,64 --head-dim 8 --repeat 1");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("no HBM/SRAM split") != std::string::npos);
  CHECK(r.out.find("MISMATCH") == std::string::npos);
  CHECK(run("race --seq 0 --head-dim 8").exit_code == 2);
}

TEST_CASE("memwall traffic --json carries the closed-form bytes", "[cli][explain]") {
  const std::string json = temp_path("traffic.json");
  const Result r = run("traffic --seq 2048 --head-dim 64 --heads 2 --sram \"64 KiB\" --json " + json);
  REQUIRE(r.exit_code == 0);
  const explain::JsonValue doc = explain::parse_json(slurp(json), json);
  std::filesystem::remove(json);
  const explain::JsonValue* variants = doc.get("variants");
  REQUIRE(variants != nullptr);
  REQUIRE(variants->items.size() == 3u);
  for (const explain::JsonValue& v : variants->items) {
    WorkloadParams p;
    p.workload = parse_workload_kind(v.get("workload")->text);
    p.seq = 2048;
    p.head_dim = 64;
    p.heads = 2;
    p.sram_bytes = 64 * 1024;
    const Traffic t = closed_form_traffic(p);
    CHECK(v.get("read_bytes")->text == std::to_string(t.read_bytes));
    CHECK(v.get("write_bytes")->text == std::to_string(t.write_bytes));
  }
  CHECK(run("traffic --seq 64 --head-dim 64 --sram 12").exit_code == 2);
}

TEST_CASE("memwall roofline's ridge point is the config's peak over its HBM bandwidth", "[cli][explain]") {
  const HardwareConfig config = load_config("h200");
  const double peak = config.sm.tensor_flops_per_cycle * config.sm.clock.hertz * config.sm.count;
  const double ridge = peak / config.hbm.bandwidth.bytes_per_second;
  const std::string json = temp_path("roof.json");
  const Result r = run("roofline --config h200 --intensity 2 --intensity 5000 --json " + json);
  REQUIRE(r.exit_code == 0);
  const explain::JsonValue doc = explain::parse_json(slurp(json), json);
  std::filesystem::remove(json);
  CHECK(doc.get("chip")->get("ridge_point_tensor")->number == Approx(ridge).epsilon(1e-8));
  const explain::JsonValue& points = *doc.get("points");
  REQUIRE(points.items.size() == 2u);
  CHECK(points.items[0].get("attainable_tensor")->number ==
        Approx(2 * config.hbm.bandwidth.bytes_per_second).epsilon(1e-8));
  CHECK(points.items[1].get("attainable_tensor")->number == Approx(peak).epsilon(1e-8));
}

TEST_CASE("memwall roofline places a report's kernels and rejects a bad report", "[cli][explain]") {
  const Result r = run(std::string("roofline --config h200 --from ") + MEMWALL_TEST_DATA + "/roofline_report.json");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("naive/qk") != std::string::npos);
  CHECK(r.out.find("naive/softmax") != std::string::npos);
  const std::string bad = temp_path("bad.json");
  {
    std::ofstream out(bad);
    out << "{\"kernels\": [{\"name\": \"k\", \"flops\": -1}]}";
  }
  const Result e = run("roofline --config h200 --from " + bad);
  std::filesystem::remove(bad);
  CHECK(e.exit_code == 2);
  CHECK(e.out.find("kernels[0].flops") != std::string::npos);
  CHECK(run("roofline --config h200 --from /nonexistent/report.json").exit_code == 2);
}
