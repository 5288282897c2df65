/// Per-SM issue rates of the pipes the timing model charges: mma.sync m16n8k16 (fp16 in, fp32
/// accumulate), MUFU ex2, FFMA, IMAD, IADD, IADD alternating with XOR, and ldmatrix.x4 from
/// shared memory, against warps per SM (1..32) and the number of independent dependency chains
/// per thread (1: each op waits for the last, giving the dependent latency; more: throughput).
/// One CTA per SM (dynamic shared-memory request), one launch over all SMs; the clock64 span of
/// each CTA between two barriers gives its cycles; the median over CTAs, then over 5 launches
/// after a warm-up. Each kernel's loop is kUnroll * chains ops of one kind per iteration, plus
/// three loop instructions (counter, compare, branch). run_all.sh logs the SASS opcode counts
/// that show each op is one instruction.
///
/// Usage: pipes > pipes.csv
///   op,unit,warps,chains,steps,cycles,inst_per_cycle_per_sm,units_per_cycle_per_sm,
///   cycles_per_step,kernel_ms,chip_units_per_s
///   steps = dependent ops per chain; cycles_per_step = cycles / steps (with 1 warp, 1 chain:
///   the op's dependent latency); unit: flop (mma 4096 per instruction, FFMA 64 per warp
///   instruction), op (thread-level ex2, IMAD, IADD), byte (ldmatrix.x4: 512 per instruction).
#include <cstdio>
#include <vector>

#include "ubench_common.cuh"

namespace {

constexpr int kUnroll = 16;  // ops per chain per loop iteration (the loop itself is not unrolled)
constexpr int kMaxThreads = 1024;
constexpr int kTimedLaunches = 5;
constexpr int kLdmatrixTiles = 64;  // 512-byte tiles of shared memory that ldmatrix reads

/// Run-time operands, so that no op folds into a constant.
struct Operands {
  unsigned half2_a;  // fp16 pair for the mma A operand
  unsigned half2_b;  // fp16 pair for the mma B operand
  float fa, fb;  // FFMA x = x * fa + fb
  unsigned im, ic;  // IMAD x = x * im + ic
  unsigned add;  // IADD x = x + add
  unsigned zero;  // 0: makes an ldmatrix address depend on the last ldmatrix's data
};

using PipeKernel = void (*)(int, Operands, unsigned*, unsigned long long*);

/// Cycles of the CTA's timed loop, measured between two barriers by thread 0.
#define UB_TIMED_LOOP_BEGIN \
  __syncthreads();          \
  const long long t0 = clock64();
#define UB_TIMED_LOOP_END         \
  __syncthreads();                \
  const long long t1 = clock64(); \
  if (threadIdx.x == 0) cycles[blockIdx.x] = static_cast<unsigned long long>(t1 - t0);

template <int CH>
__global__ void __launch_bounds__(kMaxThreads, 1)
    mma_chains(int iters, Operands op, unsigned* out, unsigned long long* cycles) {
  float c[CH][4];
#pragma unroll
  for (int k = 0; k < CH; ++k) {
#pragma unroll
    for (int j = 0; j < 4; ++j) c[k][j] = 1e-3f * float(k + j);
  }
  UB_TIMED_LOOP_BEGIN
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int k = 0; k < CH; ++k) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
            : "r"(op.half2_a), "r"(op.half2_a), "r"(op.half2_a), "r"(op.half2_a), "r"(op.half2_b),
              "r"(op.half2_b));
      }
    }
  }
  UB_TIMED_LOOP_END
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < CH; ++k) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
  if (s == -1.0f) out[0] = 1u;
}

template <int CH>
__global__ void __launch_bounds__(kMaxThreads, 1)
    ffma_chains(int iters, Operands op, unsigned* out, unsigned long long* cycles) {
  float x[CH];
#pragma unroll
  for (int k = 0; k < CH; ++k) x[k] = 0.5f + float(k) + 1e-4f * float(threadIdx.x % 89);
  UB_TIMED_LOOP_BEGIN
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int k = 0; k < CH; ++k) x[k] = fmaf(x[k], op.fa, op.fb);
    }
  }
  UB_TIMED_LOOP_END
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < CH; ++k) s += x[k];
  if (s == -1.0f) out[0] = 1u;
}

