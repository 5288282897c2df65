#pragma once
// Helpers for the reliability tests: run `memwall` as a child process (stdout and stderr captured
// to files), signal it, wait for it with a deadline, and look at a directory's files.

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace memwall::reliability {

/// True when this test binary (and so the memwall it runs) is built with AddressSanitizer, which
/// reserves terabytes of address space and cannot run under RLIMIT_AS.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

using Clock = std::chrono::steady_clock;

/// The whole content of a file ("" if it cannot be read).
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// A fresh empty directory under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / ("memwall-rel-" + tag + "-XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) std::abort();
    m_path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(m_path, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(m_path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return m_path; }
  std::string operator/(const std::string& name) const { return (m_path / name).string(); }
  /// Names of the entries, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(m_path)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path m_path;
};

/// A running `memwall` process. Its stdout and stderr go to files in `dir`.
class Child {
 public:
  /// `address_space_bytes`, when not 0, caps the child's virtual memory (RLIMIT_AS), so a run
  /// that would allocate without bound fails instead of exhausting the machine.
  Child(const std::vector<std::string>& args, const std::filesystem::path& dir,
        std::uint64_t address_space_bytes = 0) {
    m_out = (dir / "stdout.txt").string();
    m_err = (dir / "stderr.txt").string();
    m_pid = ::fork();
    if (m_pid == 0) {
      const int out = ::open(m_out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open(m_err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (address_space_bytes) {
        const rlimit limit{address_space_bytes, address_space_bytes};
        ::setrlimit(RLIMIT_AS, &limit);
      }
      ::dup2(out, 1);
      ::dup2(err, 2);
      std::vector<char*> argv;
      std::string exe = MEMWALL_EXE;
      argv.push_back(exe.data());
      std::vector<std::string> copy = args;
      for (auto& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(exe.c_str(), argv.data());
      ::_exit(127);
    }
  }
  ~Child() {
    if (!m_done) {
      ::kill(m_pid, SIGKILL);
      int status = 0;
      ::waitpid(m_pid, &status, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  void signal(int sig) const { ::kill(m_pid, sig); }
  pid_t pid() const { return m_pid; }

  /// Waits up to `limit` until the child runs memwall (its exec is done), polling without
  /// sleeping so that the caller can act at once. Before the exec the child is a copy of the test,
  /// whose framework catches SIGINT and SIGTERM itself. Returns whether it does.
  bool wait_until_execed(std::chrono::milliseconds limit) const {
    const auto deadline = Clock::now() + limit;
    const std::string exe = "/proc/" + std::to_string(m_pid) + "/exe";
    std::error_code ec;
    while (!std::filesystem::equivalent(exe, MEMWALL_EXE, ec)) {
      if (Clock::now() > deadline || exited()) return false;
      std::this_thread::yield();
    }
    return true;
  }

  /// Waits up to `limit` until memwall catches `sig` (the child has exec'd memwall, and its
  /// handler is installed: the bit of `sig` in the SigCgt mask of /proc/PID/status), so that a
  /// signal sent next reaches memwall's handler and not the default action; a slow start (a
  /// sanitizer build on a loaded machine) would otherwise race the signal. Returns whether
  /// memwall does.
  bool wait_until_catching(int sig, std::chrono::milliseconds limit) const {
    const auto deadline = Clock::now() + limit;
    if (!wait_until_execed(limit)) return false;
    const std::string status = "/proc/" + std::to_string(m_pid) + "/status";
    while (Clock::now() <= deadline) {
      std::ifstream in(status);
      std::string line;
      while (std::getline(in, line)) {
        if (line.rfind("SigCgt:", 0) != 0) continue;
        const unsigned long long mask = std::strtoull(line.c_str() + 7, nullptr, 16);
        if (mask & (1ULL << (sig - 1))) return true;
      }
      if (exited()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  /// Whether the child has exited (a zombie, or gone), without reaping it.
  bool exited() const {
    std::ifstream in("/proc/" + std::to_string(m_pid) + "/stat");
    std::string stat;
    if (!std::getline(in, stat)) return true;
    const std::size_t close = stat.rfind(')');
    return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z';
  }

  /// Waits up to `limit`; returns the exit code, 128+signal if killed by one, or -1 on timeout
  /// (the child is then killed).
  int wait(std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    int status = 0;
    while (true) {
      const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
      if (r == m_pid) break;
      if (Clock::now() > deadline) {
        ::kill(m_pid, SIGKILL);
        ::waitpid(m_pid, &status, 0);
        m_done = true;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    m_done = true;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -2;
  }

  std::string out() const { return slurp(m_out); }
  std::string err() const { return slurp(m_err); }

 private:
  pid_t m_pid = -1;
  bool m_done = false;
  std::string m_out, m_err;
};

/// The result of a finished run.
struct Result {
  int code = 0;
  std::string out;
  std::string err;
  double seconds = 0;
};

/// Runs `memwall ARGS` to completion (at most `limit`), with stdout/stderr captured in `dir`.
inline Result run_memwall(const std::vector<std::string>& args, const std::filesystem::path& dir,
                          std::chrono::milliseconds limit = std::chrono::seconds(60),
                          std::uint64_t address_space_bytes = 0) {
  const auto start = Clock::now();
  Child child(args, dir, address_space_bytes);
  Result r;
  r.code = child.wait(limit);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.out = child.out();
  r.err = child.err();
  return r;
}

/// A process spinning on one core until destroyed (to test determinism under load).
class BusyLoop {
 public:
  BusyLoop() {
    m_pid = ::fork();
    if (m_pid == 0) {
      volatile unsigned long x = 0;
      while (true) x = x + 1;
    }
  }
  ~BusyLoop() {
    ::kill(m_pid, SIGKILL);
    int status = 0;
    ::waitpid(m_pid, &status, 0);
  }
  BusyLoop(const BusyLoop&) = delete;
  BusyLoop& operator=(const BusyLoop&) = delete;

 private:
  pid_t m_pid = -1;
};

}  // namespace memwall::reliability
