#pragma once
/// No output ever overwrites an input, and none is found unwritable after the work: a command
/// checks its output paths against its input files, and that they can be written, before doing
/// any work.

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
/// another output (the same path, a link to it or another spelling of it); and naming the output
/// when it cannot be written (a directory, a missing folder, a folder where no file can be
/// created). Empty paths are ignored, and so is "-" (standard output).
void refuse_clobbering(const std::vector<FileArgument>& outputs,
                       const std::vector<FileArgument>& inputs);

}  // namespace memwall
