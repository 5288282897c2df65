#pragma once
/// What the engine tells a timeline as it simulates: kernels, CTA residencies, and op-level
/// slices and instants. The engine only calls this interface; sim/report/timeline.h writes it as
/// a Perfetto file, so the engine does not depend on any output format.

#include <cstdint>
#include <string>

#include "sim/core/units.h"

namespace memwall {

class TimelineSink {
 public:
  virtual ~TimelineSink() = default;

  /// Names the tracks: `sm_count` SMs; `config` and `workload` describe the run.
  virtual void begin(std::uint32_t sm_count, const std::string& config,
                     const std::string& workload) = 0;
  /// A kernel launch from `start` to `end`.
  virtual void kernel(const std::string& name, Tick start, Tick end) = 0;
  /// A CTA's whole residency on SM `sm`, slot `slot`.
  virtual void cta(std::uint32_t sm, std::uint32_t slot, const std::string& kernel,
                   std::uint64_t index, Tick start, Tick end) = 0;
  /// True while op-level events are still wanted (the engine skips building them otherwise).
  virtual bool detail() const = 0;
  /// An op-level slice (`args_json` is a JSON object's members without braces, or empty).
  virtual void slice(std::uint32_t sm, std::uint32_t slot, const char* name, Tick start, Tick end,
                     const std::string& args_json) = 0;
  /// An op-level instant event.
  virtual void instant(std::uint32_t sm, std::uint32_t slot, const char* name, Tick at,
                       const std::string& args_json) = 0;
  /// An op-level event at `at` that the engine did not build because detail() was false: counted
  /// as dropped, so that the file and the user can be told what the budget left out.
  virtual void drop_detail(Tick at) = 0;
};

}  // namespace memwall
