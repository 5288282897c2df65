/// HBM read (and write) bandwidth against the number of active SMs and the bytes each SM keeps in
/// flight; with `l2`, the same for data that stays in the L2. One CTA per SM (its dynamic
/// shared-memory request leaves room for no second one; the %smid of each CTA is checked
/// distinct), W warps per CTA, and U independent 16-byte loads per thread issued before the first
/// is used: W * 32 * 16 * U bytes in flight per SM at most.
/// Each launch streams a fresh contiguous region of a 4 GiB buffer (a cursor moves on by the
/// region each launch, so nothing is read from L2 that an earlier launch brought in); a launch
/// is sized to take about 2 ms at the bandwidth Little's law predicts, at most 2 GiB.
/// The buffer holds word i = i; every read launch's sum of words is checked against the closed
/// form, and each write configuration is checked once by reading its region back the same way
/// after poisoning it.
///
/// `hbm_bw l2`: each CTA streams a region of its own (region_bytes, at least 64 KiB and at least
/// one iteration's loads: at most 16.5 MiB for 132 CTAs, in the L2 of any Hopper) over and over,
/// after a warm-up launch that brings the regions into the L2 (mode l2read, l2write), or every
/// CTA the same region (l2read_shared: each line read by every SM). The writes leave every word
/// as its index, so a read after them still checks the sum. The L2's bandwidth from one SM and
/// from all of them, against the bytes each SM keeps in flight: what `xbar.port_bandwidth`,
/// `xbar.write_port_bandwidth` and `l2.bandwidth` of the configs stand for.
///
/// Usage: hbm_bw > hbm_bw.csv; hbm_bw l2 > l2_bw.csv
///   mode,ctas,distinct_sms,warps,unroll,bytes_in_flight_per_sm,bytes,ms,gbps,gbps_per_sm,
///   clock_mhz (median over CTAs of clock64 / %globaltimer in the last launch)[,region_bytes]
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ubench_common.cuh"

namespace {

constexpr size_t kGiB = size_t(1) << 30;
constexpr size_t kBufferBytes = 4 * kGiB;
constexpr size_t kMaxLaunchBytes = 2 * kGiB;
constexpr double kTargetSeconds = 2e-3;
constexpr double kLatencySeconds = 600e-9;  // only to size launches
constexpr double kMaxSmBytesPerSecond = 100e9;
constexpr double kMaxBytesPerSecond = 4.8e12;
constexpr int kTimedLaunches = 5;
// The L2-resident streams (`hbm_bw l2`): a 64 KiB region per CTA at least, and only to size
// launches, a latency and rates above the L2's.
constexpr uint64_t kL2RegionVecs = 4096;
constexpr double kL2LatencySeconds = 300e-9;
constexpr double kMaxSmL2BytesPerSecond = 250e9;
constexpr double kMaxL2BytesPerSecond = 12e12;

enum class Mode { read, write, l2_read, l2_write, l2_read_shared };
constexpr const char* kModeNames[] = {"read", "write", "l2read", "l2write", "l2read_shared"};

/// Where CTA b's vectors lie: `region` vectors from src + b * region (or from src for every CTA
/// when `shared`), streamed from the start again when they run out; `region` is a multiple of
/// one iteration's U * blockDim.x vectors. The HBM streams have region = vecs_per_cta.
struct Region {
  unsigned long long vecs;
  bool shared;
  __device__ unsigned long long first() const { return shared ? 0 : blockIdx.x * vecs; }
};

/// CTA b reads vecs_per_cta vectors of its region of `src`, U loads per thread in flight, and
/// adds every word into *sum.
template <int U>
__global__ void __launch_bounds__(1024, 1)
    read_stream(const uint4* src, unsigned long long vecs_per_cta, Region region, unsigned* sum,
                ubench::CtaStamp* stamps) {
  const long long c0 = clock64();
  const unsigned long long g0 = ubench::global_timer_ns();
  const unsigned stride = blockDim.x;
  const uint4* const base = src + region.first();
  const uint4* const end = base + region.vecs;
  const uint4* p = base + threadIdx.x;
  const unsigned long long iters = vecs_per_cta / (unsigned long long)(U * stride);
  unsigned acc = 0;
#pragma unroll 1
  for (unsigned long long it = 0; it < iters; ++it) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldcg(p + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    p += U * stride;
    if (p >= end) p -= region.vecs;
  }
  atomicAdd(sum, acc);
  if (threadIdx.x == 0) {
    stamps[blockIdx.x] = {ubench::sm_id(), static_cast<unsigned long long>(clock64() - c0),
                          ubench::global_timer_ns() - g0};
  }
}

/// The write twin of read_stream: vector v of dst gets words first_word + 4v .. +3.
template <int U>
__global__ void __launch_bounds__(1024, 1)
    write_stream(uint4* dst, unsigned long long vecs_per_cta, Region region, uint32_t first_word,
                 ubench::CtaStamp* stamps) {
  const long long c0 = clock64();
  const unsigned long long g0 = ubench::global_timer_ns();
  const unsigned stride = blockDim.x;
  uint4* const base = dst + region.first();
  uint4* const end = base + region.vecs;
  uint4* p = base + threadIdx.x;
  const unsigned long long iters = vecs_per_cta / (unsigned long long)(U * stride);
#pragma unroll 1
  for (unsigned long long it = 0; it < iters; ++it) {
    const uint32_t w = first_word + 4u * uint32_t(p - dst);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint32_t wu = w + 4u * uint32_t(u * stride);
      __stcg(p + u * stride, make_uint4(wu, wu + 1, wu + 2, wu + 3));
    }
    p += U * stride;
    if (p >= end) p -= region.vecs;
  }
  if (threadIdx.x == 0) {
    stamps[blockIdx.x] = {ubench::sm_id(), static_cast<unsigned long long>(clock64() - c0),
                          ubench::global_timer_ns() - g0};
  }
}

