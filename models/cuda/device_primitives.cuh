#pragma once
/// Device-side building blocks shared by the attention kernels: 16-byte asynchronous copies
/// (cp.async), shared-memory tiles with an XOR swizzle, ldmatrix fragment loads and the
/// m16n8k16 fp16 tensor-core product with fp32 accumulation.
///
/// Shared-memory tiles are row-major with a row of W halves (W a multiple of 64, so a row holds
/// at least eight 16-byte chunks); chunk c of row r lives at chunk position c ^ (r % 8). With that
/// swizzle the eight row addresses of one ldmatrix 8×8 matrix fall in eight different bank groups.

#include <cuda_fp16.h>

#include <cstdint>

namespace memwall::cuda {

/// Halves in one 16-byte chunk.
inline constexpr int kChunkHalves = 8;

/// Offset in halves of chunk `chunk` of row `row` in a swizzled tile with rows of `width` halves.
template <int Width>
__device__ __forceinline__ int swizzled_offset(int row, int chunk) {
  static_assert(Width % 64 == 0, "swizzled tiles need rows of at least 8 chunks");
  return row * Width + ((chunk ^ (row & 7)) * kChunkHalves);
}

/// Shared-memory address of a generic pointer, for the PTX instructions below.
__device__ __forceinline__ std::uint32_t smem_address(const void* ptr) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(ptr));
}

/// Copies 16 bytes global → shared without passing through registers or L1 (cp.async.cg).
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_address(smem_dst)),
               "l"(gmem_src));
}

/// Closes the current group of cp.async copies issued by this thread.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

/// Waits until at most `Pending` of this thread's committed cp.async groups are still in flight.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

/// Loads a box of `rows` × `Width` halves (row pitch `pitch` halves in global memory) into a
/// swizzled shared tile of `Rows` rows with `Threads` threads. Rows at or past `rows` are filled
/// with zeros in shared memory and never read from global memory; each valid 16-byte chunk is
/// copied exactly once.
template <int Rows, int Width, int Threads>
__device__ __forceinline__ void load_tile_rows(half* tile, const half* gmem, int rows,
                                               long long pitch) {
  constexpr int kChunksPerRow = Width / kChunkHalves;
  constexpr int kChunks = Rows * kChunksPerRow;
#pragma unroll
  for (int idx = static_cast<int>(threadIdx.x); idx < kChunks; idx += Threads) {
    const int r = idx / kChunksPerRow;
    const int c = idx % kChunksPerRow;
    half* dst = tile + swizzled_offset<Width>(r, c);
    if (r < rows) {
      cp_async_16(dst, gmem + r * pitch + c * kChunkHalves);
    } else {
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
    }
  }
}

/// Like load_tile_rows, but only the first `cols` halves of each row are valid (cols a multiple
/// of 8); the rest of the row is zero-filled in shared memory.
template <int Rows, int Width, int Threads>
__device__ __forceinline__ void load_tile_box(half* tile, const half* gmem, int rows, int cols,
                                              long long pitch) {
  constexpr int kChunksPerRow = Width / kChunkHalves;
  constexpr int kChunks = Rows * kChunksPerRow;
#pragma unroll
  for (int idx = static_cast<int>(threadIdx.x); idx < kChunks; idx += Threads) {
    const int r = idx / kChunksPerRow;
    const int c = idx % kChunksPerRow;
    half* dst = tile + swizzled_offset<Width>(r, c);
    if (r < rows && c * kChunkHalves < cols) {
      cp_async_16(dst, gmem + r * pitch + c * kChunkHalves);
    } else {
      *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
    }
  }
}

/// Stores the valid `rows` × `cols` part of a swizzled shared tile (cols a multiple of 8) to
/// global memory as 16-byte stores, each chunk exactly once.
template <int Rows, int Width, int Threads>
__device__ __forceinline__ void store_tile_box(half* gmem, const half* tile, int rows, int cols,
                                               long long pitch) {
  constexpr int kChunksPerRow = Width / kChunkHalves;
  constexpr int kChunks = Rows * kChunksPerRow;
#pragma unroll
  for (int idx = static_cast<int>(threadIdx.x); idx < kChunks; idx += Threads) {
    const int r = idx / kChunksPerRow;
    const int c = idx % kChunksPerRow;
    if (r < rows && c * kChunkHalves < cols) {
      *reinterpret_cast<uint4*>(gmem + r * pitch + c * kChunkHalves) =
          *reinterpret_cast<const uint4*>(tile + swizzled_offset<Width>(r, c));
    }
  }
}

