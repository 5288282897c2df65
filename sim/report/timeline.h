#pragma once
/// The `--timeline` file: Chrome/Perfetto trace-event JSON (open it at ui.perfetto.dev).
///
/// Layout: process 0 "kernels" holds one slice per kernel launch; process s+1 is SM s, with one
/// thread (track) per resident-CTA slot of that SM. A CTA is a slice on its slot's track; inside
/// it, compute / smem ops and memory waits are nested slices and loads/stores are instant events.
///
/// Bounded: every kernel slice is written; CTA slices are written until `cta_budget` of them,
/// op-level events until `detail_budget` of them (so the first CTAs of the run are in full detail
/// and later ones are summarised by their CTA slice only, then dropped). The counts written and
/// dropped are recorded in the file's "metadata" object.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/atomic_file.h"
#include "sim/core/units.h"
#include "sim/engine/timeline_sink.h"

namespace memwall {

/// The Perfetto writer of the engine's timeline events.
class Timeline final : public TimelineSink {
 public:
  static constexpr std::uint64_t kDefaultDetailBudget = 200'000;
  static constexpr std::uint64_t kDefaultCtaBudget = 200'000;

  /// Opens `path` (atomically written: nothing appears until finish()).
  explicit Timeline(std::string path, std::uint64_t detail_budget = kDefaultDetailBudget,
                    std::uint64_t cta_budget = kDefaultCtaBudget);

  /// Names the tracks: `sm_count` SMs; `config` and `workload` go into the metadata.
  void begin(std::uint32_t sm_count, const std::string& config,
             const std::string& workload) override;
  /// A kernel launch from `start` to `end`.
  void kernel(const std::string& name, Tick start, Tick end) override;
  /// A CTA's whole residency on SM `sm`, slot `slot`.
  void cta(std::uint32_t sm, std::uint32_t slot, const std::string& kernel, std::uint64_t index,
           Tick start, Tick end) override;
  /// True while op-level events are still being written.
  bool detail() const override { return m_detail_written < m_detail_budget; }
  /// An op-level slice (`args_json` is a JSON object's members without braces, or empty).
  void slice(std::uint32_t sm, std::uint32_t slot, const char* name, Tick start, Tick end,
             const std::string& args_json) override;
  /// An op-level instant event.
  void instant(std::uint32_t sm, std::uint32_t slot, const char* name, Tick at,
               const std::string& args_json) override;
  /// Counts an op-level event the engine skipped past the budget.
  void drop_detail(Tick at) override;
  /// Writes the metadata and commits the file.
  void finish();

  /// Op-level events and CTA slices left out by the budgets, and where the first op-level event
  /// was left out (kMaxTick when none was).
  std::uint64_t op_events_dropped() const { return m_detail_dropped; }
  std::uint64_t cta_slices_dropped() const { return m_cta_dropped; }
  Tick first_drop() const { return m_first_drop; }
  std::uint64_t op_event_budget() const { return m_detail_budget; }

 private:
  void event_prefix(char phase, std::uint32_t pid, std::uint32_t tid, Tick ts);
  void name_thread(std::uint32_t sm, std::uint32_t slot);
  /// Counts an op-level event against the budget; when it fits, writes its prefix and returns true.
  bool begin_detail(char phase, std::uint32_t sm, std::uint32_t slot, Tick ts);
  /// Ends an op-level event: its name, its args (when not empty) and the closing brace.
  void end_detail(const char* name, const std::string& args_json);

  AtomicFile m_file;
  std::uint64_t m_detail_budget;
  std::uint64_t m_cta_budget;
  std::uint64_t m_detail_written = 0;
  std::uint64_t m_detail_dropped = 0;
  Tick m_first_drop = kMaxTick;  ///< earliest op-level event left out
  std::uint64_t m_cta_written = 0;
  std::uint64_t m_cta_dropped = 0;
  std::uint64_t m_kernels = 0;
  bool m_first = true;
  std::string m_config;
  std::string m_workload;
  std::vector<std::vector<bool>> m_named;  ///< [sm][slot]: thread name written
};

}  // namespace memwall
