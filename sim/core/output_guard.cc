#include "sim/core/output_guard.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "sim/core/error.h"

namespace memwall {
namespace {

namespace fs = std::filesystem;

/// True when `a` and `b` name one file: equivalent when both exist, else the same canonical path.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool same = fs::equivalent(a, b, ec);
    if (!ec) return same;
  }
  const fs::path ca = fs::weakly_canonical(a, ec);
  if (ec) return false;
  const fs::path cb = fs::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

bool ignored(const FileArgument& f) { return f.path.empty() || f.path == "-"; }

/// Throws UsageError naming `out` when it cannot be written: a directory, or a file in a folder
/// that is missing or where no file can be created (probed with a temporary file, removed again:
/// /proc, a read-only mount and a folder without write permission all fail here, before any work).
void check_writable(const FileArgument& out) {
  std::error_code ec;
  if (fs::is_directory(out.path, ec)) {
    throw UsageError(out.flag + " " + out.path + ": is a directory (give a file name)");
  }
  const fs::path parent = fs::path(out.path).parent_path();
  const fs::path dir = parent.empty() ? fs::path(".") : parent;
  if (!fs::is_directory(dir, ec)) {
    throw UsageError(out.flag + " " + out.path + ": no such directory " + dir.string());
  }
  std::string probe = (dir / ".memwall-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    throw UsageError(out.flag + " " + out.path + ": cannot create a file in " + dir.string());
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

void refuse_clobbering(const std::vector<FileArgument>& outputs,
                       const std::vector<FileArgument>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const FileArgument& out = outputs[i];
    if (ignored(out)) continue;
    check_writable(out);
    for (const FileArgument& in : inputs) {
      if (!ignored(in) && same_file(out.path, in.path)) {
        throw UsageError(out.flag + " " + out.path + " is the file " + in.flag +
                         " reads; an output never overwrites an input (write it elsewhere)");
      }
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (!ignored(outputs[j]) && same_file(out.path, outputs[j].path)) {
        throw UsageError(out.flag + " and " + outputs[j].flag + " both write " + out.path);
      }
    }
  }
}

}  // namespace memwall
