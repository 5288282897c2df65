#include "sim/engine/simulator.h"

#include "sim/core/error.h"
#include "sim/engine/engine.h"

namespace memwall {

RunResult simulate(const HardwareConfig& config, TraceSource& source, const SimOptions& options,
                   TimelineSink* timeline) {
  if (config.sm.count == 0) throw UsageError("config: sm.count must be > 0");
  Engine engine(config, source, options, timeline);
  return engine.run();
}

}  // namespace memwall
