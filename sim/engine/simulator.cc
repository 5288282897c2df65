#include "sim/engine/simulator.h"

#include "sim/core/error.h"
#include "sim/engine/engine.h"

namespace memwall {

RunResult simulate(const HardwareConfig& config, TraceSource& source, const SimOptions& options,
                   TimelineSink* timeline) {
  if (config.sm.count == 0) throw UsageError("config: sm.count must be > 0");
  const MemoryBudget budget(options.max_memory.count != 0 ? options.max_memory
                                                          : default_memory_limit());
  budget.check_up_front(Engine::fixed_memory_bytes(config),
                        "the model of " + config.name + " (its L2 arrays, HBM banks and SMs)");
  Engine engine(config, source, options, timeline);
  return engine.run();
}

}  // namespace memwall
