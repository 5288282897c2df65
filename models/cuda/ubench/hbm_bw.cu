/// HBM read (and write) bandwidth against the number of active SMs and the bytes each SM keeps in
/// flight. One CTA per SM (its dynamic shared-memory request leaves room for no second one; the
/// %smid of each CTA is checked distinct), W warps per CTA, and U independent 16-byte loads per
/// thread issued before the first is used: W * 32 * 16 * U bytes in flight per SM at most.
/// Each launch streams a fresh contiguous region of a 4 GiB buffer (a cursor moves on by the
/// region each launch, so nothing is read from L2 that an earlier launch brought in); a launch
/// is sized to take about 2 ms at the bandwidth Little's law predicts, at most 2 GiB.
/// The buffer holds word i = i; every read launch's sum of words is checked against the closed
/// form, and each write configuration is checked once by reading its region back the same way
/// after poisoning it.
///
/// Usage: hbm_bw > hbm_bw.csv
///   mode,ctas,distinct_sms,warps,unroll,bytes_in_flight_per_sm,bytes,ms,gbps,gbps_per_sm,
///   clock_mhz (median over CTAs of clock64 / %globaltimer in the last launch)
#include <cstdint>
#include <cstdio>
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

/// CTA b reads vectors [b * vecs_per_cta, (b + 1) * vecs_per_cta) of `src`, U loads per thread in
/// flight, and adds every word into *sum.
template <int U>
__global__ void __launch_bounds__(1024, 1)
    read_stream(const uint4* src, unsigned long long vecs_per_cta, unsigned* sum,
                ubench::CtaStamp* stamps) {
  const long long c0 = clock64();
  const unsigned long long g0 = ubench::global_timer_ns();
  const unsigned stride = blockDim.x;
  const uint4* p = src + blockIdx.x * vecs_per_cta + threadIdx.x;
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
  }
  atomicAdd(sum, acc);
  if (threadIdx.x == 0) {
    stamps[blockIdx.x] = {ubench::sm_id(), static_cast<unsigned long long>(clock64() - c0),
                          ubench::global_timer_ns() - g0};
  }
}

/// The write twin of read_stream: vector v of the region gets words first_word + 4v .. +3.
template <int U>
__global__ void __launch_bounds__(1024, 1)
    write_stream(uint4* dst, unsigned long long vecs_per_cta, uint32_t first_word,
                 ubench::CtaStamp* stamps) {
  const long long c0 = clock64();
  const unsigned long long g0 = ubench::global_timer_ns();
  const unsigned stride = blockDim.x;
  const unsigned long long first = blockIdx.x * vecs_per_cta + threadIdx.x;
  uint4* p = dst + first;
  uint32_t w = first_word + 4u * uint32_t(first);
  const unsigned long long iters = vecs_per_cta / (unsigned long long)(U * stride);
#pragma unroll 1
  for (unsigned long long it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint32_t wu = w + 4u * uint32_t(u * stride);
      __stcg(p + u * stride, make_uint4(wu, wu + 1, wu + 2, wu + 3));
    }
    p += U * stride;
    w += 4u * uint32_t(U * stride);
  }
  if (threadIdx.x == 0) {
    stamps[blockIdx.x] = {ubench::sm_id(), static_cast<unsigned long long>(clock64() - c0),
                          ubench::global_timer_ns() - g0};
  }
}

