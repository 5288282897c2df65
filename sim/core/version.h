#pragma once
/// What build of memwall is running, for reports that must say what produced them.

#include <string>

namespace memwall {

/// The release version, from CMakeLists.txt's project(): "0.1.0".
const char* memwall_version();

/// `git describe --always --tags` of the tree this binary was built from, with "-dirty" when
/// tracked files differed from HEAD, "unknown" when built outside a git checkout. Fixed at build
/// time (cmake/git_describe.cmake), so the same binary always reports the same text.
const char* memwall_git_describe();

/// "memwall 0.1.0 (git DESCRIBE)": how reports and `--version` name the build.
std::string memwall_build_text();

}  // namespace memwall
