#include "traces/trace_writer.h"

#include <filesystem>
#include <system_error>

#include "sim/core/error.h"
#include "sim/core/units.h"
#include "traces/trace_format.h"

namespace memwall {

TraceWriter::TraceWriter(const std::string& path, std::uint32_t version, std::uint64_t keep_free)
    : m_file(path), m_keep_free(keep_free), m_version(version) {
  m_chunk.reserve(kMaxChunkPayload);
  std::string prologue(kTraceMagic, sizeof kTraceMagic);
  put_u32(prologue, m_version);
  put_u32(prologue, 0);
  m_file.stream().write(prologue.data(), static_cast<std::streamsize>(prologue.size()));
  m_bytes += prologue.size();
}

void TraceWriter::put_byte(std::uint8_t b) {
  m_chunk.push_back(static_cast<char>(b));
  if (m_chunk.size() == kMaxChunkPayload) flush_chunk();
}

void TraceWriter::put_varint(std::uint64_t v) {
  while (v >= 0x80) {
    put_byte(static_cast<std::uint8_t>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  put_byte(static_cast<std::uint8_t>(v));
}

void TraceWriter::put_string(const std::string& s) {
  if (s.size() > kMaxTraceString) {
    throw Error(m_file.path() + ": string longer than " + std::to_string(kMaxTraceString) +
                " bytes cannot be written to a trace");
  }
  put_varint(s.size());
  for (char c : s) put_byte(static_cast<std::uint8_t>(c));
}

void TraceWriter::check_free_space() {
  const std::string& path = m_file.path();
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code error;
  const std::filesystem::space_info space = std::filesystem::space(dir.empty() ? "." : dir, error);
  if (error) return;  // nothing to go by: the writes' own check stays
  const std::uint64_t free = space.available;
  if (free >= m_keep_free) return;
  throw UsageError(path + ": stopped after " + format_bytes(Bytes{m_bytes}) +
                   ": its file system has " + format_bytes(Bytes{free}) +
                   " free, and a trace leaves at least " + format_bytes(Bytes{m_keep_free}) +
                   "; a trace of this shape would fill it. Choose a smaller shape, another "
                   "directory, or `memwall trace --counts` (its traffic without a file)");
}

void TraceWriter::flush_chunk() {
  if (m_chunk.empty()) return;
  if (m_bytes >= m_next_space_check) {
    check_free_space();
    m_next_space_check = m_bytes + kFreeSpaceCheckBytes;
  }
  std::string header;
  put_u32(header, static_cast<std::uint32_t>(m_chunk.size()));
  put_u32(header, crc32(m_chunk.data(), m_chunk.size()));
  m_file.stream().write(header.data(), static_cast<std::streamsize>(header.size()));
  m_file.stream().write(m_chunk.data(), static_cast<std::streamsize>(m_chunk.size()));
  if (!m_file.stream()) throw Error(m_file.path() + ": write failed");
  m_bytes += header.size() + m_chunk.size();
  m_chunk.clear();
}

void TraceWriter::begin(const WorkloadInfo& workload) {
  put_byte(static_cast<std::uint8_t>(RecordType::workload));
  put_string(workload.name);
  put_varint(workload.params.size());
  for (const auto& [key, value] : workload.params) {
    put_string(key);
    put_string(value);
  }
  if (workload.tensors.size() > 256) throw Error(m_file.path() + ": more than 256 tensors");
  put_varint(workload.tensors.size());
  for (const TensorInfo& t : workload.tensors) {
    put_string(t.name);
    put_varint(t.base);
    put_varint(t.bytes);
    m_tensor_base.push_back(t.base);
  }
  m_last_base.resize(m_tensor_base.size());
}

void TraceWriter::kernel(const KernelInfo& kernel) {
  put_byte(static_cast<std::uint8_t>(RecordType::kernel));
  put_string(kernel.name);
  put_varint(kernel.ctas);
  put_varint(kernel.threads_per_cta);
  put_varint(kernel.smem_bytes_per_cta);
  put_varint(kernel.registers_per_thread);
  ++m_kernels;
}

void TraceWriter::cta_begin() { m_ops.clear(); }

void TraceWriter::op(const Op& op) { m_ops.push_back(op); }

void TraceWriter::cta_end() {
  put_byte(static_cast<std::uint8_t>(RecordType::cta));
  put_varint(m_ops.size());
  m_last_base = m_tensor_base;
  for (const Op& op : m_ops) {
    const auto kind = static_cast<std::uint8_t>(op.kind);
    switch (op.kind) {
      case OpKind::load:
      case OpKind::store:
      case OpKind::reduce: {
        put_byte(kind);
        put_byte(op.tensor);
        if (op.kind == OpKind::load || (op.kind == OpKind::store && store_has_tag(m_version))) {
          put_varint(op.tag);
        }
        std::uint64_t& last = m_last_base.at(op.tensor);
        put_varint(zigzag(static_cast<std::int64_t>(op.box.base - last)));
        last = op.box.base;
        put_varint(op.box.rows);
        put_varint(op.box.row_bytes);
        put_varint(op.box.pitch);
        break;
      }
      case OpKind::wait:
        put_byte(kind);
        put_varint(op.tag);
        break;
      case OpKind::compute:
        put_byte(static_cast<std::uint8_t>(kind | (static_cast<std::uint8_t>(op.unit) << 3)));
        put_varint(op.amount);
        if (compute_has_tag(m_version)) put_varint(op.tag);
        break;
      case OpKind::smem:
        put_byte(kind);
        put_varint(op.amount);
        if (smem_has_tag(m_version)) put_varint(op.tag);
        break;
      case OpKind::barrier: put_byte(kind); break;
    }
  }
  ++m_ctas;
  m_total_ops += m_ops.size();
}

void TraceWriter::end() {
  put_byte(static_cast<std::uint8_t>(RecordType::end));
  put_varint(m_kernels);
  put_varint(m_ctas);
  put_varint(m_total_ops);
  flush_chunk();
  m_file.commit();
}

}  // namespace memwall
