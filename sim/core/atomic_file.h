#pragma once
/// Output files written atomically: the content goes to a temporary file beside the target, which
/// is renamed over the target only once complete. An interrupted or failed run never leaves a
/// truncated file behind (the temporary is removed when the writer is destroyed uncommitted).

#include <fstream>
#include <string>

namespace memwall {

class AtomicFile {
 public:
  /// Opens "PATH.tmp.PID" for writing (binary). Throws Error if it cannot be created.
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  /// Removes the temporary file if `commit` was never called.
  ~AtomicFile();

  /// The stream to write the content into.
  std::ofstream& stream() { return m_out; }
  /// Flushes, closes and renames over the target. Throws Error on any I/O failure.
  void commit();
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
  std::string m_tmp_path;
  std::ofstream m_out;
  bool m_committed = false;
};

/// Writes `content` to `path` atomically.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace memwall
