#pragma once
// Helpers shared by the hw tests: a small valid config as text, temporary files, and the position
// of a piece of text inside a config (so expected line:column are computed, not copied).

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace memwall::test {

/// A complete, valid config (the teaching GPU's numbers), one key per line.
inline const std::string kSmallConfig = R"(name: Small
description: a small valid config
sm:
  count: 4
  clock: 1 GHz
  smem_per_sm: 64 KiB
  smem_per_block: 64 KiB
  max_threads_per_sm: 1024
  max_threads_per_block: 1024
  tensor_flops_per_cycle: 1024
  fp32_flops_per_cycle: 128
xbar:
  port_bandwidth: 64 B/cycle
  latency: 50 cycles
l2:
  size: 1 MiB
  ways: 16
  slices: 4
  partitions: 1
  hit_latency: 200 cycles
  bandwidth: 256 B/cycle
hbm:
  capacity: 1 GiB
  channels: 4
  bandwidth: 100 GB/s
  latency: 300 cycles
)";

/// A fresh directory under the system temp dir, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    m_path = std::filesystem::temp_directory_path() /
             ("memwall_test_hw_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(m_path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  /// Writes `content` to NAME inside the directory and returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    const std::string p = (m_path / name).string();
    std::ofstream(p) << content;
    return p;
  }
  std::string path() const { return m_path.string(); }

 private:
  std::filesystem::path m_path;
};

/// `text` with the first occurrence of `from` replaced by `to` (which must occur).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("test bug: \"" + from + "\" not in text");
  return text.replace(at, from.size(), to);
}

/// "LINE:COL" (1-based) of the first occurrence of `needle` in `text`.
inline std::string position_of(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  if (at == std::string::npos) throw std::runtime_error("test bug: \"" + needle + "\" not in text");
  const std::string before = text.substr(0, at);
  const auto line = 1 + std::count(before.begin(), before.end(), '\n');
  const auto last_newline = before.rfind('\n');
  const auto column = last_newline == std::string::npos ? at + 1 : at - last_newline;
  return std::to_string(line) + ":" + std::to_string(column);
}

}  // namespace memwall::test
