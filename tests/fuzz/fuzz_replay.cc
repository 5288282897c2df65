// libFuzzer harness of the simulator on fuzzed traces: what `memwall replay` does with a trace
// file, on the teaching GPU (configs/hypothetical/teaching-gpu.yaml, 4 SMs, 1 MiB L2).
//
// The input becomes a trace file as in fuzz_trace (first byte even: the rest as is; odd: the rest
// framed into chunks with correct CRC-32s, so mutations reach the record decoder). A first pass
// reads every kernel and CTA and adds up the bytes of the global and shared-memory boxes and the
// ops: a trace above the budget (kMaxBoxBytes, kMaxOps) is read but not simulated, because the
// simulator's work is proportional to the bytes it moves (that is the time budget; libFuzzer's
// -timeout is the backstop). The simulation runs under a memory limit (SimOptions::max_memory,
// kMaxMemory). Then the report's conservation laws are checked:
//   l2_read_bytes = (l2_hit_sectors + l2_miss_sectors) · sector_size,
//   dram_read_bytes = compulsory + re-read, dram_write_bytes = write-backs,
//   the kernels' counters add up to the run's, and the run ends when its last kernel does.
// The only acceptable failure is a memwall::Error (a TraceError, or the memory limit's
// UsageError); anything else, or a broken law, is a finding.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "tests/fuzz/fuzz_laws.h"
#include "tests/fuzz/fuzz_util.h"
#include "traces/op.h"
#include "traces/trace_format.h"
#include "traces/trace_reader.h"

namespace {

/// Traces moving more box bytes than this, or holding more ops, are not simulated.
constexpr std::uint64_t kMaxBoxBytes = 64ull << 20;
constexpr std::uint64_t kMaxOps = 200'000;
/// The simulation's memory limit.
constexpr std::uint64_t kMaxMemory = 256ull << 20;

/// Whether the trace at `path` is within the budget (reading it whole; throws TraceError).
bool within_budget(const std::string& path) {
  memwall::TraceReader reader(path);
  memwall::KernelInfo kernel;
  std::vector<memwall::Op> ops;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  while (reader.next_kernel(kernel)) {
    while (reader.next_cta(ops)) {
      for (const memwall::Op& op : ops) {
        if (++count > kMaxOps) return false;
        const auto& b = op.box;
        // rows × row_bytes, saturating (each factor is below 2^32).
        const std::uint64_t box = static_cast<std::uint64_t>(b.rows) * b.row_bytes;
        bytes += box;
        if (box > kMaxBoxBytes || bytes > kMaxBoxBytes) return false;
      }
    }
  }
  return true;
}

void require(bool law, const char* what) { memwall::fuzz::require_law(law, "fuzz_replay", what); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memwall;
  if (size == 0) return 0;
  static const HardwareConfig hw = load_config("hypothetical/teaching-gpu");
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string path = fuzz::write_scratch(
      "replay.mwt",
      (data[0] & 1) ? std::string_view(frame_trace(rest, (data[0] >> 1) + 1u)) : rest);
  try {
    if (!within_budget(path)) return 0;
    TraceReader reader(path);
    SimOptions options;
    options.max_memory = Bytes{kMaxMemory};
    options.flush_l2_between_kernels = (data[0] & 2) != 0;
    const RunResult r = simulate(hw, reader, options);
    const TrafficCounters& t = r.traffic;
    fuzz::require_report_laws(r, hw, "fuzz_replay");
    TrafficCounters sum;
    Tick last_end = 0;
    for (const KernelResult& k : r.kernels) {
      sum.add(k.traffic);
      require(k.end >= k.start, "a kernel ends after it starts");
      last_end = std::max(last_end, k.end);
    }
    require(sum.dram_read_bytes == t.dram_read_bytes && sum.l2_read_bytes == t.l2_read_bytes &&
                sum.l2_write_bytes == t.l2_write_bytes && sum.ctas == t.ctas &&
                sum.flops == t.flops,
            "the kernels' counters add up to the run's");
    require(r.kernels.empty() || r.time == last_end, "the run ends with its last kernel");
  } catch (const Error&) {}
  return 0;
}
