#pragma once
/// An exclusive, advisory lock on an output that a long command writes in steps (a sweep's CSV and
/// its resume sidecar), so that a second process writing the same file is refused at once instead
/// of both finishing "successfully" with one's rows lost (issue 18, finding 8).
///
/// The lock is flock(2) on a lock file beside the output, `OUTPUT.lock`, holding the owner's pid.
/// It is released and the lock file removed when the OutputLock is destroyed (also while an error
/// or Ctrl-C unwinds); a process killed outright leaves the file, but the kernel releases its lock,
/// so the next writer takes it over.

#include <string>

namespace memwall {

/// Holds the lock on `output` for its lifetime.
class OutputLock {
 public:
  /// Takes the lock on `output` (its lock file is `output` + ".lock"). Throws UsageError (exit 2)
  /// naming `flag`, the output, the lock file and the holder's pid when another process holds it,
  /// and Error (exit 2) when the lock file cannot be created.
  OutputLock(const std::string& flag, const std::string& output);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  /// The lock file's path.
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
  int m_fd = -1;
};

}  // namespace memwall
