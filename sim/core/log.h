#pragma once
/// Logging setup. Library code logs through spdlog's default logger (stderr); `main` sets the level.

#include <string>

namespace memwall {

/// Sets the level of the default logger from a name: trace, debug, info, warn, error, off.
/// Throws UsageError on an unknown name.
void set_log_level(const std::string& name);

}  // namespace memwall