/// Writes two fp32 values as a half2 at (row, col) of a swizzled shared tile (col even).
template <int Width>
__device__ __forceinline__ void store_half2(half* tile, int row, int col, float x, float y) {
  const int offset = swizzled_offset<Width>(row, col / kChunkHalves) + (col % kChunkHalves);
  *reinterpret_cast<half2*>(tile + offset) = __floats2half2_rn(x, y);
}

/// Writes a warp's mma.sync accumulators to a swizzled shared tile of Width columns: fragment
/// (mt, nt) of the warp at (wm, wn) of warps of WarpRows × WarpCols, rows g and g + 8 of its
/// m16n8 block, each value times `scale` when Scaled.
template <int Width, int WarpRows, int WarpCols, bool Scaled, int Mt, int Nt>
__device__ __forceinline__ void stage_accumulators(half* tile, const float (&acc)[Mt][Nt][4],
                                                   int wm, int wn, int lane, float scale) {
  const int g = lane / 4;
  const int t = lane % 4;
#pragma unroll
  for (int mt = 0; mt < Mt; ++mt) {
#pragma unroll
    for (int nt = 0; nt < Nt; ++nt) {
      const int r = wm * WarpRows + mt * 16 + g;
      const int c = wn * WarpCols + nt * 8 + 2 * t;
      if constexpr (Scaled) {
        store_half2<Width>(tile, r, c, acc[mt][nt][0] * scale, acc[mt][nt][1] * scale);
        store_half2<Width>(tile, r + 8, c, acc[mt][nt][2] * scale, acc[mt][nt][3] * scale);
      } else {
        store_half2<Width>(tile, r, c, acc[mt][nt][0], acc[mt][nt][1]);
        store_half2<Width>(tile, r + 8, c, acc[mt][nt][2], acc[mt][nt][3]);
      }
    }
  }
}

/// Four 8×8 fp16 matrices from shared memory; this lane supplies the row address `ptr`.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const half* ptr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(ptr)));
}

/// As ldmatrix_x4, each 8×8 matrix transposed.
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const half* ptr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(ptr)));
}

/// The A fragment (16×16, row-major) at (row0, col0) of a swizzled tile [rows][Width].
template <int Width>
__device__ __forceinline__ void load_a_fragment(std::uint32_t (&a)[4], const half* tile, int row0,
                                                int col0) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int row = row0 + (lane & 15);
  const int chunk = col0 / kChunkHalves + (lane >> 4);
  ldmatrix_x4(a, tile + swizzled_offset<Width>(row, chunk));
}

/// The A fragment (16×16) at rows m0 …, columns k0 … of a matrix stored transposed, as a swizzled
/// tile [k][Width] (m contiguous): ldmatrix.trans of its rows k.
template <int Width>
__device__ __forceinline__ void load_a_fragment_trans(std::uint32_t (&a)[4], const half* tile,
                                                      int m0, int k0) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int mat = lane >> 3;
  const int row = k0 + (lane & 7) + ((mat >> 1) << 3);
  const int chunk = m0 / kChunkHalves + (mat & 1);
  ldmatrix_x4_trans(a, tile + swizzled_offset<Width>(row, chunk));
}

/// B fragments of two adjacent n8 tiles (n0 … n0+15) over k0 … k0+15 from a tile stored as
/// [n][k] (k contiguous, e.g. K for Q·Kᵀ): b[0..1] for n0, b[2..3] for n0+8.
template <int Width>
__device__ __forceinline__ void load_b_fragments_nk(std::uint32_t (&b)[4], const half* tile, int n0,
                                                    int k0) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int row = n0 + (lane & 7) + ((lane >> 4) << 3);
  const int chunk = k0 / kChunkHalves + ((lane >> 3) & 1);
  ldmatrix_x4(b, tile + swizzled_offset<Width>(row, chunk));
}

