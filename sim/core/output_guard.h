#pragma once
/// No output ever overwrites an input: a command checks its output paths against its input files
/// before doing any work.

#include <string>
#include <utility>
#include <vector>

namespace memwall {

/// A command-line file argument: the flag that named it ("--config", "-o") and its path.
struct FileArgument {
  std::string flag;
  std::string path;
};

/// Throws UsageError, naming both flags, when an output names the same file as an input or as
/// another output (the same path, a link to it or another spelling of it). Empty paths are
/// ignored, and so is "-" (standard output).
void refuse_clobbering(const std::vector<FileArgument>& outputs, const std::vector<FileArgument>& inputs);

}  // namespace memwall