using ReadKernel = void (*)(const uint4*, unsigned long long, unsigned*, ubench::CtaStamp*);
using WriteKernel = void (*)(uint4*, unsigned long long, uint32_t, ubench::CtaStamp*);

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
  void measure(bool write, int ctas, int warps, int unroll) {
    const int threads = 32 * warps;
    const double in_flight = double(threads) * 16.0 * unroll;
    const double predicted = std::min(
        kMaxBytesPerSecond, ctas * std::min(in_flight / kLatencySeconds, kMaxSmBytesPerSecond));
    const uint64_t bytes_per_iter = uint64_t(ctas) * threads * 16 * unroll;
    uint64_t iters =
        std::max<uint64_t>(1, uint64_t(predicted * kTargetSeconds / double(bytes_per_iter)));
    iters = std::min<uint64_t>(iters, kMaxLaunchBytes / bytes_per_iter);
    const uint64_t bytes = iters * bytes_per_iter;
    const unsigned long long vecs_per_cta = iters * threads * unroll;
    ubench::EventTimer timer;
    std::vector<double> ms;
    for (int launch = 0; launch <= kTimedLaunches; ++launch) {
      const uint64_t offset = next_region(bytes);
      uint4* region = m_buf + offset / 16;
      const uint32_t first_word = uint32_t(offset / 4);
      if (write && launch == 0)
        UB_CHECK(cudaMemset(region, 0xab, bytes));  // poisoned, then checked
      if (!write) UB_CHECK(cudaMemset(m_sum, 0, sizeof(unsigned)));
      timer.start();
      if (write) {
        kWrites[unroll_index(unroll)]<<<ctas, threads, m_smem>>>(region, vecs_per_cta, first_word,
                                                                 m_stamps);
      } else {
        kReads[unroll_index(unroll)]<<<ctas, threads, m_smem>>>(region, vecs_per_cta, m_sum,
                                                                m_stamps);
      }
      UB_CHECK_LAUNCH(write ? "write_stream" : "read_stream");
      const float t = timer.stop_ms();
      if (launch > 0) ms.push_back(t);
      if (!write || launch == 0)
        check_sum(region, first_word, bytes, ctas, threads, unroll, vecs_per_cta, write);
    }
    const ubench::StampSummary stamps = ubench::summarize_stamps(m_stamps, ctas);
    const int distinct = stamps.distinct_sms;
    if (distinct != ctas) std::fprintf(stderr, "hbm_bw: %d CTAs ran on %d SMs\n", ctas, distinct);
    const double t = ubench::median(ms);
    const double gbps = double(bytes) / (t * 1e-3) / 1e9;
    std::printf("%s,%d,%d,%d,%d,%.0f,%llu,%.4f,%.2f,%.3f,%.1f\n", write ? "write" : "read", ctas,
                distinct, warps, unroll, in_flight, (unsigned long long)bytes, t, gbps, gbps / ctas,
                stamps.clock_mhz);
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
  /// words the region must hold.
  void check_sum(const uint4* region, uint32_t first_word, uint64_t bytes, int ctas, int threads,
                 int unroll, unsigned long long vecs_per_cta, bool write) {
    if (write) {
      UB_CHECK(cudaMemset(m_sum, 0, sizeof(unsigned)));
      kReads[unroll_index(unroll)]<<<ctas, threads, m_smem>>>(region, vecs_per_cta, m_sum,
                                                              m_stamps);
      UB_CHECK_LAUNCH("read_stream (write check)");
    }
    UB_CHECK(cudaDeviceSynchronize());
    unsigned sum = 0;
    UB_CHECK(cudaMemcpy(&sum, m_sum, sizeof sum, cudaMemcpyDeviceToHost));
    UB_REQUIRE(sum == ubench::expected_index_sum(first_word, bytes / 4),
               "the words read are not the words held");
  }

  int m_smem;
  int m_num_sms = 0;
  uint4* m_buf = nullptr;
  unsigned* m_sum = nullptr;
  ubench::CtaStamp* m_stamps = nullptr;
  uint64_t m_cursor = 0;
};

}  // namespace

int main() {
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  Streamer streamer(prop);
  const int n = streamer.num_sms();
  std::printf(
      "mode,ctas,distinct_sms,warps,unroll,bytes_in_flight_per_sm,bytes,ms,gbps,gbps_per_sm,"
      "clock_mhz\n");
  const std::vector<int> ctas = {1, 2, 4, 8, 16, n / 4, n / 2, n};
  for (int c : ctas) {
    for (int w = 1; w <= 32; w *= 2) {
      for (int u = 1; u <= 8; u *= 2) streamer.measure(false, c, w, u);
    }
  }
  for (int c : {1, 4, 16, n / 4, n / 2, n}) {
    for (int w : {4, 32}) {
      for (int u : {1, 4}) streamer.measure(true, c, w, u);
    }
  }
  return 0;
}
