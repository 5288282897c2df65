// The registered stats (figure_stats, resource_stats, tensor_stats in sim/engine/run_result.cc)
// are what the reports show: the JSON report has each registered figure at the run's level and
// every kernel's, in registry order, each resource class and tensor object has exactly the
// registered members in order, and the text report has a row for each figure with a text label,
// in the same order, and none for the others.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "models/model_source.h"
#include "sim/core/json.h"
#include "sim/engine/simulator.h"
#include "sim/report/report_json.h"
#include "sim/report/report_text.h"
#include "tests/support/engine.h"

using namespace memwall;
using namespace memwall::test;

namespace {

RunResult naive_run() {
  WorkloadParams p;
  p.workload = WorkloadKind::naive;
  p.seq = 512;
  p.head_dim = 64;
  p.heads = 2;
  const std::unique_ptr<TraceSource> source = make_model_source(p);
  return simulate(small_config(), *source, {});
}

std::vector<std::string> keys_of(const JsonValue& object) {
  std::vector<std::string> keys;
  for (const JsonMember& m : object.members) keys.push_back(m.key);
  return keys;
}

/// Whether `names` occur in `keys` in this order (other keys may come between).
bool in_order(const std::vector<std::string>& keys, const std::vector<std::string>& names) {
  std::size_t at = 0;
  for (const std::string& name : names) {
    while (at < keys.size() && keys[at] != name) ++at;
    if (at == keys.size()) return false;
    ++at;
  }
  return true;
}

std::uint64_t integer(const JsonValue& object, const char* key) {
  const JsonValue* v = object.get(key);
  REQUIRE(v != nullptr);
  return std::stoull(v->text);
}

}  // namespace

TEST_CASE("The JSON report has the registered figures, resource and tensor members, in order",
          "[report][registry]") {
  const RunResult r = naive_run();
  REQUIRE(r.kernels.size() > 1);
  const JsonValue doc = parse_json(run_to_json(r), "report");
  std::vector<std::string> figures;
  for (const FigureStat& f : figure_stats()) figures.emplace_back(f.name);
  std::vector<std::string> resource;
  for (const ResourceStat& s : resource_stats()) resource.emplace_back(s.name);
  std::vector<std::string> tensor;
  for (const TensorStat& s : tensor_stats()) tensor.emplace_back(s.name);

  CHECK(in_order(keys_of(doc), figures));
  CHECK(integer(doc, "dram_bytes") == r.traffic.dram_read_bytes + r.traffic.dram_write_bytes);
  const JsonValue* tensors = doc.get("dram_bytes_by_tensor");
  REQUIRE(tensors != nullptr);
  REQUIRE(tensors->members.size() == r.dram_bytes_by_tensor.size());
  for (const JsonMember& t : tensors->members) CHECK(keys_of(t.value) == tensor);
  const JsonValue* kernels = doc.get("kernels");
  REQUIRE(kernels != nullptr);
  REQUIRE(kernels->items.size() == r.kernels.size());
  for (std::size_t k = 0; k < r.kernels.size(); ++k) {
    const JsonValue& kernel = kernels->items[k];
    INFO("kernel " << r.kernels[k].name);
    CHECK(in_order(keys_of(kernel), figures));
    CHECK(integer(kernel, "dram_bytes") ==
          r.kernels[k].traffic.dram_read_bytes + r.kernels[k].traffic.dram_write_bytes);
    const JsonValue* resources = kernel.get("resources");
    REQUIRE(resources != nullptr);
    REQUIRE(resources->members.size() == kResourceClassCount);
    for (const JsonMember& c : resources->members) CHECK(keys_of(c.value) == resource);
  }
}

TEST_CASE("The text report's figure rows are the figures with a text label, in registry order",
          "[report][registry]") {
  const RunResult r = naive_run();
  std::istringstream text(format_run_report(r));
  std::vector<std::string> labels;  // the first word(s) of each line, up to two spaces
  for (std::string line; std::getline(text, line);)
    labels.push_back(line.substr(0, line.find("  ")));
  std::vector<std::string> shown;
  for (const FigureStat& f : figure_stats()) {
    if (f.text.empty()) continue;
    shown.emplace_back(f.text);
  }
  CHECK(in_order(labels, shown));
  for (const FigureStat& f : figure_stats()) {
    if (!f.label.empty() && f.text.empty()) {
      INFO(f.name);
      CHECK(std::find(labels.begin(), labels.end(), std::string(f.label)) == labels.end());
    }
  }
  // The resource table's header is the resource figures with a text label, in order.
  const std::string report = format_run_report(r);
  std::vector<std::string> columns;
  for (const ResourceStat& s : resource_stats()) {
    if (!s.text.empty()) columns.emplace_back(s.text);
  }
  REQUIRE(columns.size() >= 2);
  bool found = false;
  std::istringstream lines(report);
  for (std::string line; std::getline(lines, line) && !found;) {
    std::size_t at = 0;
    found = true;
    for (const std::string& c : columns) {
      at = line.find(c, at);
      if (at == std::string::npos) {
        found = false;
        break;
      }
      at += c.size();
    }
  }
  CHECK(found);
}

TEST_CASE("The text report rounds a mean wait from ticks, not from its seconds",
          "[report][registry]") {
  // 61 ps over 2 requests is 30.5 ps: rounds to 31 ps; through seconds (3.05e-11 × 10^12 =
  // 30.499999999999996) it would print 30 ps.
  RunResult r = naive_run();
  ResourceUse& port = r.kernels[0].resources[static_cast<std::size_t>(ResourceClass::kSmPort)];
  port.requests = 2;
  port.queue = 61;
  std::istringstream text(format_run_report(r));
  std::string port_line;
  for (std::string line; std::getline(text, line);) {
    if (line.find("sm_port") != std::string::npos) {
      port_line = line;
      break;  // the first kernel's table comes first
    }
  }
  CHECK(port_line.find("31 ps") != std::string::npos);
}