/// x = 2^-x stays in [0.5, 1].
template <int CH>
__global__ void __launch_bounds__(kMaxThreads, 1)
    ex2_chains(int iters, Operands op, unsigned* out, unsigned long long* cycles) {
  float x[CH];
#pragma unroll
  for (int k = 0; k < CH; ++k) x[k] = 0.6f + 0.01f * float(k) + 1e-4f * float(threadIdx.x % 89);
  UB_TIMED_LOOP_BEGIN
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int k = 0; k < CH; ++k) {
        asm volatile("{ .reg .f32 t; neg.f32 t, %0; ex2.approx.ftz.f32 %0, t; }" : "+f"(x[k]));
      }
    }
  }
  UB_TIMED_LOOP_END
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < CH; ++k) s += x[k];
  if (s == -1.0f || op.zero != 0) out[0] = 1u;
}

template <int CH>
__global__ void __launch_bounds__(kMaxThreads, 1)
    imad_chains(int iters, Operands op, unsigned* out, unsigned long long* cycles) {
  unsigned x[CH];
#pragma unroll
  for (int k = 0; k < CH; ++k) x[k] = threadIdx.x * 7919u + unsigned(k);
  UB_TIMED_LOOP_BEGIN
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int k = 0; k < CH; ++k) {
        asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x[k]) : "r"(op.im), "r"(op.ic));
      }
    }
  }
  UB_TIMED_LOOP_END
  unsigned s = 0;
#pragma unroll
  for (int k = 0; k < CH; ++k) s ^= x[k];
  if (s == 0x9e3779b9u) out[0] = s;
}

/// Integer adds in a ring, each add's operands both loop-variant so that no chain folds into a
/// multiply (ptxas turns x + y + ... + y into one IMAD): x[k] += x[k + 1], the last adding the
/// new x[0]. With one chain, two registers alternate (x0 += x1, x1 += x0): every add waits for
/// the one before.
template <int CH>
__global__ void __launch_bounds__(kMaxThreads, 1)
    iadd_chains(int iters, Operands op, unsigned* out, unsigned long long* cycles) {
  constexpr int kRegs = CH == 1 ? 2 : CH;
  unsigned x[kRegs];
#pragma unroll
  for (int k = 0; k < kRegs; ++k) x[k] = threadIdx.x * 7919u + op.add * unsigned(k + 1);
  UB_TIMED_LOOP_BEGIN
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if constexpr (CH == 1) {
        asm volatile("add.u32 %0, %0, %1;" : "+r"(x[u % 2]) : "r"(x[(u + 1) % 2]));
      } else {
#pragma unroll
        for (int k = 0; k < CH; ++k) {
          asm volatile("add.u32 %0, %0, %1;" : "+r"(x[k]) : "r"(x[(k + 1) % CH]));
        }
      }
    }
  }
  UB_TIMED_LOOP_END
  unsigned s = 0;
#pragma unroll
  for (int k = 0; k < kRegs; ++k) s ^= x[k];
  if (s == 0x9e3779b9u) out[0] = s;
}

/// Alternating add and xor: no two dependent ops of one kind, so none fuse into one IADD3/LOP3.
template <int CH>
__global__ void __launch_bounds__(kMaxThreads, 1)
    iadd_xor_chains(int iters, Operands op, unsigned* out, unsigned long long* cycles) {
  unsigned x[CH];
#pragma unroll
  for (int k = 0; k < CH; ++k) x[k] = threadIdx.x * 7919u + unsigned(k);
  UB_TIMED_LOOP_BEGIN
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kUnroll; u += 2) {
#pragma unroll
      for (int k = 0; k < CH; ++k) {
        asm volatile("add.u32 %0, %0, %1;" : "+r"(x[k]) : "r"(op.add));
        asm volatile("xor.b32 %0, %0, %1;" : "+r"(x[k]) : "r"(op.ic));
      }
    }
  }
  UB_TIMED_LOOP_END
  unsigned s = 0;
#pragma unroll
  for (int k = 0; k < CH; ++k) s ^= x[k];
  if (s == 0x9e3779b9u) out[0] = s;
}

/// Each chain's next address takes the last ldmatrix's first register & 0, so a chain is
/// dependent (latency = ldmatrix + LOP3 + IADD); the 32 rows of one x4 are 512 contiguous bytes
/// (no bank conflicts).
template <int CH>
__global__ void __launch_bounds__(kMaxThreads, 1)
    ldmatrix_chains(int iters, Operands op, unsigned* out, unsigned long long* cycles) {
  extern __shared__ uint4 tiles[];
  for (int i = threadIdx.x; i < kLdmatrixTiles * 32; i += blockDim.x) {
    tiles[i] = make_uint4(i, i + 1, i + 2, i + 3);
  }
  const unsigned base = unsigned(__cvta_generic_to_shared(tiles));
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned row[CH], addr[CH];
#pragma unroll
  for (int k = 0; k < CH; ++k) {
    row[k] = base + ((warp * CH + k) % kLdmatrixTiles) * 512 + lane * 16;
    addr[k] = row[k];
  }
  unsigned acc = 0;
  UB_TIMED_LOOP_BEGIN
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int k = 0; k < CH; ++k) {
        unsigned r0, r1, r2, r3;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                     : "r"(addr[k]));
        acc ^= r1 ^ r2 ^ r3;
        addr[k] = row[k] + (r0 & op.zero);
      }
    }
  }
  UB_TIMED_LOOP_END
  if (acc == 0x9e3779b9u) out[0] = acc;
}

