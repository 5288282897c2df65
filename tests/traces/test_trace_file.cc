// A trace file replays exactly what was written, and every kind of damage is one clear TraceError.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "tests/support/cli.h"
#include "traces/copy_trace.h"
#include "traces/trace_format.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

using namespace memwall;

namespace {

/// A small hand-made workload source: two kernels, every op kind, boxes moving up and down.
class FakeSource final : public TraceSource {
 public:
  /// `reduce`: each CTA ends with a reduction (op kind 6, trace format version 2), some of its
  /// compute ops are issue or mma_sync ops (units 3 and 4, version 3) and some asynchronous (a
  /// tag, version 5), and some smem ops asynchronous (a tag, version 6); without, the trace is
  /// valid as version 1. `latency` (with `reduce`): some are latency ops (unit 5, version 5);
  /// without, those are fp32 ops.
  explicit FakeSource(std::uint64_t ctas,
                      std::vector<std::pair<std::string, std::string>> extra = {},
                      bool reduce = true, bool latency = true)
      : m_ctas(ctas), m_reduce(reduce), m_latency(reduce && latency) {
    m_info.name = "fake";
    m_info.params = {{"workload", "fake"}, {"seq", "1000"}};
    m_info.params.insert(m_info.params.end(), extra.begin(), extra.end());
    m_info.tensors = {{"X", 0, 1 << 20}, {"Y", 1 << 20, 1 << 20}};
  }
  const WorkloadInfo& workload() const override { return m_info; }
  bool next_kernel(KernelInfo& k) override {
    if (m_kernel == 2) return false;
    k = KernelInfo{m_kernel == 0 ? "first" : "second", m_ctas, 128, 4096, 64};
    ++m_kernel;
    m_cta = 0;
    return true;
  }
  bool next_cta(std::vector<Op>& ops) override {
    ops.clear();
    if (m_cta == m_ctas) return false;
    ops = cta_ops(m_kernel, m_cta++);
    if (!m_reduce) {
      ops.pop_back();
      for (Op& op : ops) {
        if (op.kind == OpKind::compute && op.unit == ComputeUnit::issue) op.unit = ComputeUnit::sfu;
        if (op.kind == OpKind::compute && op.unit == ComputeUnit::mma_sync)
          op.unit = ComputeUnit::tensor;
        if (op.kind == OpKind::compute || op.kind == OpKind::smem) op.tag = 0;
      }
    }
    if (!m_latency) {
      for (Op& op : ops) {
        if (op.kind == OpKind::compute && op.unit == ComputeUnit::latency)
          op.unit = ComputeUnit::fp32;
      }
    }
    return true;
  }
  static std::vector<Op> cta_ops(std::uint64_t kernel, std::uint64_t c) {
    std::vector<Op> ops;
    for (std::uint64_t i = 0; i < 4 + c % 5; ++i) {
      Op load;
      load.kind = OpKind::load;
      load.tensor = static_cast<std::uint8_t>(i % 2);
      load.tag = static_cast<std::uint16_t>(i % 3);
      load.box = {(i % 2) * (1 << 20) + ((c * 7919 + i * 104729) % 4096) * 128, 8, 64, 128};
      ops.push_back(load);
      Op wait;
      wait.kind = OpKind::wait;
      wait.tag = load.tag;
      ops.push_back(wait);
      Op compute;
      compute.kind = OpKind::compute;
      compute.unit = static_cast<ComputeUnit>(i % 6);
      compute.amount = (c + 1) * (i + 1) * 1000003 * (kernel + 1);
      // Every third one asynchronous under a tag of its own (version 5).
      compute.tag = i % 3 == 2 ? static_cast<std::uint16_t>(100 + i) : 0;
      ops.push_back(compute);
      Op smem;
      smem.kind = OpKind::smem;
      smem.amount = 512 * (i + 1);
      // Every third one asynchronous too, under the wait's tag (version 6).
      smem.tag = i % 3 == 1 ? static_cast<std::uint16_t>(200 + i) : 0;
      ops.push_back(smem);
    }
    Op barrier;
    barrier.kind = OpKind::barrier;
    ops.push_back(barrier);
    Op store;
    store.kind = OpKind::store;
    store.tensor = 1;
    store.box = {(1 << 20) + c * 64, 1, 64, 64};
    ops.push_back(store);
    Op reduce = store;
    reduce.kind = OpKind::reduce;
    reduce.box.base = (1 << 20) + 65536 + c * 32;
    ops.push_back(reduce);
    return ops;
  }

