#pragma once
/// Reads a trace file (docs/trace-format.md) as a TraceSource, streaming: memory stays bounded by
/// one 64 KiB chunk and one CTA's ops however long the file. Every defect — a wrong magic, an
/// unsupported version, a truncated file, a checksum mismatch, an invalid record, op kind or
/// field, counts that disagree, trailing bytes — is a TraceError naming the file, the byte offset
/// and the reason; the reader never crashes or loops on bad input.

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "traces/trace_source.h"

namespace memwall {

class TraceReader final : public TraceSource {
 public:
  /// Opens `path` and reads the prologue and the workload record; throws TraceError.
  explicit TraceReader(const std::string& path);

  const WorkloadInfo& workload() const override { return m_info; }
  /// Reaching the end record also checks its totals and that nothing follows it.
  bool next_kernel(KernelInfo& kernel) override;
  bool next_cta(std::vector<Op>& ops) override;

  /// The format version of the file.
  std::uint32_t version() const { return m_version; }

 private:
  [[noreturn]] void fail(std::uint64_t offset, const std::string& reason) const;
  std::uint64_t offset() const { return m_chunk_offset + m_pos; }
  bool load_chunk();
  std::uint8_t get();
  std::uint64_t get_varint(const char* what);
  std::uint32_t get_u32_field(const char* what);
  std::string get_string(const char* what);
  void read_workload();
  void read_cta(std::vector<Op>& ops);
  void finish();

  std::string m_path;
  std::ifstream m_in;
  std::uint32_t m_version = 0;
  std::vector<char> m_chunk;  ///< the current chunk's payload
  std::size_t m_pos = 0;  ///< next byte of m_chunk
  std::uint64_t m_chunk_offset = 0;  ///< file offset of m_chunk[0]
  std::uint64_t m_next_offset = 0;  ///< file offset of the next chunk header
  WorkloadInfo m_info;
  std::vector<Op> m_scratch;  ///< CTAs skipped by next_kernel are decoded here
  std::vector<std::uint64_t> m_last_base;  ///< per tensor: previous box base in the current CTA
  std::string m_kernel_name;
  std::uint64_t m_kernel_ctas = 0;
  std::uint64_t m_ctas_left = 0;
  bool m_done = false;
  std::uint64_t m_kernels = 0, m_ctas = 0, m_ops = 0;
};

}  // namespace memwall
