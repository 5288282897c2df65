#include "traces/trace_reader.h"

#include <cstdio>
#include <cstring>
#include <limits>

#include "sim/core/error.h"
#include "traces/recorder.h"
#include "traces/trace_format.h"

namespace memwall {
namespace {

std::uint32_t read_u32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

TraceReader::TraceReader(const std::string& path) : m_path(path), m_in(path, std::ios::binary) {
  if (!m_in) fail(0, "cannot open the trace file");
  unsigned char prologue[kTracePrologueBytes];
  m_in.read(reinterpret_cast<char*>(prologue), sizeof prologue);
  const auto got = static_cast<std::size_t>(m_in.gcount());
  if (got < sizeof kTraceMagic || std::memcmp(prologue, kTraceMagic, sizeof kTraceMagic) != 0) {
    if (got >= sizeof kTraceMagic || got == 0) {
      fail(0, got == 0 ? "empty file, not a memwall trace"
                       : "wrong magic: not a memwall trace (expected \"MWTRACE\\0\")");
    }
    fail(got, "truncated: the file ends inside the 16-byte header");
  }
  if (got < sizeof prologue) fail(got, "truncated: the file ends inside the 16-byte header");
  m_version = read_u32(prologue + 8);
  if (m_version < kOldestTraceVersion || m_version > kTraceVersion) {
    fail(8, "unsupported trace version " + std::to_string(m_version) +
                " (this build reads versions " + std::to_string(kOldestTraceVersion) + " to " +
                std::to_string(kTraceVersion) + ")");
  }
  if (read_u32(prologue + 12) != 0)
    fail(12, "unsupported header flags " + hex(read_u32(prologue + 12)));
  m_next_offset = kTracePrologueBytes;
  m_chunk_offset = m_next_offset;
  read_workload();
}

void TraceReader::fail(std::uint64_t offset, const std::string& reason) const {
  throw TraceError(m_path, offset, reason);
}

bool TraceReader::load_chunk() {
  unsigned char header[kChunkHeaderBytes];
  m_in.read(reinterpret_cast<char*>(header), sizeof header);
  const auto got = static_cast<std::size_t>(m_in.gcount());
  if (got == 0) return false;
  if (got < sizeof header)
    fail(m_next_offset + got, "truncated: the file ends inside a chunk header");
  const std::uint32_t length = read_u32(header);
  const std::uint32_t stored = read_u32(header + 4);
  if (length == 0 || length > kMaxChunkPayload) {
    fail(m_next_offset, "invalid chunk length " + std::to_string(length) + " (must be 1.." +
                            std::to_string(kMaxChunkPayload) + ")");
  }
  m_chunk.resize(length);
  m_in.read(m_chunk.data(), length);
  const auto body = static_cast<std::uint64_t>(m_in.gcount());
  if (body < length) {
    fail(m_next_offset + kChunkHeaderBytes + body,
         "truncated: the chunk at byte " + std::to_string(m_next_offset) + " declares " +
             std::to_string(length) + " bytes but the file ends after " + std::to_string(body));
  }
  const std::uint32_t computed = crc32(m_chunk.data(), m_chunk.size());
  if (computed != stored) {
    fail(m_next_offset, "checksum mismatch in the chunk at this offset (stored " + hex(stored) +
                            ", computed " + hex(computed) + ")");
  }
  m_chunk_offset = m_next_offset + kChunkHeaderBytes;
  m_next_offset = m_chunk_offset + length;
  m_pos = 0;
  return true;
}

std::uint8_t TraceReader::get() {
  if (m_pos == m_chunk.size()) {
    if (!load_chunk()) fail(m_next_offset, "truncated: the file ends before the end record");
  }
  return static_cast<std::uint8_t>(m_chunk[m_pos++]);
}

std::uint64_t TraceReader::get_varint(const char* what) {
  const std::uint64_t start = offset();
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    const std::uint8_t b = get();
    if (shift == 63 && (b & 0x7E) != 0)
      fail(start, std::string(what) + ": varint overflows 64 bits");
    value |= static_cast<std::uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return value;
  }
  fail(start, std::string(what) + ": varint longer than 10 bytes");
}

std::uint32_t TraceReader::get_u32_field(const char* what) {
  const std::uint64_t start = offset();
  const std::uint64_t v = get_varint(what);
  if (v > std::numeric_limits<std::uint32_t>::max()) {
    fail(start, std::string(what) + " " + std::to_string(v) + " does not fit in 32 bits");
  }
  return static_cast<std::uint32_t>(v);
}

std::string TraceReader::get_string(const char* what) {
  const std::uint64_t start = offset();
  const std::uint64_t length = get_varint(what);
  if (length > kMaxTraceString) {
    fail(start, std::string(what) + ": string length " + std::to_string(length) + " exceeds " +
                    std::to_string(kMaxTraceString));
  }
  std::string s;
  s.reserve(length);
  for (std::uint64_t i = 0; i < length; ++i) s.push_back(static_cast<char>(get()));
  return s;
}

void TraceReader::read_workload() {
  const std::uint64_t start = offset();
  const std::uint8_t type = get();
  if (type != static_cast<std::uint8_t>(RecordType::workload)) {
    fail(start, "expected the workload record ('W'), found byte " + hex(type));
  }
  m_info.name = get_string("workload name");
  const std::uint64_t at_params = offset();
  const std::uint64_t params = get_varint("parameter count");
  if (params > 1024) fail(at_params, "parameter count " + std::to_string(params) + " exceeds 1024");
  for (std::uint64_t i = 0; i < params; ++i) {
    const std::uint64_t at_key = offset();
    std::string key = get_string("parameter name");
    if (!trace_version_allows(m_version, key)) {
      fail(at_key, "parameter \"" + key + "\" needs trace format version " +
                       std::string(key == "gemm" ? "4" : "2") + ", the file is version " +
                       std::to_string(m_version));
    }
    std::string value = get_string("parameter value");
    m_info.params.emplace_back(std::move(key), std::move(value));
  }
  const std::uint64_t at_tensors = offset();
  const std::uint64_t tensors = get_varint("tensor count");
  if (tensors > 256) fail(at_tensors, "tensor count " + std::to_string(tensors) + " exceeds 256");
  for (std::uint64_t i = 0; i < tensors; ++i) {
    TensorInfo t;
    t.name = get_string("tensor name");
    const std::uint64_t at = offset();
    t.base = get_varint("tensor base");
    t.bytes = get_varint("tensor bytes");
    if (t.base + t.bytes < t.base) fail(at, "tensor " + t.name + " extends past 2^64");
    m_info.tensors.push_back(std::move(t));
  }
}

bool TraceReader::next_kernel(KernelInfo& kernel) {
  if (m_done) return false;
  while (m_ctas_left > 0) read_cta(m_scratch);
  const std::uint64_t start = offset();
  const std::uint8_t type = get();
  if (type == static_cast<std::uint8_t>(RecordType::kernel)) {
    kernel.name = get_string("kernel name");
    kernel.ctas = get_varint("kernel CTA count");
    kernel.threads_per_cta = get_u32_field("threads per CTA");
    kernel.smem_bytes_per_cta = get_varint("shared memory per CTA");
    kernel.registers_per_thread = get_u32_field("registers per thread");
    m_kernel_name = kernel.name;
    m_kernel_ctas = kernel.ctas;
    m_ctas_left = kernel.ctas;
    ++m_kernels;
    return true;
  }
  if (type == static_cast<std::uint8_t>(RecordType::end)) {
    finish();
    return false;
  }
  if (type == static_cast<std::uint8_t>(RecordType::cta)) {
    fail(start, m_kernels == 0 ? "CTA record before any kernel record"
                               : "CTA record beyond the " + std::to_string(m_kernel_ctas) +
                                     " CTAs kernel " + m_kernel_name + " declares");
  }
  fail(start, "invalid record type " + hex(type) + " (expected 'K' or 'E')");
}

bool TraceReader::next_cta(std::vector<Op>& ops) {
  ops.clear();
  if (m_done || m_ctas_left == 0) return false;
  read_cta(ops);
  return true;
}

void TraceReader::read_cta(std::vector<Op>& ops) {
  ops.clear();
  const std::uint64_t start = offset();
  const std::uint8_t type = get();
  if (type != static_cast<std::uint8_t>(RecordType::cta)) {
    fail(start, "kernel " + m_kernel_name + " declares " + std::to_string(m_kernel_ctas) +
                    " CTAs but only " + std::to_string(m_kernel_ctas - m_ctas_left) +
                    " precede this record (type " + hex(type) + ")");
  }
  const std::uint64_t count = get_varint("op count");
  std::vector<std::uint64_t>& last_base = m_last_base;
  last_base.clear();
  for (const TensorInfo& t : m_info.tensors) last_base.push_back(t.base);
  for (std::uint64_t i = 0; i < count; ++i) {
    if (i >= m_max_cta_ops) throw CtaOpLimitError(m_max_cta_ops);
    const std::uint64_t at = offset();
    const std::uint8_t byte = get();
    const std::uint8_t kind = byte & 0x7;
    const std::uint8_t high = byte >> 3;
    if (kind > max_op_kind(m_version)) {
      fail(at, "invalid op kind " + std::to_string(kind) + " (byte " + hex(byte) + ")" +
                   (kind <= max_op_kind(kTraceVersion)
                        ? " in a version " + std::to_string(m_version) + " trace"
                        : ""));
    }
    Op op;
    op.kind = static_cast<OpKind>(kind);
    if (op.kind == OpKind::compute) {
      if (high > max_compute_unit(m_version)) {
        fail(at, "invalid compute unit " + std::to_string(high) +
                     (high <= max_compute_unit(kTraceVersion)
                          ? " in a version " + std::to_string(m_version) + " trace"
                          : ""));
      }
      op.unit = static_cast<ComputeUnit>(high);
    } else if (high != 0) {
      fail(at, "invalid op byte " + hex(byte) + " (unit bits set on a non-compute op)");
    }
    switch (op.kind) {
      case OpKind::load:
      case OpKind::store:
      case OpKind::reduce: {
        const std::uint64_t at_tensor = offset();
        op.tensor = get();
        if (op.tensor >= m_info.tensors.size()) {
          fail(at_tensor, "tensor index " + std::to_string(op.tensor) + " out of range (" +
                              std::to_string(m_info.tensors.size()) + " tensors)");
        }
        if (op.kind == OpKind::load || (op.kind == OpKind::store && store_has_tag(m_version))) {
          const std::uint64_t at_tag = offset();
          const std::uint64_t tag = get_varint("tag");
          if (tag > std::numeric_limits<std::uint16_t>::max()) {
            fail(at_tag, "tag " + std::to_string(tag) + " exceeds 65535");
          }
          op.tag = static_cast<std::uint16_t>(tag);
        }
        const std::uint64_t at_box = offset();
        op.box.base =
            last_base[op.tensor] + static_cast<std::uint64_t>(unzigzag(get_varint("box base")));
        last_base[op.tensor] = op.box.base;
        op.box.rows = get_u32_field("box rows");
        op.box.row_bytes = get_u32_field("box row bytes");
        op.box.pitch = get_varint("box pitch");
        if (op.box.rows == 0 || op.box.row_bytes == 0)
          fail(at_box, "empty box (rows or row bytes 0)");
        if (op.box.rows > 1 && op.box.pitch < op.box.row_bytes) {
          fail(at_box, "box pitch " + std::to_string(op.box.pitch) +
                           " is less than its row bytes " + std::to_string(op.box.row_bytes));
        }
        const TensorInfo& t = m_info.tensors[op.tensor];
        std::uint64_t span = 0, end = 0;
        const bool overflow = __builtin_mul_overflow(static_cast<std::uint64_t>(op.box.rows - 1),
                                                     op.box.pitch, &span) ||
                              __builtin_add_overflow(span, op.box.row_bytes, &span) ||
                              __builtin_add_overflow(op.box.base, span, &end);
        if (overflow || op.box.base < t.base || end > t.base + t.bytes) {
          fail(at_box, "box at " + hex(op.box.base) + " (" + std::to_string(op.box.rows) +
                           " rows of " + std::to_string(op.box.row_bytes) + " bytes, pitch " +
                           std::to_string(op.box.pitch) + ") lies outside tensor " + t.name);
        }
        break;
      }
      case OpKind::wait: {
        const std::uint64_t at_tag = offset();
        const std::uint64_t tag = get_varint("tag");
        if (tag > std::numeric_limits<std::uint16_t>::max()) {
          fail(at_tag, "tag " + std::to_string(tag) + " exceeds 65535");
        }
        op.tag = static_cast<std::uint16_t>(tag);
        break;
      }
      case OpKind::compute:
      case OpKind::smem: {
        const bool compute = op.kind == OpKind::compute;
        op.amount = get_varint(compute ? "compute amount" : "smem bytes");
        if (compute ? compute_has_tag(m_version) : smem_has_tag(m_version)) {
          const std::uint64_t at_tag = offset();
          const std::uint64_t tag = get_varint("tag");
          if (tag > std::numeric_limits<std::uint16_t>::max()) {
            fail(at_tag, "tag " + std::to_string(tag) + " exceeds 65535");
          }
          op.tag = static_cast<std::uint16_t>(tag);
        }
        break;
      }
      case OpKind::barrier: break;
    }
    ops.push_back(op);
  }
  --m_ctas_left;
  ++m_ctas;
  m_ops += count;
}

void TraceReader::finish() {
  const std::uint64_t at = offset();
  const std::uint64_t kernels = get_varint("end: kernel count");
  const std::uint64_t ctas = get_varint("end: CTA count");
  const std::uint64_t ops = get_varint("end: op count");
  if (kernels != m_kernels || ctas != m_ctas || ops != m_ops) {
    fail(at, "end record counts " + std::to_string(kernels) + " kernels, " + std::to_string(ctas) +
                 " CTAs, " + std::to_string(ops) + " ops; the file holds " +
                 std::to_string(m_kernels) + ", " + std::to_string(m_ctas) + ", " +
                 std::to_string(m_ops));
  }
  if (m_pos != m_chunk.size()) fail(offset(), "trailing bytes after the end record");
  if (m_in.peek() != std::ifstream::traits_type::eof()) {
    fail(m_next_offset, "trailing garbage after the end record");
  }
  m_done = true;
}

}  // namespace memwall
