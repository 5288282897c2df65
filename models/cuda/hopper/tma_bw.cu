/// Per-SM bandwidth of the paths the Hopper kernels move their tiles on, against the number of
/// active SMs (one CTA per SM, grid = N CTAs of 384 threads) and the transfers each SM keeps in
/// flight: TMA tensor stores (cp.async.bulk.tensor shared -> global, 16 KiB boxes of 128 rows x
/// 128 bytes in the 128-byte swizzle, as wgmma_gemm's epilogue stores them), TMA tensor loads
/// (the same boxes into shared memory, completing on mbarriers), and ordinary 16-byte stores
/// (st.global.v4 from all 384 threads). Each in two modes: "l2", every CTA cycling over its own
/// 16 boxes (256 KiB; 33 MiB for 132 SMs, resident in the 60 MiB L2), and "hbm", every box a
/// new one of a 2 GiB buffer.
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
constexpr int kL2Boxes = 16;       // per CTA in mode l2
constexpr int kBoxesPerCta = 256;  // 4 MiB per CTA per launch
constexpr long long kHbmRows = (2ll << 30) / 128;  // the 2 GiB buffer's 128-byte rows

/// The box a CTA moves at step i: its own 16 in mode l2, a fresh one in mode hbm.
__device__ __forceinline__ int box_row(bool l2, int i) {
  return l2 ? (blockIdx.x * kL2Boxes + i % kL2Boxes) * kBoxRows
            : (blockIdx.x * kBoxesPerCta + i) * kBoxRows;
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
    tma_store(const __grid_constant__ CUtensorMap map, int inflight, bool l2,
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
      tma_store_3d(&map, smem + (i % inflight) * kBoxBytes, 0, box_row(l2, i), 0);
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
    tma_load(const __grid_constant__ CUtensorMap map, int inflight, bool l2,
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
        tma_load_3d(smem + s * kBoxBytes, &map, &bars[s], 0, box_row(l2, i), 0);
      }
    }
  }
  __syncthreads();
  probe_end(probe);
}

/// Ordinary stores: every thread stores 16 bytes per row group, the CTA a box's 16 KiB per step
/// (`inflight` steps unrolled between barriers: independent stores in flight per thread).
__global__ void __launch_bounds__(kThreads, 1)
    st_global(uint4* buffer, int inflight, bool l2, unsigned long long* probe) {
  probe_start(probe);
  const uint4 v = make_uint4(threadIdx.x, blockIdx.x, 1u, 2u);
  for (int i = 0; i < kBoxesPerCta; i += inflight) {
    for (int u = 0; u < inflight; ++u) {
      uint4* box = buffer + static_cast<long long>(box_row(l2, i + u)) * 8;  // 8 x 16 B per row
      for (int c = threadIdx.x; c < kBoxBytes / 16; c += kThreads) box[c] = v;
    }
  }
  __syncthreads();
  probe_end(probe);
}

CUtensorMap make_map(void* base) {
  CUtensorMap map;
  const cuuint64_t dims[3] = {kBoxCols, cuuint64_t(kHbmRows), 1};
  const cuuint64_t strides[2] = {kBoxCols * 2, cuuint64_t(kHbmRows) * kBoxCols * 2};
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
  const CUtensorMap map = make_map(buffer);
  ubench::EventTimer timer;

  std::printf("kind,mode,sms,inflight,bytes,ms,gbps,gbps_per_sm,sm_mhz,bytes_per_cycle_per_sm\n");
  const char* kinds[] = {"tma_store", "tma_load", "st_global"};
  for (int kind = 0; kind < 3; ++kind) {
    for (const bool l2 : {true, false}) {
      for (const int sms : {1, 2, 4, 8, 16, 33, 66, device_sms}) {
        for (const int inflight : {1, 2, 4, 8}) {
          const auto go = [&] {
            if (kind == 0) tma_store<<<sms, kThreads, smem>>>(map, inflight, l2, probe);
            if (kind == 1) tma_load<<<sms, kThreads, smem>>>(map, inflight, l2, probe);
            if (kind == 2) st_global<<<sms, kThreads, smem>>>(static_cast<uint4*>(buffer), inflight, l2, probe);
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
          std::printf("%s,%s,%d,%d,%.0f,%.5f,%.1f,%.2f,%.0f,%.2f\n", kinds[kind], l2 ? "l2" : "hbm",
                      sms, inflight, bytes, ms, gbps, gbps / sms, mhz,
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