/// B fragments of two adjacent n8 tiles (n0 … n0+15) over k0 … k0+15 from a tile stored as
/// [k][n] (n contiguous, e.g. V for P·V): b[0..1] for n0, b[2..3] for n0+8.
template <int Width>
__device__ __forceinline__ void load_b_fragments_kn(std::uint32_t (&b)[4], const half* tile, int k0,
                                                    int n0) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int row = k0 + (lane & 7) + (((lane >> 3) & 1) << 3);
  const int chunk = n0 / kChunkHalves + (lane >> 4);
  ldmatrix_x4_trans(b, tile + swizzled_offset<Width>(row, chunk));
}

/// c += a·b on the tensor cores: m16n8k16, fp16 inputs, fp32 accumulators.
__device__ __forceinline__ void mma_16816(float (&c)[4], const std::uint32_t (&a)[4],
                                          std::uint32_t b0, std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// Packs two fp32 values into one register of two halves (x in the low half).
__device__ __forceinline__ std::uint32_t pack_half2(float x, float y) {
  const half2 h = __floats2half2_rn(x, y);
  return *reinterpret_cast<const std::uint32_t*>(&h);
}

/// The grouped-query sum of the backward passes (flash2_bwd_sum_dkv_kernel, naive_bwd_sum_dkv_kernel;
/// the model's sum_dkv, models/attention_backward.h): CTA kvh·⌈n/kRows⌉ + j of kThreads threads
/// sums the G = `group` query heads' dK_expanded rows (kvh·G + h)·n + j·kRows … (kRows × D) into
/// dK's rows kvh·n + j·kRows … (fp32 in registers), one head's box at a time (every 16-byte piece
/// of the thread loaded, then added), then dV the same way.
template <int D, int kRows, int kThreads>
__device__ __forceinline__ void sum_head_groups(const half* __restrict__ dk_x,
                                                const half* __restrict__ dv_x,
                                                half* __restrict__ dk, half* __restrict__ dv, int n,
                                                int group) {
  constexpr int kChunksPerRow = D / kChunkHalves;
  constexpr int kItems = kRows * kChunksPerRow / kThreads;
  static_assert(kItems * kThreads == kRows * kChunksPerRow, "the threads cover the block");
  const int blocks = (n + kRows - 1) / kRows;
  const long long kvh = blockIdx.x / blocks;
  const int c0 = static_cast<int>(blockIdx.x % blocks) * kRows;
  const int rows = min(kRows, n - c0);
  const int tid = static_cast<int>(threadIdx.x);
  for (int which = 0; which < 2; ++which) {
    const half* src = which == 0 ? dk_x : dv_x;
    half* dst = (which == 0 ? dk : dv) + (kvh * n + c0) * D;
    float acc[kItems][kChunkHalves] = {};
    for (int h = 0; h < group; ++h) {
      const half* box = src + ((kvh * group + h) * n + c0) * D;
      uint4 x[kItems];
#pragma unroll
      for (int it = 0; it < kItems; ++it) {
        const int idx = it * kThreads + tid;
        x[it] =
            idx / kChunksPerRow < rows
                ? *reinterpret_cast<const uint4*>(box + static_cast<long long>(idx) * kChunkHalves)
                : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int it = 0; it < kItems; ++it) {
        const half2* hx = reinterpret_cast<const half2*>(&x[it]);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float2 f = __half22float2(hx[i]);
          acc[it][2 * i] += f.x;
          acc[it][2 * i + 1] += f.y;
        }
      }
    }
#pragma unroll
    for (int it = 0; it < kItems; ++it) {
      const int idx = it * kThreads + tid;
      if (idx / kChunksPerRow < rows) {
        uint4 y;
        std::uint32_t* hy = reinterpret_cast<std::uint32_t*>(&y);
#pragma unroll
        for (int i = 0; i < 4; ++i) hy[i] = pack_half2(acc[it][2 * i], acc[it][2 * i + 1]);
        *reinterpret_cast<uint4*>(dst + static_cast<long long>(idx) * kChunkHalves) = y;
      }
    }
  }
}

}  // namespace memwall::cuda
