#pragma once
/// Writes a trace file (docs/trace-format.md) as a stream: memory stays bounded by one CTA's ops
/// and one 64 KiB chunk however long the trace. The file appears, complete, only when `end()` is
/// called (AtomicFile); a writer destroyed earlier leaves nothing behind.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/atomic_file.h"
#include "traces/trace_format.h"
#include "traces/trace_source.h"

namespace memwall {

class TraceWriter final : public TraceSink {
 public:
  /// Opens the temporary beside `path`; throws Error if it cannot be created. `version` is the
  /// format version written (kOldestTraceVersion..kTraceVersion; an older one leaves out the
  /// store tags, which the caller's ops must then not use).
  /// `keep_free`: the bytes the file system holding `path` must keep free; the writer checks
  /// before its first chunk and every kFreeSpaceCheckBytes after, and throws UsageError (the file
  /// removed) rather than fill the disk with a trace of an absurd shape.
  explicit TraceWriter(const std::string& path, std::uint32_t version = kTraceVersion,
                       std::uint64_t keep_free = kKeepFreeBytes);

  /// What a trace leaves free on its file system by default, and how often it looks.
  static constexpr std::uint64_t kKeepFreeBytes = std::uint64_t{1} << 30;
  static constexpr std::uint64_t kFreeSpaceCheckBytes = std::uint64_t{16} << 20;

  void begin(const WorkloadInfo& workload) override;
  void kernel(const KernelInfo& kernel) override;
  void cta_begin() override;
  void op(const Op& op) override;
  void cta_end() override;
  /// Writes the end record and the last chunk, and renames the file into place.
  void end() override;

  /// Bytes written so far (the file's size once `end` has returned).
  std::uint64_t bytes_written() const { return m_bytes; }

 private:
  void put_byte(std::uint8_t b);
  void put_varint(std::uint64_t v);
  void put_string(const std::string& s);
  void flush_chunk();
  void check_free_space();

  AtomicFile m_file;
  std::string m_chunk;  ///< payload of the chunk being filled
  std::vector<Op> m_ops;  ///< the current CTA's ops
  std::vector<std::uint64_t> m_tensor_base;  ///< base address of each tensor
  std::vector<std::uint64_t> m_last_base;  ///< per tensor: previous box base in this CTA
  std::uint64_t m_bytes = 0;
  std::uint64_t m_keep_free;
  std::uint64_t m_next_space_check = 0;  ///< m_bytes at which the free space is looked at next
  std::uint32_t m_version;
  std::uint64_t m_kernels = 0, m_ctas = 0, m_total_ops = 0;
};

}  // namespace memwall
