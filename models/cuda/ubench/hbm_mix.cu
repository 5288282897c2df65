/// HBM bandwidth of a stream that reads and writes at once, against its read:write mix: the
/// measurement behind separate read and write rates (read-only, write-only and copy streams ran
/// at 4.20, 3.35 and 4.22 TB/s, so a copy is not bounded by the write-only rate).
/// One CTA of 1024 threads per SM (its dynamic shared-memory request leaves room for no second
/// one), on every SM or on CTAS of them. Each thread, per step, issues A independent 16-byte loads and B 16-byte
/// stores (the stores' values do not depend on the loads), so the mix is A:B in bytes. Reads come
/// from the first half of a 4 GiB buffer (word i = i), writes go to the second half; a launch
/// moves about 1 GiB, alternating between two windows of each half so that no launch reads what
/// the L2 kept of the last. Every launch's sum of words read is checked against its closed form,
/// and each mix's written words once by reading them back.
///
/// Usage: hbm_mix [CTAS] > hbm_mix.csv   (CTAS: SMs used, default all)
///   reads,writes,ctas,distinct_sms,read_bytes,write_bytes,ms,gbps,read_gbps,write_gbps,clock_mhz
///   (reads:writes = A:B; ms the median of 5 timed launches after one warm-up)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ubench_common.cuh"

namespace {

constexpr size_t kGiB = size_t(1) << 30;
constexpr size_t kHalf = 2 * kGiB;  // reads from [0, kHalf), writes to [kHalf, 2 kHalf)
constexpr size_t kWindow = kGiB;  // two windows per half, used in turn
constexpr size_t kLaunchBytes = kGiB;  // read + write bytes per launch, about
constexpr int kThreads = 1024;
constexpr int kTimedLaunches = 5;

/// CTA b reads `steps` · A · blockDim vectors from src + b · (that), and writes `steps` · B ·
/// blockDim vectors to dst + b · (that): vector v of the written region gets words 4v .. 4v + 3
/// (+ first_word). The words read are summed into *sum.
template <int A, int B>
__global__ void __launch_bounds__(kThreads, 1)
    mix_stream(const uint4* src, uint4* dst, unsigned long long steps, uint32_t first_word,
               unsigned* sum, ubench::CtaStamp* stamps) {
  const long long c0 = clock64();
  const unsigned long long g0 = ubench::global_timer_ns();
  const unsigned stride = blockDim.x;
  const uint4* r = src + blockIdx.x * steps * A * stride + threadIdx.x;
  const unsigned long long first_w = blockIdx.x * steps * B * stride + threadIdx.x;
  uint4* w = dst + first_w;
  uint32_t word = first_word + 4u * uint32_t(first_w);
  unsigned acc = 0;
#pragma unroll 1
  for (unsigned long long s = 0; s < steps; ++s) {
    uint4 v[A > 0 ? A : 1];
#pragma unroll
    for (int a = 0; a < A; ++a) v[a] = __ldcg(r + a * stride);
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const uint32_t wb = word + 4u * uint32_t(b * stride);
      __stcg(w + b * stride, make_uint4(wb, wb + 1, wb + 2, wb + 3));
    }
#pragma unroll
    for (int a = 0; a < A; ++a) acc += v[a].x + v[a].y + v[a].z + v[a].w;
    r += A * stride;
    w += B * stride;
    word += 4u * uint32_t(B * stride);
  }
  if (A > 0) atomicAdd(sum, acc);
  if (threadIdx.x == 0) {
    stamps[blockIdx.x] = {ubench::sm_id(), static_cast<unsigned long long>(clock64() - c0),
                          ubench::global_timer_ns() - g0};
  }
}

/// Counts the words of `count` from `words` that are not first_word + their index.
__global__ void count_wrong(const uint32_t* words, size_t count, uint32_t first_word,
                            unsigned* wrong) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned bad = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    bad += words[i] != first_word + uint32_t(i);
  }
  if (bad != 0) atomicAdd(wrong, bad);
}

using MixKernel = void (*)(const uint4*, uint4*, unsigned long long, uint32_t, unsigned*,
                           ubench::CtaStamp*);

struct Mix {
  int reads;
  int writes;
  MixKernel kernel;
};