/// One op kind at one chain count.
struct Pipe {
  const char* op;
  const char* unit;
  double units_per_inst;  // per warp instruction
  int chains;
  int iters;
  PipeKernel kernel;
};

}  // namespace

int main() {
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int num_sms = prop.multiProcessorCount;
  const int smem = ubench::one_cta_per_sm_smem_bytes(prop);
  UB_REQUIRE(size_t(smem) >= kLdmatrixTiles * 512, "the shared-memory request is too small");
  const std::vector<Pipe> pipes = {
      {"mma_m16n8k16_f16_f32", "flop", 4096, 1, 512, mma_chains<1>},
      {"mma_m16n8k16_f16_f32", "flop", 4096, 4, 512, mma_chains<4>},
      {"ffma", "flop", 64, 1, 1024, ffma_chains<1>},
      {"ffma", "flop", 64, 8, 1024, ffma_chains<8>},
      {"ex2_approx", "op", 32, 1, 256, ex2_chains<1>},
      {"ex2_approx", "op", 32, 8, 256, ex2_chains<8>},
      {"imad", "op", 32, 1, 1024, imad_chains<1>},
      {"imad", "op", 32, 8, 1024, imad_chains<8>},
      {"iadd", "op", 32, 1, 1024, iadd_chains<1>},
      {"iadd", "op", 32, 8, 1024, iadd_chains<8>},
      {"iadd_xor", "op", 32, 1, 1024, iadd_xor_chains<1>},
      {"iadd_xor", "op", 32, 8, 1024, iadd_xor_chains<8>},
      {"ldmatrix_x4", "byte", 512, 1, 256, ldmatrix_chains<1>},
      {"ldmatrix_x4", "byte", 512, 8, 256, ldmatrix_chains<8>},
  };
  // fp16 2^-10 in both halves of A and B: an mma adds 16 * 2^-20 to each accumulator.
  const Operands operands{0x14001400u, 0x14001400u, 0.9999f,     1e-4f,
                          1664525u,    1013904223u, 0x9e3779b9u, 0u};
  unsigned* out = nullptr;
  unsigned long long* cycles = nullptr;
  UB_CHECK(cudaMalloc(&out, sizeof(unsigned)));
  UB_CHECK(cudaMalloc(&cycles, num_sms * sizeof(unsigned long long)));
  std::printf(
      "op,unit,warps,chains,steps,cycles,inst_per_cycle_per_sm,units_per_cycle_per_sm,"
      "cycles_per_step,kernel_ms,chip_units_per_s\n");
  ubench::EventTimer timer;
  std::vector<unsigned long long> c(num_sms);
  for (const Pipe& p : pipes) {
    for (int warps = 1; warps <= 32; warps *= 2) {
      const int threads = 32 * warps;
      ubench::require_one_cta_per_sm(p.kernel, threads, smem);
      std::vector<double> cyc, ms;
      for (int launch = 0; launch <= kTimedLaunches; ++launch) {
        timer.start();
        p.kernel<<<num_sms, threads, smem>>>(p.iters, operands, out, cycles);
        UB_CHECK_LAUNCH(p.op);
        const float t = timer.stop_ms();
        UB_CHECK(cudaMemcpy(c.data(), cycles, num_sms * sizeof c[0], cudaMemcpyDeviceToHost));
        if (launch == 0) continue;
        cyc.push_back(ubench::median(c));
        ms.push_back(t);
      }
      const double cycles_median = ubench::median(cyc);
      const double steps = double(p.iters) * kUnroll;
      const double insts = steps * p.chains * warps;  // warp instructions per SM
      const double t = ubench::median(ms);
      std::printf("%s,%s,%d,%d,%.0f,%.0f,%.4f,%.2f,%.3f,%.4f,%.4e\n", p.op, p.unit, warps, p.chains,
                  steps, cycles_median, insts / cycles_median,
                  insts * p.units_per_inst / cycles_median, cycles_median / steps, t,
                  insts * p.units_per_inst * num_sms / (t * 1e-3));
      std::fflush(stdout);
    }
  }
  UB_CHECK(cudaFree(out));
  UB_CHECK(cudaFree(cycles));
  return 0;
}
