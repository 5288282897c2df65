// libFuzzer harness of the simulator on fuzzed configs: a tiny FlashAttention-2 trace (the
// checked-in tests/fuzz/corpus/trace/f2-raw: N = 128, d = 64, one head) replayed on whatever
// config the loader accepts.
//
// Input layout as fuzz_config: "MAIN YAML [\n%%base\nBASE YAML] [\n%%set\nKEY=VALUE\n...]"
// (`extends: h200` reaches the presets). A config that loads is simulated with a memory limit
// (SimOptions::max_memory, kMaxMemory; the chip's model counts against it before anything is
// allocated) and, on every other input, the L2 flushed between kernels. The trace is fixed and
// small, so the simulation's work is bounded whatever the config (its events follow the ops);
// libFuzzer's -timeout is the backstop. The report's conservation laws are then checked as in
// fuzz_replay, and the traffic that does not depend on timing (SM -> L2 bytes, FLOPs, CTAs) must
// equal the same trace's on the teaching GPU with the same line and sector sizes.
// The only acceptable failure is a memwall::Error; anything else, or a broken law, is a finding.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "tests/fuzz/fuzz_laws.h"
#include "tests/fuzz/fuzz_util.h"
#include "traces/trace_reader.h"

namespace {

constexpr std::uint64_t kMaxMemory = 256ull << 20;

void require(bool law, const char* what) {
  memwall::fuzz::require_law(law, "fuzz_sim_config", what);
}

/// The fixed trace, written once to the scratch directory (the corpus file less its framing byte).
const std::string& trace_path() {
  static const std::string path = [] {
    std::ifstream in(std::string(MEMWALL_SOURCE_DIR) + "/tests/fuzz/corpus/trace/f2-raw",
                     std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string raw = text.str();
    if (raw.size() < 2) std::abort();
    return memwall::fuzz::write_scratch("sim-config.mwt", std::string_view(raw).substr(1));
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memwall;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto set_parts = fuzz::split_at(input, "\n%%set\n");
  const auto files = fuzz::split_at(set_parts[0], "\n%%base\n");
  std::vector<std::string> overrides;
  for (std::size_t p = 1; p < set_parts.size(); ++p) {
    for (const std::string_view line : fuzz::split_at(set_parts[p], "\n")) {
      if (!line.empty()) overrides.emplace_back(line);
    }
  }
  fuzz::write_scratch("base.yaml", files.size() > 1 ? files[1] : std::string_view("{}"));
  const std::string main_path = fuzz::write_scratch("main.yaml", files[0]);
  HardwareConfig hw;
  try {
    hw = load_config(main_path, overrides);
  } catch (const Error&) {
    return 0;
  }
  try {
    TraceReader reader(trace_path());
    SimOptions options;
    options.max_memory = Bytes{kMaxMemory};
    options.flush_l2_between_kernels = (size & 1) != 0;
    const RunResult r = simulate(hw, reader, options);
    const TrafficCounters& t = r.traffic;
    fuzz::require_report_laws(r, hw, "fuzz_sim_config");
    // What the trace asks for does not depend on the chip's speeds or sizes, only on its sectors.
    static const HardwareConfig teaching = load_config("hypothetical/teaching-gpu");
    if (hw.l2.sector_size.count == teaching.l2.sector_size.count &&
        hw.l2.line_size.count == teaching.l2.line_size.count) {
      static const RunResult reference = [] {
        TraceReader again(trace_path());
        return simulate(teaching, again);
      }();
      require(t.l2_read_bytes == reference.traffic.l2_read_bytes,
              "SM -> L2 read bytes follow the trace");
      require(t.l2_write_bytes == reference.traffic.l2_write_bytes,
              "SM -> L2 write bytes follow the trace");
      require(t.flops == reference.traffic.flops && t.ctas == reference.traffic.ctas,
              "FLOPs and CTAs follow the trace");
    }
  } catch (const Error&) {}
  return 0;
}