using ReadKernel = void (*)(const uint4*, unsigned long long, Region, unsigned*, ubench::CtaStamp*);
using WriteKernel = void (*)(uint4*, unsigned long long, Region, uint32_t, ubench::CtaStamp*);

int unroll_index(int u) { return u == 1 ? 0 : u == 2 ? 1 : u == 4 ? 2 : 3; }
constexpr ReadKernel kReads[] = {read_stream<1>, read_stream<2>, read_stream<4>, read_stream<8>};
constexpr WriteKernel kWrites[] = {write_stream<1>, write_stream<2>, write_stream<4>,
                                   write_stream<8>};

class Streamer {
 public:
  explicit Streamer(const cudaDeviceProp& prop) : m_smem(ubench::one_cta_per_sm_smem_bytes(prop)) {
    m_num_sms = prop.multiProcessorCount;
    UB_CHECK(cudaMalloc(&m_buf, kBufferBytes));
    UB_CHECK(cudaMalloc(&m_sum, sizeof(unsigned)));
    UB_CHECK(cudaMalloc(&m_stamps, m_num_sms * sizeof(ubench::CtaStamp)));
    ubench::fill_index<<<4 * m_num_sms, 256>>>(reinterpret_cast<uint32_t*>(m_buf),
                                               kBufferBytes / 4);
    UB_CHECK_LAUNCH("fill_index");
    UB_CHECK(cudaDeviceSynchronize());
    for (int w = 1; w <= 32; w *= 2) {
      for (ReadKernel k : kReads) ubench::require_one_cta_per_sm(k, 32 * w, m_smem);
      for (WriteKernel k : kWrites) ubench::require_one_cta_per_sm(k, 32 * w, m_smem);
    }
  }
  ~Streamer() {
    cudaFree(m_buf);
    cudaFree(m_sum);
    cudaFree(m_stamps);
  }
  Streamer(const Streamer&) = delete;
  Streamer& operator=(const Streamer&) = delete;

  int num_sms() const { return m_num_sms; }

  /// Times one configuration: a warm-up launch, then the median of kTimedLaunches; prints a row.
  void measure(Mode mode, int ctas, int warps, int unroll) {
    const bool write = mode == Mode::write || mode == Mode::l2_write;
    const bool resident = mode != Mode::read && mode != Mode::write;
    const int threads = 32 * warps;
    const double in_flight = double(threads) * 16.0 * unroll;
    const double latency = resident ? kL2LatencySeconds : kLatencySeconds;
    const double per_sm = resident ? kMaxSmL2BytesPerSecond : kMaxSmBytesPerSecond;
    const double most = resident ? kMaxL2BytesPerSecond : kMaxBytesPerSecond;
    const double predicted = std::min(most, ctas * std::min(in_flight / latency, per_sm));
    const uint64_t iter_vecs = uint64_t(threads) * unroll;  // one iteration of one CTA
    const uint64_t bytes_per_iter = uint64_t(ctas) * iter_vecs * 16;
    uint64_t iters =
        std::max<uint64_t>(1, uint64_t(predicted * kTargetSeconds / double(bytes_per_iter)));
    iters = std::min<uint64_t>(iters, kMaxLaunchBytes / bytes_per_iter);
    const uint64_t bytes = iters * bytes_per_iter;
    const unsigned long long vecs_per_cta = iters * iter_vecs;
    // A resident region: at least 64 KiB and a whole number of iterations (iter_vecs is a power of
    // two, as kL2RegionVecs is); a stream's region is all it reads.
    const uint64_t region_vecs =
        resident ? std::max<uint64_t>(kL2RegionVecs, iter_vecs) : vecs_per_cta;
    const Region region{region_vecs, mode == Mode::l2_read_shared};
    const uint64_t footprint = (region.shared ? 1 : uint64_t(ctas)) * region_vecs * 16;
    ubench::EventTimer timer;
    std::vector<double> ms;
    for (int launch = 0; launch <= kTimedLaunches; ++launch) {
      // The streams move on through the buffer; a resident region stays where it is.
      const uint64_t offset = resident ? 0 : next_region(bytes);
      uint4* at = m_buf + offset / 16;
      const uint32_t first_word = uint32_t(offset / 4);
      if (write && launch == 0) UB_CHECK(cudaMemset(at, 0xab, footprint));  // poisoned, checked
      if (!write) UB_CHECK(cudaMemset(m_sum, 0, sizeof(unsigned)));
      timer.start();
      if (write) {
        kWrites[unroll_index(unroll)]<<<ctas, threads, m_smem>>>(at, vecs_per_cta, region,
                                                                 first_word, m_stamps);
      } else {
        kReads[unroll_index(unroll)]<<<ctas, threads, m_smem>>>(at, vecs_per_cta, region, m_sum,
                                                                m_stamps);
      }
      UB_CHECK_LAUNCH(write ? "write_stream" : "read_stream");
      const float t = timer.stop_ms();
      if (launch > 0) ms.push_back(t);
      if (!write || launch == 0)
        check_sum(at, first_word, ctas, threads, unroll, vecs_per_cta, region, write);
    }
    const ubench::StampSummary stamps = ubench::summarize_stamps(m_stamps, ctas);
    const int distinct = stamps.distinct_sms;
    if (distinct != ctas) std::fprintf(stderr, "hbm_bw: %d CTAs ran on %d SMs\n", ctas, distinct);
    const double t = ubench::median(ms);
    const double gbps = double(bytes) / (t * 1e-3) / 1e9;
    std::printf("%s,%d,%d,%d,%d,%.0f,%llu,%.4f,%.2f,%.3f,%.1f", kModeNames[int(mode)], ctas,
                distinct, warps, unroll, in_flight, (unsigned long long)bytes, t, gbps, gbps / ctas,
                stamps.clock_mhz);
    if (resident) std::printf(",%llu", (unsigned long long)(region_vecs * 16));
    std::printf("\n");
    std::fflush(stdout);
  }