 private:
  WorkloadInfo m_info;
  std::uint64_t m_ctas;
  bool m_reduce = true;
  bool m_latency = true;
  std::uint64_t m_kernel = 0, m_cta = 0;
};

std::string temp_path(const std::string& name) { return memwall::test::temp_path("test", name); }

std::string write_fake(const std::string& name, std::uint64_t ctas,
                       std::uint32_t version = kTraceVersion) {
  const std::string path = temp_path(name);
  FakeSource source(ctas);
  TraceWriter writer(path, version);
  copy_trace(source, writer);
  return path;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Reads the whole file; returns the TraceError message, or "" when it reads cleanly.
std::string read_error(const std::string& path) {
  try {
    TraceReader reader(path);
    KernelInfo k;
    std::vector<Op> ops;
    while (reader.next_kernel(k)) {
      while (reader.next_cta(ops)) {}
    }
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("A trace file replays exactly the kernels and ops that were written", "[trace_file]") {
  const std::uint64_t ctas = 3000;  // several 64 KiB chunks
  const std::string path = write_fake("roundtrip.mwt", ctas);
  REQUIRE(read_all(path).size() > 2 * kMaxChunkPayload);
  TraceReader reader(path);
  FakeSource expected(ctas);
  REQUIRE(reader.workload() == expected.workload());
  REQUIRE(reader.version() == kTraceVersion);
  KernelInfo a, b;
  std::vector<Op> x, y;
  std::uint64_t compared = 0;
  while (expected.next_kernel(b)) {
    REQUIRE(reader.next_kernel(a));
    REQUIRE(a == b);
    while (expected.next_cta(y)) {
      REQUIRE(reader.next_cta(x));
      REQUIRE(x == y);
      ++compared;
    }
    REQUIRE_FALSE(reader.next_cta(x));
  }
  REQUIRE_FALSE(reader.next_kernel(a));
  REQUIRE(compared == 2 * ctas);
  std::filesystem::remove(path);
}

TEST_CASE("next_kernel skips the CTAs of the current kernel not yet pulled", "[trace_file]") {
  const std::string path = write_fake("skip.mwt", 50);
  TraceReader reader(path);
  KernelInfo k;
  std::vector<Op> ops;
  REQUIRE(reader.next_kernel(k));
  REQUIRE(reader.next_cta(ops));
  REQUIRE(reader.next_kernel(k));
  REQUIRE(k.name == "second");
  REQUIRE(reader.next_cta(ops));
  REQUIRE(ops == FakeSource::cta_ops(2, 0));
  REQUIRE_FALSE(reader.next_kernel(k));
  std::filesystem::remove(path);
}

TEST_CASE("Writing the same source twice gives byte-identical files", "[trace_file]") {
  const std::string a = write_fake("same_a.mwt", 200), b = write_fake("same_b.mwt", 200);
  REQUIRE(read_all(a) == read_all(b));
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

TEST_CASE("A version 1 trace still replays, unless it names a parameter of version 2",
          "[trace_file]") {
  REQUIRE(kTraceVersion == 6);
  const std::string path = write_fake("v1.mwt", 20, 1);
  std::string v1 = read_all(path);
  v1[8] = 1;  // the prologue is outside the chunks' checksums
  write_all(path, v1);
  // The fake source's CTAs hold issue ops (compute unit 3) and end with a reduction (op kind 6),
  // neither of which version 1 has: the first one read is named.
  REQUIRE_THAT(read_error(path), Catch::Contains("invalid compute unit 3 in a version 1 trace"));
  {
    FakeSource plain(20, {}, /*reduce=*/false);
    TraceWriter writer(path, 1);
    copy_trace(plain, writer);
  }
  v1 = read_all(path);
  v1[8] = 1;
  write_all(path, v1);
  REQUIRE(read_error(path).empty());
  REQUIRE(TraceReader(path).version() == 1u);

  for (const char* name : {"kv_heads", "seq_kv", "causal", "splits"}) {
    INFO(name);
    FakeSource source(20, {{name, "2"}}, /*reduce=*/false);
    {
      TraceWriter writer(path, 3);
      copy_trace(source, writer);
    }
    REQUIRE(read_error(path).empty());  // written as version 3
    std::string bytes = read_all(path);
    bytes[8] = 1;
    write_all(path, bytes);
    REQUIRE_THAT(read_error(path),
                 Catch::Contains(std::string("parameter \"") + name +
                                 "\" needs trace format version 2, the file is version 1"));
  }
  std::filesystem::remove(path);
}

TEST_CASE("A version 2 trace replays, unless it holds an issue op of version 3", "[trace_file]") {
  const std::string path = write_fake("v2.mwt", 20, 2);
  std::string v2 = read_all(path);
  v2[8] = 2;
  write_all(path, v2);
  REQUIRE_THAT(read_error(path), Catch::Contains("invalid compute unit 3 in a version 2 trace"));
  {
    // Reductions are version 2; the issue ops become sfu ops.
    FakeSource plain(20, {}, /*reduce=*/false);
    TraceWriter writer(path, 2);
    copy_trace(plain, writer);
  }
  v2 = read_all(path);
  v2[8] = 2;
  write_all(path, v2);
  REQUIRE(read_error(path).empty());
  REQUIRE(TraceReader(path).version() == 2u);
  std::filesystem::remove(path);
}

TEST_CASE("A version 4 trace replays with every compute op synchronous", "[trace_file]") {
  // Version 4 has no compute tags: the same ops come back with tag 0 on their compute ops. (The
  // latency unit is version 5's too: those ops are fp32 ops here.)
  const auto write = [](const std::string& name, std::uint32_t version) {
    const std::string path = temp_path(name);
    FakeSource source(20, {}, /*reduce=*/true, /*latency=*/false);
    TraceWriter writer(path, version);
    copy_trace(source, writer);
    return path;
  };
  const std::string v4 = write("v4.mwt", 4), v5 = write("v5.mwt", 5);
  TraceReader r4(v4), r5(v5);
  REQUIRE(r4.version() == 4u);
  REQUIRE(r5.version() == 5u);
  KernelInfo k4, k5;
  std::vector<Op> ops4, ops5;
  std::uint64_t async_ops = 0;
  while (r5.next_kernel(k5)) {
    REQUIRE(r4.next_kernel(k4));
    while (r5.next_cta(ops5)) {
      REQUIRE(r4.next_cta(ops4));
      REQUIRE(ops4.size() == ops5.size());
      for (std::size_t i = 0; i < ops5.size(); ++i) {
        Op expected = ops5[i];
        if (expected.kind == OpKind::compute && expected.tag != 0) {
          ++async_ops;
          expected.tag = 0;
        }
        REQUIRE(ops4[i] == expected);
      }
    }
  }
  REQUIRE(async_ops > 0);
  // A latency op (unit 5) in a version 4 file is refused at that op.
  const std::string with_latency = write_fake("v4_latency.mwt", 20, 4);
  REQUIRE_THAT(read_error(with_latency),
               Catch::Contains("invalid compute unit 5 in a version 4 trace"));
  std::filesystem::remove(with_latency);
  std::filesystem::remove(v4);
  std::filesystem::remove(v5);
}

TEST_CASE("A version 5 trace replays with every smem op synchronous", "[trace_file]") {
  // Version 5 has no smem tags: the same ops come back with tag 0 on their smem ops, and
  // everything else as written.
  const std::string v5 = write_fake("v5_smem.mwt", 20, 5), v6 = write_fake("v6_smem.mwt", 20, 6);
  TraceReader r5(v5), r6(v6);
  REQUIRE(r5.version() == 5u);
  REQUIRE(r6.version() == 6u);
  KernelInfo k5, k6;
  std::vector<Op> ops5, ops6;
  std::uint64_t async_smem = 0, async_compute = 0;
  while (r6.next_kernel(k6)) {
    REQUIRE(r5.next_kernel(k5));
    REQUIRE(k5 == k6);
    while (r6.next_cta(ops6)) {
      REQUIRE(r5.next_cta(ops5));
      REQUIRE(ops5.size() == ops6.size());
      for (std::size_t i = 0; i < ops6.size(); ++i) {
        Op expected = ops6[i];
        if (expected.kind == OpKind::smem && expected.tag != 0) {
          ++async_smem;
          expected.tag = 0;
        }
        if (expected.kind == OpKind::compute && expected.tag != 0) ++async_compute;
        REQUIRE(ops5[i] == expected);
      }
    }
  }
  REQUIRE(async_smem > 0);
  REQUIRE(async_compute > 0);  // compute tags are version 5's: kept
  std::filesystem::remove(v5);
  std::filesystem::remove(v6);
}

TEST_CASE("A wrong magic, version or flags is rejected at the header", "[trace_file]") {
  const std::string path = write_fake("header.mwt", 10);
  const std::string good = read_all(path);
  std::string bad = good;
  bad[0] = 'X';
  write_all(path, bad);
  REQUIRE_THAT(read_error(path), Catch::Contains("byte 0: wrong magic"));
  bad = good;
  bad[8] = static_cast<char>(kTraceVersion + 1);  // the next version
  write_all(path, bad);
  REQUIRE_THAT(
      read_error(path),
      Catch::Contains("byte 8: unsupported trace version " + std::to_string(kTraceVersion + 1) +
                      " (this build reads versions 1 to " + std::to_string(kTraceVersion) + ")"));
  bad[8] = 0;
  write_all(path, bad);
  REQUIRE_THAT(read_error(path), Catch::Contains("byte 8: unsupported trace version 0"));
  bad = good;
  bad[12] = 1;
  write_all(path, bad);
  REQUIRE_THAT(read_error(path), Catch::Contains("byte 12: unsupported header flags"));
  write_all(path, "");
  REQUIRE_THAT(read_error(path), Catch::Contains("empty file"));
  std::filesystem::remove(path);
}

TEST_CASE("A file truncated anywhere is reported as truncated with its offset", "[trace_file]") {
  const std::string path = write_fake("trunc.mwt", 1500);
  const std::string good = read_all(path);
  const std::string cut = temp_path("trunc_cut.mwt");
  for (std::size_t at : {std::size_t{3}, std::size_t{12}, kTracePrologueBytes,
                         kTracePrologueBytes + 5, kTracePrologueBytes + kChunkHeaderBytes + 100,
                         kTracePrologueBytes + kChunkHeaderBytes + kMaxChunkPayload,
                         good.size() / 2, good.size() - 1}) {
    INFO("truncated at byte " << at);
    write_all(cut, good.substr(0, at));
    const std::string e = read_error(cut);
    REQUIRE_THAT(e, Catch::Contains("truncated"));
    REQUIRE_THAT(e, Catch::Contains(cut));
  }
  std::filesystem::remove(path);
  std::filesystem::remove(cut);
}

TEST_CASE("A flipped byte in any chunk is a checksum mismatch naming that chunk", "[trace_file]") {
  const std::string path = write_fake("flip.mwt", 1500);
  const std::string good = read_all(path);
  const std::size_t second_chunk = kTracePrologueBytes + kChunkHeaderBytes + kMaxChunkPayload;
  for (std::size_t at : {kTracePrologueBytes + kChunkHeaderBytes, kTracePrologueBytes + 4000,
                         second_chunk + kChunkHeaderBytes + 17, good.size() - 2}) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    write_all(path, bad);
    const std::string e = read_error(path);
    INFO("flipped byte " << at << ": " << e);
    REQUIRE_THAT(e, Catch::Contains("checksum mismatch"));
  }
  // A damaged chunk length is caught before any allocation.
  std::string bad = good;
  bad[kTracePrologueBytes + 3] = static_cast<char>(0x7F);
  write_all(path, bad);
  REQUIRE_THAT(read_error(path), Catch::Contains("invalid chunk length"));
  std::filesystem::remove(path);
}

TEST_CASE("Trailing garbage after the end record is rejected", "[trace_file]") {
  const std::string path = write_fake("trail.mwt", 5);
  write_all(path, read_all(path) + "x");
  REQUIRE_THAT(read_error(path), Catch::Contains("trailing garbage after the end record"));
  std::filesystem::remove(path);
}

namespace {

/// Rewrites the single chunk of a small file with `payload`, with a valid checksum.
std::string with_payload(const std::string& file, const std::string& payload) {
  std::string out = file.substr(0, kTracePrologueBytes);
  put_u32(out, static_cast<std::uint32_t>(payload.size()));
  put_u32(out, crc32(payload.data(), payload.size()));
  return out + payload;
}

}  // namespace

TEST_CASE("Invalid op kinds and fields are rejected even under a valid checksum", "[trace_file]") {
  const std::string path = write_fake("fields.mwt", 1);
  const std::string good = read_all(path);
  REQUIRE(good.size() < kMaxChunkPayload);
  const std::string payload = good.substr(kTracePrologueBytes + kChunkHeaderBytes);
  // The first op of the first CTA follows "C", the op count; find the first 'C' after the kernel.
  const std::size_t kernel = payload.find("first");
  const std::size_t cta = payload.find('C', kernel + 5 + 4);
  REQUIRE(cta != std::string::npos);
  const std::size_t op0 = cta + 2;  // 'C', one-byte op count
  REQUIRE(payload[op0] == static_cast<char>(OpKind::load));

  std::string p = payload;
  p[op0] = 7;  // op kind 7 does not exist
  write_all(path, with_payload(good, p));
  REQUIRE_THAT(read_error(path), Catch::Contains("invalid op kind 7"));

  p = payload;
  p[op0 + 1] = 9;  // tensor 9 of 2
  write_all(path, with_payload(good, p));
  REQUIRE_THAT(read_error(path), Catch::Contains("tensor index 9 out of range"));

  p = payload;
  p[op0] = static_cast<char>(OpKind::load) | (1 << 3);  // a unit on a load
  write_all(path, with_payload(good, p));
  REQUIRE_THAT(read_error(path), Catch::Contains("invalid op byte"));

  p = payload;
  p[payload.size() - 1] = static_cast<char>(payload[payload.size() - 1] + 1);  // op total
  write_all(path, with_payload(good, p));
  REQUIRE_THAT(read_error(path), Catch::Contains("end record counts"));

  p = payload;
  p[cta] = 'Z';
  write_all(path, with_payload(good, p));
  REQUIRE_THAT(read_error(path), Catch::Contains("declares 1 CTAs but only 0"));
  std::filesystem::remove(path);
}

TEST_CASE("A writer destroyed before end leaves no file", "[trace_file]") {
  const std::string path = temp_path("unfinished.mwt");
  {
    TraceWriter writer(path);
    FakeSource source(3);
    writer.begin(source.workload());
  }
  REQUIRE_FALSE(std::filesystem::exists(path));
}

TEST_CASE("varints and zigzag deltas round-trip at the extremes", "[trace_file]") {
  for (std::int64_t v :
       {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1},
        std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}) {
    REQUIRE(unzigzag(zigzag(v)) == v);
  }
  std::string s;
  put_varint(s, ~std::uint64_t{0});
  REQUIRE(s.size() == 10);
  REQUIRE(crc32("123456789", 9) == 0xCBF43926u);  // the standard CRC-32 check value
}

TEST_CASE("Random damage under a valid checksum gives a clean read or a TraceError, never a crash",
          "[trace_file]") {
  const std::string path = write_fake("fuzz.mwt", 2);
  const std::string good = read_all(path);
  REQUIRE(good.size() < kMaxChunkPayload);
  const std::string payload = good.substr(kTracePrologueBytes + kChunkHeaderBytes);
  std::uint64_t state = 12345;
  const auto next = [&state]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  int errors = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string p = payload;
    const int flips = 1 + static_cast<int>(next() % 3);
    for (int f = 0; f < flips; ++f) {
      p[next() % p.size()] = static_cast<char>(next() & 0xFF);
    }
    if (next() % 4 == 0) p.resize(next() % p.size() + 1);
    write_all(path, with_payload(good, p));
    const std::string e = read_error(path);
    if (!e.empty()) {
      ++errors;
      REQUIRE_THAT(e, Catch::Contains(path + ": byte "));
    }
  }
  REQUIRE(errors > 0);
  std::filesystem::remove(path);
}

// A trace of an absurd shape (`memwall trace --workload naive --seq 1000000 -o F`: terabytes at
// 100 MB/s) wrote until the disk was full. The writer now looks at its file system's free space
// before its first chunk and every 16 MiB, and stops with the figures while more than
// TraceWriter::kKeepFreeBytes are left, removing the partial file.
TEST_CASE("A trace that would leave its file system less than the kept free space is refused",
          "[trace_file]") {
  const std::string path = temp_path("full_disk.mwt");
  std::filesystem::remove(path);
  FakeSource source(2000);
  const std::filesystem::space_info space =
      std::filesystem::space(std::filesystem::path(path).parent_path());
  {
    // More than the file system has free: refused at the first chunk, nothing left behind.
    TraceWriter writer(path, kTraceVersion, space.available + (std::uint64_t{1} << 40));
    bool refused = false;
    try {
      copy_trace(source, writer);
    } catch (const UsageError& e) {  // exit 2
      refused = true;
      CHECK_THAT(e.what(), Catch::Contains("free, and a trace leaves at least") &&
                               Catch::Contains("a trace of this shape would fill it"));
    }
    CHECK(refused);
  }
  CHECK_FALSE(std::filesystem::exists(path));
  // What the file system has free, less a little: written whole.
  FakeSource again(2000);
  TraceWriter writer(path, kTraceVersion, space.available / 2);
  copy_trace(again, writer);
  CHECK(std::filesystem::file_size(path) == writer.bytes_written());
  std::filesystem::remove(path);
}
