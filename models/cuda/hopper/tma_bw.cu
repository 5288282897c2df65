/// Per-SM bandwidth of the paths the Hopper kernels move their tiles on, against the number of
/// active SMs (one CTA per SM, grid = N CTAs of 384 threads) and the transfers each SM keeps in
/// flight: TMA tensor stores (cp.async.bulk.tensor shared -> global, 16 KiB boxes of 128 rows x
/// 128 bytes in the 128-byte swizzle, as wgmma_gemm's epilogue stores them), TMA tensor loads
/// (the same boxes into shared memory, completing on mbarriers), and ordinary 16-byte stores
/// (st.global.v4 from all 384 threads). Each in two modes: "l2", every CTA cycling over its own
/// 16 boxes (256 KiB; 33 MiB for 132 SMs, resident in the 60 MiB L2), "hbm", every box a new
/// one of a 2 GiB buffer (a box is 16 KiB of consecutive addresses), and "strided", every box a
/// new one of the same buffer seen as rows of 8 KiB (4096 fp16): a box's 128 rows of 128 bytes
/// lie 8 KiB apart, as the tiles of a row-major matrix do (wgmma_gemm's output boxes of S).
///
/// One launch per point after a warm-up launch, timed with CUDA events; CTA 0 reads clock64 and
/// %globaltimer at its start and end, which gives the SM clock of the launch.
///
/// Usage: tma_bw > tma_bw.csv
///   kind,mode,sms,inflight,bytes,ms,gbps,gbps_per_sm,sm_mhz,bytes_per_cycle_per_sm
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "models/cuda/hopper/hopper_ptx.cuh"
#include "models/cuda/ubench/ubench_common.cuh"

namespace {

using namespace memwall::hopper;

constexpr int kThreads = 384;
constexpr int kBoxRows = 128, kBoxCols = 64;  // fp16: 128 rows x 128 bytes = 16 KiB
constexpr int kBoxBytes = kBoxRows * kBoxCols * 2;
constexpr int kMaxInflight = 8;
constexpr int kL2Boxes = 16;  // per CTA in mode l2
constexpr int kBoxesPerCta = 256;  // 4 MiB per CTA per launch
constexpr long long kHbmRows = (2ll << 30) / 128;  // the 2 GiB buffer's 128-byte rows
constexpr int kWideCols = 4096;  // mode strided: rows of 8 KiB
constexpr long long kWideRows = (2ll << 30) / (kWideCols * 2);
enum Mode { kL2 = 0, kHbm = 1, kStrided = 2 };

/// The box a CTA moves at step i: its own 16 in mode l2, a fresh one otherwise; (column, row)
/// of its first element in the buffer's view (128-byte rows, or 8 KiB rows in mode strided).
__device__ __forceinline__ int2 box_at(int mode, int i) {
  if (mode == kL2) return make_int2(0, (blockIdx.x * kL2Boxes + i % kL2Boxes) * kBoxRows);
  const int g = blockIdx.x * kBoxesPerCta + i;
  if (mode == kHbm) return make_int2(0, g * kBoxRows);
  constexpr int kPerRow = kWideCols / kBoxCols;
  return make_int2((g % kPerRow) * kBoxCols, (g / kPerRow) * kBoxRows);
}

__device__ __forceinline__ void probe_start(unsigned long long* probe) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    probe[0] = clock64();
    probe[1] = ubench::global_timer_ns();
  }
}
__device__ __forceinline__ void probe_end(unsigned long long* probe) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    probe[2] = clock64();
    probe[3] = ubench::global_timer_ns();
  }
}

/// TMA stores: thread 0 keeps up to `inflight` bulk groups reading shared memory.
__global__ void __launch_bounds__(kThreads, 1)
    tma_store(const __grid_constant__ CUtensorMap map, int inflight, int mode,
              unsigned long long* probe) {
  extern __shared__ unsigned char raw[];
  unsigned char* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(raw) + 1023) & ~std::uintptr_t(1023));
  for (int i = threadIdx.x; i < kMaxInflight * kBoxBytes / 4; i += blockDim.x) {
    reinterpret_cast<unsigned*>(smem)[i] = 0x3C003C00u ^ i;
  }
  fence_proxy_async();
  __syncthreads();
  probe_start(probe);
  if (threadIdx.x == 0) {
    for (int i = 0; i < kBoxesPerCta; ++i) {
      const int2 at = box_at(mode, i);
      tma_store_3d(&map, smem + (i % inflight) * kBoxBytes, at.x, at.y, 0);
      bulk_commit();
      // At most `inflight` stores still reading their buffers.
      switch (inflight) {
        case 1: bulk_wait_read<0>(); break;
        case 2: bulk_wait_read<1>(); break;
        case 4: bulk_wait_read<3>(); break;
        default: bulk_wait_read<7>(); break;
      }
    }
    bulk_wait<0>();
  }
  __syncthreads();
  probe_end(probe);
}

/// TMA loads: thread 0 keeps up to `inflight` boxes in flight, one mbarrier each.
__global__ void __launch_bounds__(kThreads, 1)
    tma_load(const __grid_constant__ CUtensorMap map, int inflight, int mode,
             unsigned long long* probe) {
  extern __shared__ unsigned char raw[];
  unsigned char* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(raw) + 1023) & ~std::uintptr_t(1023));
  auto* bars = reinterpret_cast<std::uint64_t*>(smem + kMaxInflight * kBoxBytes);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kMaxInflight; ++s) mbarrier_init(&bars[s], 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  probe_start(probe);
  if (threadIdx.x == 0) {
    for (int i = 0; i < kBoxesPerCta + inflight; ++i) {
      if (i >= inflight) {  // box i - inflight has landed: its buffer is free
        const int j = i - inflight;
        mbarrier_wait(&bars[j % inflight], (j / inflight) & 1);
      }
      if (i < kBoxesPerCta) {
        const int s = i % inflight;
        mbarrier_arrive_expect_tx(&bars[s], kBoxBytes);
        const int2 at = box_at(mode, i);
        tma_load_3d(smem + s * kBoxBytes, &map, &bars[s], at.x, at.y, 0);
      }
    }
  }
  __syncthreads();
  probe_end(probe);
}

