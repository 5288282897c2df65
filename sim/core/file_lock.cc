#include "sim/core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "sim/core/error.h"

namespace memwall {
namespace {

/// The pid written in the lock file at `fd`, or "" when it holds none.
std::string holder_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.find_first_not_of("0123456789") == std::string::npos ? text : std::string();
}

}  // namespace

OutputLock::OutputLock(const std::string& flag, const std::string& output)
    : m_path(output + ".lock") {
  // A lock file unlinked by its previous holder between our open and our flock is not the one
  // the next writer would lock: retry until the locked file is the one the path names.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(m_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      throw Error(flag + " " + output + ": cannot create its lock file " + m_path + ": " +
                  std::strerror(errno));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string holder = holder_of(fd);
      ::close(fd);
      if (err == EWOULDBLOCK) {
        throw UsageError(flag + " " + output + ": another memwall" +
                         (holder.empty() ? std::string() : " (pid " + holder + ")") +
                         " is writing this output (it holds " + m_path +
                         "); wait for it to finish, or write to another file");
      }
      throw Error(flag + " " + output + ": cannot lock " + m_path + ": " + std::strerror(err));
    }
    struct stat locked {};
    struct stat named {};
    if (::fstat(fd, &locked) == 0 && ::stat(m_path.c_str(), &named) == 0 &&
        locked.st_dev == named.st_dev && locked.st_ino == named.st_ino) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) == 0) {
        const ssize_t written = ::pwrite(fd, pid.data(), pid.size(), 0);
        (void)written;  // the pid is for the refusal message only
      }
      m_fd = fd;
      return;
    }
    ::close(fd);
  }
  throw Error(flag + " " + output + ": cannot lock " + m_path + ": it keeps being replaced");
}

OutputLock::~OutputLock() {
  if (m_fd < 0) return;
  // Unlinked while still locked, so that no other writer can lock this file after us.
  ::unlink(m_path.c_str());
  ::close(m_fd);
}

}  // namespace memwall
