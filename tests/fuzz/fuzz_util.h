#pragma once
/// Helpers shared by the libFuzzer harnesses: a private scratch directory per process and
/// splitting one input into parts at a marker line.

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace memwall::fuzz {

/// A directory under $TMPDIR (or /tmp) private to this process, created on first use and reused
/// by every input (files in it are overwritten, never accumulated).
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/memwall-fuzz-XXXXXX";
    if (!mkdtemp(pattern.data())) std::abort();
    return pattern;
  }();
  return dir;
}

/// Writes `bytes` to scratch_dir()/NAME and returns the path.
inline std::string write_scratch(const std::string& name, std::string_view bytes) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

/// Splits `text` at each occurrence of `marker` (the marker itself dropped).
inline std::vector<std::string_view> split_at(std::string_view text, std::string_view marker) {
  std::vector<std::string_view> parts;
  std::size_t pos = 0;
  while (true) {
    const std::size_t at = text.find(marker, pos);
    if (at == std::string_view::npos) {
      parts.push_back(text.substr(pos));
      return parts;
    }
    parts.push_back(text.substr(pos, at - pos));
    pos = at + marker.size();
  }
}

}  // namespace memwall::fuzz
