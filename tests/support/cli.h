#pragma once
/// Helpers for end-to-end tests that run the built `memwall` executable (MEMWALL_EXE).

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace memwall::test {

/// What a command did: its exit code (-1 if it did not exit normally) and its output.
struct CliResult {
  int code = -1;
  std::string out;  ///< stdout and stderr together, in the order written
};

/// Runs `memwall ARGS` through the shell (ARGS are shell words) from the current directory.
inline CliResult run_memwall(const std::string& args) {
  CliResult r;
  const std::string command = std::string(MEMWALL_EXE) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// The whole content of a file ("" if it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A path in the temporary directory unique to this process: memwall_<tag>_<pid>_<name>.
inline std::string temp_path(const std::string& tag, const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("memwall_" + tag + "_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

}  // namespace memwall::test