// Read fractions 1, 31/32, 15/16, 7/8, 3/4, 2/3, 1/2, 1/3, 1/4, 1/8, 1/16, 1/32, 1/64, 0: the
// extremes say how few reads among writes (or writes among reads) already cost the mixed rate.
const Mix kMixes[] = {
    {8, 0, mix_stream<8, 0>},   {31, 1, mix_stream<31, 1>}, {15, 1, mix_stream<15, 1>},
    {7, 1, mix_stream<7, 1>},   {6, 2, mix_stream<6, 2>},   {4, 2, mix_stream<4, 2>},
    {4, 4, mix_stream<4, 4>},   {2, 4, mix_stream<2, 4>},   {2, 6, mix_stream<2, 6>},
    {1, 7, mix_stream<1, 7>},   {1, 15, mix_stream<1, 15>}, {1, 31, mix_stream<1, 31>},
    {1, 63, mix_stream<1, 63>}, {0, 8, mix_stream<0, 8>}};

}  // namespace

int main(int argc, char** argv) {
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int ctas = argc > 1 ? std::atoi(argv[1]) : prop.multiProcessorCount;
  UB_REQUIRE(ctas >= 1 && ctas <= prop.multiProcessorCount, "CTAS is not in 1 .. the SM count");
  const int smem = ubench::one_cta_per_sm_smem_bytes(prop);
  uint4* buf = nullptr;
  unsigned* sum = nullptr;
  ubench::CtaStamp* stamps = nullptr;
  UB_CHECK(cudaMalloc(&buf, 2 * kHalf));
  UB_CHECK(cudaMalloc(&sum, sizeof(unsigned)));
  UB_CHECK(cudaMalloc(&stamps, ctas * sizeof(ubench::CtaStamp)));
  ubench::fill_index<<<4 * ctas, 256>>>(reinterpret_cast<uint32_t*>(buf), kHalf / 4);
  UB_CHECK_LAUNCH("fill_index");
  UB_CHECK(cudaDeviceSynchronize());
  for (const Mix& m : kMixes) ubench::require_one_cta_per_sm(m.kernel, kThreads, smem);

  std::printf(
      "reads,writes,ctas,distinct_sms,read_bytes,write_bytes,ms,gbps,read_gbps,write_gbps,"
      "clock_mhz\n");
  const uint4* src = buf;
  uint4* dst = buf + kHalf / sizeof(uint4);
  ubench::EventTimer timer;
  for (const Mix& m : kMixes) {
    const unsigned long long step_bytes =
        (unsigned long long)(m.reads + m.writes) * sizeof(uint4) * kThreads * ctas;
    const unsigned long long steps = kLaunchBytes / step_bytes;
    const uint64_t read_bytes = steps * m.reads * sizeof(uint4) * kThreads * ctas;
    const uint64_t write_bytes = steps * m.writes * sizeof(uint4) * kThreads * ctas;
    UB_REQUIRE(read_bytes <= kWindow && write_bytes <= kWindow, "a launch is over its window");
    std::vector<float> ms;
    for (int launch = 0; launch <= kTimedLaunches; ++launch) {
      const uint64_t window = (launch % 2) * kWindow;
      const uint4* r = src + window / sizeof(uint4);
      uint4* w = dst + window / sizeof(uint4);
      const uint32_t first_read_word = uint32_t(window / 4);
      const uint32_t first_write_word = uint32_t(window / 4) + 7u * uint32_t(launch + 1);
      UB_CHECK(cudaMemset(sum, 0, sizeof(unsigned)));
      timer.start();
      m.kernel<<<ctas, kThreads, smem>>>(r, w, steps, first_write_word, sum, stamps);
      UB_CHECK_LAUNCH("mix_stream");
      const float t = timer.stop_ms();
      if (launch > 0) ms.push_back(t);
      unsigned got = 0;
      UB_CHECK(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
      UB_REQUIRE(m.reads == 0 || got == ubench::expected_index_sum(first_read_word, read_bytes / 4),
                 "the words read are not the words held");
      if (launch == 0 && m.writes > 0) {
        UB_CHECK(cudaMemset(sum, 0, sizeof(unsigned)));
        count_wrong<<<4 * ctas, 256>>>(reinterpret_cast<const uint32_t*>(w), write_bytes / 4,
                                       first_write_word, sum);
        UB_CHECK_LAUNCH("count_wrong");
        UB_CHECK(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
        UB_REQUIRE(got == 0, "the words written are not the words stored");
      }
    }
    const ubench::StampSummary summary = ubench::summarize_stamps(stamps, ctas);
    const double t = ubench::median(ms) * 1e-3;
    std::printf("%d,%d,%d,%d,%llu,%llu,%.4f,%.2f,%.2f,%.2f,%.1f\n", m.reads, m.writes, ctas,
                summary.distinct_sms, (unsigned long long)read_bytes,
                (unsigned long long)write_bytes, t * 1e3,
                double(read_bytes + write_bytes) / t / 1e9, double(read_bytes) / t / 1e9,
                double(write_bytes) / t / 1e9, summary.clock_mhz);
    std::fflush(stdout);
  }
  return 0;
}
