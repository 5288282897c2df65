#include "sim/core/output_guard.h"

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

}  // namespace

void refuse_clobbering(const std::vector<FileArgument>& outputs, const std::vector<FileArgument>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const FileArgument& out = outputs[i];
    if (ignored(out)) continue;
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
