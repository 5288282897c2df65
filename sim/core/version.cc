#include "sim/core/version.h"

#include "memwall_git_describe.h"

namespace memwall {

const char* memwall_version() { return MEMWALL_VERSION; }

const char* memwall_git_describe() { return MEMWALL_GIT_DESCRIBE; }

std::string memwall_build_text() {
  return std::string("memwall ") + memwall_version() + " (git " + memwall_git_describe() + ")";
}

}  // namespace memwall