 private:
  /// Byte offset of the next region of `bytes`; wraps to 0 at the end of the buffer.
  uint64_t next_region(uint64_t bytes) {
    if (m_cursor + bytes > kBufferBytes) m_cursor = 0;
    const uint64_t offset = m_cursor;
    m_cursor += bytes;
    return offset;
  }

  /// The read launch just made (or, after a write, a read of the written region) summed the
  /// words the region must hold: each CTA's region (from `at`, whose first word is first_word)
  /// vecs_per_cta / region.vecs times.
  void check_sum(const uint4* at, uint32_t first_word, int ctas, int threads, int unroll,
                 unsigned long long vecs_per_cta, Region region, bool write) {
    if (write) {
      UB_CHECK(cudaMemset(m_sum, 0, sizeof(unsigned)));
      kReads[unroll_index(unroll)]<<<ctas, threads, m_smem>>>(at, vecs_per_cta, region, m_sum,
                                                              m_stamps);
      UB_CHECK_LAUNCH("read_stream (write check)");
    }
    UB_CHECK(cudaDeviceSynchronize());
    unsigned sum = 0;
    UB_CHECK(cudaMemcpy(&sum, m_sum, sizeof sum, cudaMemcpyDeviceToHost));
    const uint64_t words = region.vecs * 4;
    uint32_t expected = 0;
    for (int b = 0; b < ctas; ++b) {
      expected += ubench::expected_index_sum(first_word + (region.shared ? 0 : b * words), words);
    }
    expected *= uint32_t(vecs_per_cta / region.vecs);
    UB_REQUIRE(sum == expected, "the words read are not the words held");
  }

  int m_smem;
  int m_num_sms = 0;
  uint4* m_buf = nullptr;
  unsigned* m_sum = nullptr;
  ubench::CtaStamp* m_stamps = nullptr;
  uint64_t m_cursor = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const bool l2 = argc > 1 && std::string(argv[1]) == "l2";
  UB_REQUIRE(argc == 1 || l2, "usage: hbm_bw [l2]");
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  Streamer streamer(prop);
  const int n = streamer.num_sms();
  std::printf(
      "mode,ctas,distinct_sms,warps,unroll,bytes_in_flight_per_sm,bytes,ms,gbps,gbps_per_sm,"
      "clock_mhz%s\n",
      l2 ? ",region_bytes" : "");
  if (l2) {
    for (int c : {1, 2, 4, 8, 16, n / 4, n / 2, n}) {
      for (int w = 1; w <= 32; w *= 2) {
        for (int u = 1; u <= 8; u *= 2) streamer.measure(Mode::l2_read, c, w, u);
      }
    }
    for (int c : {1, 4, 16, n / 4, n / 2, n}) {
      for (int w : {4, 8, 32}) {
        for (int u : {1, 4}) {
          streamer.measure(Mode::l2_write, c, w, u);
          streamer.measure(Mode::l2_read_shared, c, w, u);
        }
      }
    }
    return 0;
  }
  const std::vector<int> ctas = {1, 2, 4, 8, 16, n / 4, n / 2, n};
  for (int c : ctas) {
    for (int w = 1; w <= 32; w *= 2) {
      for (int u = 1; u <= 8; u *= 2) streamer.measure(Mode::read, c, w, u);
    }
  }
  for (int c : {1, 4, 16, n / 4, n / 2, n}) {
    for (int w : {4, 32}) {
      for (int u : {1, 4}) streamer.measure(Mode::write, c, w, u);
    }
  }
  return 0;
}
