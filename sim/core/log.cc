#include "sim/core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "sim/core/error.h"

namespace memwall {

void set_log_level(const std::string& name) {
  const spdlog::level::level_enum level = spdlog::level::from_str(name);
  if (level == spdlog::level::off && name != "off") {
    throw UsageError("unknown log level \"" + name +
                     "\" (use trace, debug, info, warn, error, off)");
  }
  static const auto logger = [] {
    auto l = spdlog::stderr_color_mt("memwall");
    l->set_pattern("memwall: %l: %v");
    spdlog::set_default_logger(l);
    return l;
  }();
  logger->set_level(level);
}

}  // namespace memwall
