#pragma once
/// The project's error types. Library code throws; only `main` turns an error into a message and
/// an exit code (never `exit()` from library code).

#include <cstdint>
#include <stdexcept>
#include <string>

namespace memwall {

/// Exit codes used by the `memwall` executable.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  ///< a check failed (e.g. verify above tolerance)
inline constexpr int kExitBadInput = 2;  ///< bad config, bad trace, bad command line
inline constexpr int kExitInterrupted = 130;

/// Base of every error memwall reports to the user. `what()` is the full one-line message.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int exit_code = kExitBadInput)
      : std::runtime_error(message), m_exit_code(exit_code) {}
  int exit_code() const { return m_exit_code; }

 private:
  int m_exit_code;
};

/// A malformed quantity ("12 parsecs"). Carries only the reason; callers add file and position.
class UnitError : public Error {
 public:
  using Error::Error;
};

/// A position in a text file, 1-based; line 0 means "unknown".
struct SourcePos {
  std::string file;
  int line = 0;
  int column = 0;
};

/// "FILE:LINE:COL" (as much as is known; "<config>" for no file): how a ConfigError names a place.
std::string format_source_pos(const SourcePos& pos);

/// A bad hardware config: names the file, line and column, the key path and the reason.
/// Message: "FILE:LINE:COL: KEY.PATH: REASON". A key path over 200 bytes or a reason over 600 (a
/// huge bad value quoted in it) is cut in the middle, naming how many bytes were left out.
class ConfigError : public Error {
 public:
  ConfigError(SourcePos pos, std::string key_path, std::string reason);
  const SourcePos& pos() const { return m_pos; }
  const std::string& key_path() const { return m_key_path; }
  const std::string& reason() const { return m_reason; }

 private:
  SourcePos m_pos;
  std::string m_key_path;
  std::string m_reason;
};

/// A bad binary input (trace file): names the file, the byte offset and the reason.
/// Message: "FILE: byte OFFSET: REASON".
class TraceError : public Error {
 public:
  TraceError(std::string file, std::uint64_t offset, std::string reason);
  std::uint64_t offset() const { return m_offset; }

 private:
  std::uint64_t m_offset;
};

/// Bad parameters of a workload or a command (a shape of zero, tiles that do not fit, ...).
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace memwall
