/// What a short kernel's first loads cost: one thread follows K dependent pointers (ld.global.cg)
/// whose lines lie 4 KiB, 2 MiB + 4 KiB or 64 MiB + 4 KiB apart (the same 2 MiB page, a new page
/// every load, a new 64 MiB region every load), then follows the same chain again. Run under
/// `ncu --cache-control all` (the calibration's condition: the L2 flushed before each kernel) and
/// `--cache-control none` (first_touch.sh): the first pass's loads miss the L2 either way (each
/// launch's chain has lines of its own, and after linking the program writes 256 MiB elsewhere);
/// what the stride changes is how many address translations a chain needs, and whether earlier
/// launches made them. The second pass is the control: L2 hits, translations made.
///
/// Usage: first_touch > loads.csv
///   loads.csv rows, one per launch (launches in order; first_touch.sh pairs them with ncu's rows):
///     stride_bytes,loads,repeat,cold_cycles,warm_cycles,sm,then sample_0 … sample_{K-1}: the cold
///     pass's loads each timed alone (clock64 before the load and after a shared-memory store of
///     its value), in cycles.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "ubench_common.cuh"

namespace {

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kStrides[] = {4096, 2 * kMiB + 4096, 64 * kMiB + 4096};
constexpr int kLoads[] = {1, 2, 4, 8, 16, 32};
constexpr int kMaxLoads = 32;
constexpr int kRepeats = 6;
constexpr size_t kScrubBytes = 256 * kMiB;  // written after linking: the chains leave the L2
constexpr size_t kBufferBytes = (64 * kMiB + 4096) * kMaxLoads + 4 * kMiB;

/// Where launch `index`'s chain starts: 128 KiB apart at a 4 KiB stride (a chain spans at most
/// 31 × 4 KiB), else 512 B apart (less than a stride). The three strides' chains start 0, 128 and
/// 256 B past a multiple of 512 and every stride is a multiple of 512, so no two chains of the
/// program share a line.
size_t chain_offset(size_t stride, size_t index) {
  if (stride == kStrides[0]) return index * 128 * 1024;
  return (stride == kStrides[1] ? 128 : 256) + index * 512;
}

struct TouchRun {
  unsigned long long cold;  // clock64 span of the first pass
  unsigned long long warm;  // of the second pass over the same chain
  unsigned long long end;  // where the chains ended (kept live)
  unsigned sm;
  unsigned samples[kMaxLoads];
};

/// Word at base + off + i·stride := address of word i + 1 (the last points to the first).
__global__ void link_chain(char* base, size_t off, size_t stride, int loads) {
  for (int i = threadIdx.x; i < loads; i += blockDim.x) {
    char* next = base + off + size_t((i + 1) % loads) * stride;
    *reinterpret_cast<unsigned long long*>(base + off + size_t(i) * stride) =
        reinterpret_cast<unsigned long long>(next);
  }
}

__global__ void scrub(uint4* p, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    p[i] = make_uint4(unsigned(i), 1u, 2u, 3u);
  }
}

__global__ void first_touch(const unsigned long long* start, int loads, TouchRun* run) {
  __shared__ volatile unsigned long long sink;
  if (threadIdx.x != 0) return;
  const unsigned long long* p = start;
  const long long c0 = clock64();
  for (int k = 0; k < loads; ++k) {
    const long long t0 = clock64();
    p = reinterpret_cast<const unsigned long long*>(__ldcg(p));
    sink = reinterpret_cast<unsigned long long>(p);  // the store waits for the load
    const long long t1 = clock64();
    run->samples[k] = unsigned(t1 - t0);
  }
  const long long c1 = clock64();
  for (int k = 0; k < loads; ++k) p = reinterpret_cast<const unsigned long long*>(__ldcg(p));
  sink = reinterpret_cast<unsigned long long>(p);
  const long long c2 = clock64();
  run->cold = static_cast<unsigned long long>(c1 - c0);
  run->warm = static_cast<unsigned long long>(c2 - c1);
  run->end = reinterpret_cast<unsigned long long>(p);
  run->sm = ubench::sm_id();
}

}  // namespace

int main() {
  char* buf = nullptr;
  uint4* scratch = nullptr;
  TouchRun* run = nullptr;
  UB_CHECK(cudaMalloc(&buf, kBufferBytes));
  UB_CHECK(cudaMalloc(&scratch, kScrubBytes));
  UB_CHECK(cudaMalloc(&run, sizeof(TouchRun)));
  // Every chain linked first, so that the timed launches follow each other with nothing between.
  size_t index = 0;
  for (const size_t stride : kStrides) {
    for (const int loads : kLoads) {
      for (int r = 0; r < kRepeats; ++r, ++index) {
        link_chain<<<1, 32>>>(buf, chain_offset(stride, index), stride, loads);
        UB_CHECK_LAUNCH("link_chain");
      }
    }
  }
  scrub<<<1024, 256>>>(scratch, kScrubBytes / sizeof(uint4));
  UB_CHECK_LAUNCH("scrub");
  UB_CHECK(cudaDeviceSynchronize());
  std::printf("stride_bytes,loads,repeat,cold_cycles,warm_cycles,sm");
  for (int k = 0; k < kMaxLoads; ++k) std::printf(",sample_%d", k);
  std::printf("\n");
  index = 0;
  for (const size_t stride : kStrides) {
    for (const int loads : kLoads) {
      for (int r = 0; r < kRepeats; ++r, ++index) {
        const auto* start =
            reinterpret_cast<const unsigned long long*>(buf + chain_offset(stride, index));
        first_touch<<<1, 32>>>(start, loads, run);
        UB_CHECK_LAUNCH("first_touch");
        TouchRun host{};
        UB_CHECK(cudaMemcpy(&host, run, sizeof host, cudaMemcpyDeviceToHost));
        UB_REQUIRE(host.end == reinterpret_cast<unsigned long long>(start),
                   "a chain of `loads` links returns to its start");
        std::printf("%zu,%d,%d,%llu,%llu,%u", stride, loads, r, host.cold, host.warm, host.sm);
        for (int k = 0; k < kMaxLoads; ++k) std::printf(",%u", k < loads ? host.samples[k] : 0u);
        std::printf("\n");
      }
    }
  }
  cudaFree(run);
  cudaFree(scratch);
  cudaFree(buf);
  return 0;
}