/// Ordinary stores: every thread stores 16 bytes per row group, the CTA a box's 16 KiB per step
/// (`inflight` steps unrolled between barriers: independent stores in flight per thread).
__global__ void __launch_bounds__(kThreads, 1)
    st_global(uint4* buffer, int inflight, int mode, unsigned long long* probe) {
  probe_start(probe);
  const uint4 v = make_uint4(threadIdx.x, blockIdx.x, 1u, 2u);
  const long long pitch = mode == kStrided ? kWideCols * 2 / 16 : 8;  // row pitch in uint4
  for (int i = 0; i < kBoxesPerCta; i += inflight) {
    for (int u = 0; u < inflight; ++u) {
      const int2 at = box_at(mode, i + u);
      uint4* box = buffer + static_cast<long long>(at.y) * pitch + at.x / 8;
      for (int c = threadIdx.x; c < kBoxBytes / 16; c += kThreads) box[(c / 8) * pitch + c % 8] = v;
    }
  }
  __syncthreads();
  probe_end(probe);
}

/// The buffer as rows of `cols` fp16, boxes of 64 x 128 in the 128-byte swizzle.
CUtensorMap make_map(void* base, long long cols, long long rows) {
  CUtensorMap map;
  const cuuint64_t dims[3] = {cuuint64_t(cols), cuuint64_t(rows), 1};
  const cuuint64_t strides[2] = {cuuint64_t(cols) * 2, cuuint64_t(rows) * cuuint64_t(cols) * 2};
  const cuuint32_t box[3] = {kBoxCols, kBoxRows, 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUresult r = cuTensorMapEncodeTiled(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, base, dims, strides, box, elem_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  UB_REQUIRE(r == CUDA_SUCCESS, "cuTensorMapEncodeTiled failed");
  return map;
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  UB_REQUIRE(prop.major == 9, "TMA needs a compute capability 9.x GPU");
  const int device_sms = prop.multiProcessorCount;
  const int smem = 1024 + kMaxInflight * kBoxBytes + 256;
  for (const void* k : {(const void*)tma_store, (const void*)tma_load, (const void*)st_global}) {
    UB_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  }
  int per_sm = 0;
  UB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tma_store, kThreads, smem));
  UB_REQUIRE(per_sm == 1, "one CTA per SM");
  void* buffer = nullptr;
  UB_CHECK(cudaMalloc(&buffer, size_t(kHbmRows) * 128));
  UB_CHECK(cudaMemset(buffer, 0, size_t(kHbmRows) * 128));
  unsigned long long* probe = nullptr;
  UB_CHECK(cudaMalloc(&probe, 4 * sizeof(unsigned long long)));
  const CUtensorMap narrow = make_map(buffer, kBoxCols, kHbmRows);
  const CUtensorMap wide = make_map(buffer, kWideCols, kWideRows);
  ubench::EventTimer timer;

  std::printf("kind,mode,sms,inflight,bytes,ms,gbps,gbps_per_sm,sm_mhz,bytes_per_cycle_per_sm\n");
  const char* kinds[] = {"tma_store", "tma_load", "st_global"};
  for (int kind = 0; kind < 3; ++kind) {
    for (const int mode : {kL2, kHbm, kStrided}) {
      const CUtensorMap& map = mode == kStrided ? wide : narrow;
      for (const int sms : {1, 2, 4, 8, 16, 33, 66, device_sms}) {
        for (const int inflight : {1, 2, 4, 8}) {
          const auto go = [&] {
            if (kind == 0) tma_store<<<sms, kThreads, smem>>>(map, inflight, mode, probe);
            if (kind == 1) tma_load<<<sms, kThreads, smem>>>(map, inflight, mode, probe);
            if (kind == 2)
              st_global<<<sms, kThreads, smem>>>(static_cast<uint4*>(buffer), inflight, mode,
                                                 probe);
            UB_CHECK_LAUNCH(kinds[kind]);
          };
          go();  // warm-up (and, in mode l2, the boxes into the L2)
          UB_CHECK(cudaDeviceSynchronize());
          timer.start();
          go();
          const double ms = timer.stop_ms();
          unsigned long long h[4];
          UB_CHECK(cudaMemcpy(h, probe, sizeof h, cudaMemcpyDeviceToHost));
          const double mhz = h[3] > h[1] ? double(h[2] - h[0]) / double(h[3] - h[1]) * 1e3 : 0.0;
          const double bytes = double(sms) * kBoxesPerCta * kBoxBytes;
          const double gbps = bytes / ms * 1e-6;
          const char* modes[] = {"l2", "hbm", "strided"};
          std::printf("%s,%s,%d,%d,%.0f,%.5f,%.1f,%.2f,%.0f,%.2f\n", kinds[kind], modes[mode], sms,
                      inflight, bytes, ms, gbps, gbps / sms, mhz,
                      mhz > 0 ? gbps / sms * 1e3 / mhz : 0.0);
          std::fflush(stdout);
        }
      }
    }
  }
  UB_CHECK(cudaFree(buffer));
  UB_CHECK(cudaFree(probe));
  return 0;
}
