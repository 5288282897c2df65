#pragma once
/// The laws every simulation report keeps, checked by the harnesses that reach the simulator
/// (fuzz_replay, fuzz_sim_config): a broken one aborts, which libFuzzer reports as a finding.

#include <cstdio>
#include <cstdlib>

#include "sim/engine/run_result.h"
#include "sim/hw/config.h"

namespace memwall::fuzz {

/// Aborts, naming `harness` and the law, unless `law` holds.
inline void require_law(bool law, const char* harness, const char* what) {
  if (!law) {
    std::fprintf(stderr, "%s: broken law: %s\n", harness, what);
    std::abort();
  }
}

/// L2 reads are whole sectors (hits + misses), DRAM reads are compulsory or re-reads, DRAM writes
/// are write-backs.
inline void require_report_laws(const RunResult& r, const HardwareConfig& hw, const char* harness) {
  const TrafficCounters& t = r.traffic;
  require_law(t.l2_read_bytes == (t.l2_hit_sectors + t.l2_miss_sectors) * hw.l2.sector_size.count,
              harness, "l2_read_bytes = (hits + misses) x sector size");
  require_law(
      t.dram_read_bytes == r.dram_bytes_by_reason.compulsory + r.dram_bytes_by_reason.reread,
      harness, "dram_read_bytes = compulsory + re-read");
  require_law(t.dram_write_bytes == r.dram_bytes_by_reason.writeback, harness,
              "dram_write_bytes = write-backs");
}

}  // namespace memwall::fuzz
