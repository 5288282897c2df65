#pragma once
/// Constants and primitive encodings of the binary trace format (docs/trace-format.md): the
/// prologue, the checksummed chunks, the record types, LEB128 varints and zigzag deltas, CRC-32.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace memwall {

/// The first 8 bytes of every trace file.
inline constexpr char kTraceMagic[8] = {'M', 'W', 'T', 'R', 'A', 'C', 'E', '\0'};
/// The format version this build writes. Version 2 is version 1 with the attention variants'
/// parameters (kv_heads, seq_kv, causal, splits) allowed in the workload record and the op kind
/// reduce (an atomic add, 6). Version 3 adds the compute units issue (3: warp instructions) and
/// mma_sync (4: tensor FLOPs of mma.sync). Version 4 gives every store a tag (a varint after the
/// tensor index, as a load's: 0 untracked, else what a wait on that tag also waits for) and
/// allows the parameter gemm. Version 5 gives every compute op a tag (a varint after the amount:
/// 0 synchronous; otherwise asynchronous, as wgmma.mma_async: the CTA goes on at once and a wait
/// on that tag waits for it) and the compute unit latency (5: SM cycles on no shared pipe).
/// Version 6 gives every smem op a tag the same way (a varint after the bytes: 0 synchronous;
/// otherwise booked on the shared-memory pipe while the CTA goes on).
inline constexpr std::uint32_t kTraceVersion = 6;
/// The oldest version this build reads (every version up to kTraceVersion replays).
inline constexpr std::uint32_t kOldestTraceVersion = 1;
/// The largest op kind a trace of `version` may hold: barrier in version 1, reduce from 2.
inline std::uint8_t max_op_kind(std::uint32_t version) { return version >= 2 ? 6 : 5; }
/// The largest compute unit a trace of `version` may hold: sfu up to version 2, issue and
/// mma_sync from 3, latency from 5 (the unit takes bits 3-7 of an op's first byte; before version 3 bit 5 and up
/// were 0).
inline std::uint8_t max_compute_unit(std::uint32_t version) {
  return version >= 5 ? 5 : version >= 3 ? 4 : 2;
}
/// Whether parameter `name` may appear in the workload record of a trace of `version`.
inline bool trace_version_allows(std::uint32_t version, const std::string& name) {
  if (name == "gemm") return version >= 4;
  return version >= 2 ||
         (name != "kv_heads" && name != "seq_kv" && name != "causal" && name != "splits");
}
/// Whether a store op of a trace of `version` carries a tag.
inline bool store_has_tag(std::uint32_t version) { return version >= 4; }
/// Whether a compute op of a trace of `version` carries a tag (asynchronous when nonzero).
inline bool compute_has_tag(std::uint32_t version) { return version >= 5; }
/// Whether an smem op of a trace of `version` carries a tag (asynchronous when nonzero).
inline bool smem_has_tag(std::uint32_t version) { return version >= 6; }
/// Bytes of the prologue: magic, u32 version, u32 flags (0).
inline constexpr std::size_t kTracePrologueBytes = 16;
/// Bytes of a chunk header: u32 payload length, u32 CRC-32 of the payload.
inline constexpr std::size_t kChunkHeaderBytes = 8;
/// Largest chunk payload; the writer fills chunks to exactly this size except the last.
inline constexpr std::size_t kMaxChunkPayload = 64 * 1024;
/// Longest string (workload, parameter, tensor, kernel name or value) in bytes.
inline constexpr std::size_t kMaxTraceString = 4096;

/// Record types of the payload stream.
enum class RecordType : std::uint8_t {
  workload = 'W',  ///< once, first
  kernel = 'K',  ///< a launch; its CTA records follow
  cta = 'C',  ///< one CTA's ops
  end = 'E',  ///< once, last: totals
};

/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), continuing from `crc` (0 to start).
std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc = 0);

/// Appends `value` as an unsigned LEB128 varint (1–10 bytes).
inline void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

/// Zigzag mapping of a signed delta to unsigned (0, -1, 1, -2, ... → 0, 1, 2, 3, ...).
inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t u) {
  return static_cast<std::int64_t>(u >> 1) ^ -static_cast<std::int64_t>(u & 1);
}

/// Appends a little-endian u32.
inline void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

/// A trace file around `stream`, a payload byte stream: the prologue (magic, `version`, flags 0)
/// and the stream cut into checksummed chunks of `chunk` bytes (the last one shorter). The fuzz
/// harnesses and their findings' tests frame their inputs with it.
inline std::string frame_trace(std::string_view stream, std::size_t chunk,
                               std::uint32_t version = kTraceVersion) {
  std::string file(kTraceMagic, sizeof kTraceMagic);
  put_u32(file, version);
  put_u32(file, 0);
  for (std::size_t pos = 0; pos < stream.size(); pos += chunk) {
    const std::string_view payload = stream.substr(pos, chunk);
    put_u32(file, static_cast<std::uint32_t>(payload.size()));
    put_u32(file, crc32(payload.data(), payload.size()));
    file.append(payload);
  }
  return file;
}

}  // namespace memwall
