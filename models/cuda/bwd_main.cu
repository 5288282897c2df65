// bwd-cuda: runs, checks and times the attention backward kernels — FlashAttention-2's
// (models/cuda/flash2_backward.cu, the twin of memwall's flash2-bwd) and the unfused one
// (models/cuda/naive_backward.cu, naive-bwd's twin).
//
//   bwd-cuda [--workload flash2-bwd|naive-bwd] [--sweep check|measure]
//            [--case B,H,N,d,causal[,kv_heads]]...
//            [--repeats R] [--once] [--csv FILE]
//
// --workload applies to the --sweep and --case arguments after it (default flash2-bwd). Each
// case: Q, K, V, dO uniform in [-1, 1) (a hash of the element index and the case); flash2-bwd
// takes O and L from the flash2 forward kernel, naive-bwd P from naive's qk and softmax kernels
// (launch_naive_bwd_forward: with groups and the mask, their variants in naive_backward.cu); then
// the backward's launches. Cases of at most 2^22 score elements per head (and at most 8
// heads) are checked against a double-precision CPU reference (full dQ, dK, dV; the reference
// computes its own forward); --repeats timings (CUDA events, 3 warm-ups, the L2 flushed before
// each repetition, median) per launch and of all of them together. --once runs each case once,
// untimed (for ncu). Prints a CSV row per (case, kernel).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "models/cuda/cuda_check.h"
#include "models/cuda/flash2_attention.h"
#include "models/cuda/flash2_backward.h"
#include "models/cuda/harness_cases.h"
#include "models/cuda/naive_backward.h"

namespace memwall::cuda {
namespace {

enum class Bwd { kFlash2, kNaive };

struct Case {
  Bwd workload = Bwd::kFlash2;
  AttentionShape shape;
};

const char* workload_name(Bwd w) { return w == Bwd::kFlash2 ? "flash2-bwd" : "naive-bwd"; }

__global__ void fill_uniform(half* x, long long n, unsigned seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed * 2246822519u ^
                 static_cast<unsigned>(i >> 32) * 3266489917u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    x[i] = __float2half(static_cast<float>(h >> 8) / 8388608.0f - 1.0f);
  }
}

Case parse_case(Bwd workload, const std::string& spec) {
  Case c;
  c.workload = workload;
  int causal = 0, kv_heads = 0;
  const int fields = std::sscanf(spec.c_str(), "%d,%d,%d,%d,%d,%d", &c.shape.batch, &c.shape.heads,
                                 &c.shape.seq, &c.shape.head_dim, &causal, &kv_heads);
  if (fields < 5 || c.shape.batch < 1 || c.shape.heads < 1 || c.shape.seq < 1 ||
      (causal != 0 && causal != 1) || (fields == 6 && kv_heads < 1)) {
    throw UsageError("--case " + spec +
                     ": expected B,H,N,d,causal[,kv_heads] (causal 0 or 1, kv_heads dividing H)");
  }
  c.shape.causal = causal == 1;
  c.shape.kv_heads = fields == 6 ? kv_heads : 0;
  if (workload == Bwd::kFlash2) {
    flash2_bwd_blocks(c.shape);
  } else {
    check_naive_bwd_supported(c.shape, NaiveBlocks{});
  }
  return c;
}

std::vector<Case> sweep(Bwd workload, const std::string& name) {
  std::vector<std::string> specs;
  const bool naive = workload == Bwd::kNaive;
  if (name == "check") {
    specs = naive ? std::vector<std::string>{"1,2,256,64,0",   "1,2,256,128,0", "2,3,1000,64,0",
                                             "2,3,1000,128,0", "1,1,200,128,0", "1,1,72,64,0",
                                             "1,1,72,64,1"}
                  : std::vector<std::string>{"1,2,256,64,0",    "1,2,256,128,0", "2,3,1000,64,0",
                                             "2,3,1000,128,0",  "1,2,1000,64,1", "1,2,1000,128,1",
                                             "1,1,77,64,1",     "1,1,200,128,0", "1,4,256,64,0,2",
                                             "1,4,1000,128,1,1"};
    if (naive) {
      // causal 0/1 × kv_heads H, H/2, 1 at H = 4 (B = 2 for H/2: the K/V head of b·H + h), N
      // past the last full tile and block_k chunk (1000 = 7·128 + 104, 200 = 128 + 72,
      // 520 = 4·128 + 8).
      for (const int d : {64, 128}) {
        for (const int causal : {0, 1}) {
          for (const auto& [batch, n, kv_heads] :
               {std::tuple{1, 1000, 4}, std::tuple{2, 200, 2}, std::tuple{1, 520, 1}}) {
            if (causal == 0 && kv_heads == 4) continue;  // unvaried: the cases above
            specs.push_back(std::to_string(batch) + ",4," + std::to_string(n) + "," +
                            std::to_string(d) + "," + std::to_string(causal) + "," +
                            std::to_string(kv_heads));
          }
        }
      }
    }
  } else if (name == "measure") {
    // flash2-bwd: the shapes of traces/measured/h200-torch-sdpa-bwd.csv; naive-bwd: the same
    // without the mask up to N = 8192 (4 rows of P and dP in 227 KiB), and with it at N = 4096
    // (the mask changes none of naive-bwd's boxes, only the values of P and dS).
    for (const int d : {64, 128}) {
      for (const int causal : naive ? std::vector<int>{0} : std::vector<int>{0, 1}) {
        for (const int n : {512, 1024, 2048, 4096, 8192, 16384}) {
          if (naive && n > 8192) continue;
          specs.push_back("1,16," + std::to_string(n) + "," + std::to_string(d) + "," +
                          std::to_string(causal));
        }
      }
      if (naive) specs.push_back("1,16,4096," + std::to_string(d) + ",1");
    }
    // The grouped-query shapes (naive-bwd: beside them H = 32 ungrouped, the same query heads'
    // work with a K/V head each).
    if (naive) specs.push_back("1,32,4096,128,0");
    for (const char* gqa :
         {"1,32,4096,128,0,8", "1,32,4096,128,1,8", "1,32,4096,128,0,1", "1,32,4096,128,1,1"}) {
      specs.push_back(gqa);
    }
  } else {
    throw UsageError("--sweep " + name + ": expected check or measure");
  }
  std::vector<Case> out;
  for (const std::string& s : specs) out.push_back(parse_case(workload, s));
  return out;
}

std::vector<float> to_host(const half* src, std::size_t n) {
  std::vector<half> h(n);
  check_cuda(cudaMemcpy(h.data(), src, n * sizeof(half), cudaMemcpyDeviceToHost), "copy");
  std::vector<float> f(n);
  for (std::size_t i = 0; i < n; ++i) f[i] = __half2float(h[i]);
  return f;
}

/// ‖x − ref‖ / ‖ref‖ for the three gradients, from a plain double-precision backward pass.
struct Errors {
  double dq = 0, dk = 0, dv = 0;
};

Errors check(const AttentionShape& s, const std::vector<float>& q, const std::vector<float>& k,
             const std::vector<float>& v, const std::vector<float>& d_o,
             const std::vector<float>& dq, const std::vector<float>& dk,
             const std::vector<float>& dv) {
  const int n = s.seq, m = s.keys(), d = s.head_dim, off = m - n;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const int group = s.group();
  double num[3] = {}, den[3] = {};
  std::vector<double> p(static_cast<std::size_t>(n) * m), ds(p.size());
  // dK and dV summed over each group's query heads, compared at the end.
  std::vector<double> ref_dk(dk.size(), 0.0), ref_dv(dv.size(), 0.0);
  for (long long bh = 0; bh < s.heads_total(); ++bh) {
    const long long kvh = bh / group;
    const float* qh = q.data() + bh * n * d;
    const float* kh = k.data() + kvh * m * d;
    const float* vh = v.data() + kvh * m * d;
    const float* doh = d_o.data() + bh * n * d;
    for (int i = 0; i < n; ++i) {
      double mx = -INFINITY;
      for (int j = 0; j < m; ++j) {
        double x = -INFINITY;
        if (!s.causal || j <= i + off) {
          x = 0;
          for (int c = 0; c < d; ++c) x += static_cast<double>(qh[i * d + c]) * kh[j * d + c];
          x *= scale;
        }
        p[static_cast<std::size_t>(i) * m + j] = x;
        mx = std::max(mx, x);
      }
      double sum = 0;
      for (int j = 0; j < m; ++j) {
        double& x = p[static_cast<std::size_t>(i) * m + j];
        x = std::exp(x - mx);
        sum += x;
      }
      // O_i, D_i = dO_i·O_i, dP_ij = dO_i·V_j, dS = P∘(dP − D).
      std::vector<double> o(d, 0.0);
      for (int j = 0; j < m; ++j) {
        double& x = p[static_cast<std::size_t>(i) * m + j];
        x /= sum;
        for (int c = 0; c < d; ++c) o[c] += x * vh[j * d + c];
      }
      double di = 0;
      for (int c = 0; c < d; ++c) di += o[c] * doh[i * d + c];
      for (int j = 0; j < m; ++j) {
        double dp = 0;
        for (int c = 0; c < d; ++c) dp += static_cast<double>(doh[i * d + c]) * vh[j * d + c];
        ds[static_cast<std::size_t>(i) * m + j] =
            p[static_cast<std::size_t>(i) * m + j] * (dp - di);
      }
    }
    const auto add = [&](int which, double got, double want) {
      num[which] += (got - want) * (got - want);
      den[which] += want * want;
    };
    for (int i = 0; i < n; ++i) {
      for (int c = 0; c < d; ++c) {
        double x = 0;
        for (int j = 0; j < m; ++j) x += ds[static_cast<std::size_t>(i) * m + j] * kh[j * d + c];
        add(0, dq[(bh * n + i) * d + c], scale * x);
      }
    }
    for (int j = 0; j < m; ++j) {
      for (int c = 0; c < d; ++c) {
        double xk = 0, xv = 0;
        for (int i = 0; i < n; ++i) {
          xk += ds[static_cast<std::size_t>(i) * m + j] * qh[i * d + c];
          xv += p[static_cast<std::size_t>(i) * m + j] * doh[i * d + c];
        }
        ref_dk[(kvh * m + j) * d + c] += scale * xk;
        ref_dv[(kvh * m + j) * d + c] += xv;
      }
    }
  }
  for (std::size_t i = 0; i < dk.size(); ++i) {
    for (const auto& [which, got, want] :
         {std::tuple{1, dk[i], ref_dk[i]}, std::tuple{2, dv[i], ref_dv[i]}}) {
      num[which] += (got - want) * (got - want);
      den[which] += want * want;
    }
  }
  return {std::sqrt(num[0] / den[0]), std::sqrt(num[1] / den[1]), std::sqrt(num[2] / den[2])};
}

std::string format_seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6e", s);
  return text;
}

double median(std::vector<float> x) {
  std::sort(x.begin(), x.end());
  return x[x.size() / 2] * 1e-3;
}

int run(int argc, char** argv) {
  std::vector<Case> cases;
  Bwd workload = Bwd::kFlash2;
  int repeats = 25;
  bool once = false;
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
      return argv[++i];
    };
    if (a == "--workload") {
      const std::string w = value();
      if (w != "flash2-bwd" && w != "naive-bwd") {
        throw UsageError("--workload " + w + ": expected flash2-bwd or naive-bwd");
      }
      workload = w == "flash2-bwd" ? Bwd::kFlash2 : Bwd::kNaive;
    } else if (a == "--sweep") {
      for (const Case& c : sweep(workload, value())) cases.push_back(c);
    } else if (a == "--case") {
      cases.push_back(parse_case(workload, value()));
    } else if (a == "--repeats") {
      repeats = std::max(1, std::atoi(value().c_str()));
    } else if (a == "--once") {
      once = true;
    } else if (a == "--csv") {
      csv = value();
    } else {
      throw UsageError(
          "unknown argument " + a +
          " (bwd-cuda [--workload flash2-bwd|naive-bwd] [--sweep check|measure] "
          "[--case B,H,N,d,causal[,kv_heads]]... [--repeats R] [--once] [--csv FILE])");
    }
  }
  if (cases.empty()) cases = sweep(workload, "check");
  std::ostringstream out;
  out << "workload,batch,heads,kv_heads,seq,head_dim,causal,block_q,block_kv,kernel,time_s,"
         "repeats,dq_rel_err,dk_rel_err,dv_rel_err,check\n";
  cudaStream_t stream;
  check_cuda(cudaStreamCreate(&stream), "stream");
  const std::size_t flush_bytes = 512u << 20;
  void* flush = nullptr;
  check_cuda(cudaMalloc(&flush, flush_bytes), "flush buffer");
  int failed = 0;
  unsigned seed = 1;
  for (const Case& c : cases) {
    const AttentionShape& s = c.shape;
    const bool naive = c.workload == Bwd::kNaive;
    const NaiveBlocks naive_blocks;
    const Flash2BwdBlocks blocks =
        naive ? Flash2BwdBlocks{naive_blocks.block_q, naive_blocks.block_kv} : flash2_bwd_blocks(s);
    const std::size_t nq = static_cast<std::size_t>(s.q_elements());
    const std::size_t nkv = static_cast<std::size_t>(s.kv_elements());
    const std::size_t rows = static_cast<std::size_t>(s.heads_total()) * s.seq;
    const std::size_t scores = naive ? static_cast<std::size_t>(s.score_elements()) : 0;
    std::vector<void*> allocations;
    const auto alloc = [&](std::size_t bytes) {
      void* p = nullptr;
      check_cuda(cudaMalloc(&p, std::max<std::size_t>(bytes, 16)), "alloc");
      allocations.push_back(p);
      return p;
    };
    auto* q = static_cast<half*>(alloc(nq * 2));
    auto* o = static_cast<half*>(alloc(nq * 2));
    auto* d_o = static_cast<half*>(alloc(nq * 2));
    auto* dq = static_cast<half*>(alloc(nq * 2));
    auto* k = static_cast<half*>(alloc(nkv * 2));
    auto* v = static_cast<half*>(alloc(nkv * 2));
    auto* dk = static_cast<half*>(alloc(nkv * 2));
    auto* dv = static_cast<half*>(alloc(nkv * 2));
    auto* l = static_cast<float*>(alloc(naive ? 0 : rows * 4));
    auto* dsum = static_cast<float*>(alloc(naive ? 0 : rows * 4));
    auto* acc = static_cast<float*>(alloc(naive ? 0 : nq * 4));
    const bool grouped = s.group() > 1;
    const std::size_t expanded = static_cast<std::size_t>(s.heads_total()) * s.keys() * s.head_dim;
    auto* dk_x = static_cast<half*>(alloc(grouped ? expanded * 2 : 0));
    auto* dv_x = static_cast<half*>(alloc(grouped ? expanded * 2 : 0));
    auto* p = static_cast<half*>(alloc(scores * 2));
    auto* dp = static_cast<half*>(alloc(scores * 2));
    auto* ds = static_cast<half*>(alloc(scores * 2));
    fill_uniform<<<1024, 256, 0, stream>>>(q, static_cast<long long>(nq), seed * 4 + 0);
    fill_uniform<<<1024, 256, 0, stream>>>(k, static_cast<long long>(nkv), seed * 4 + 1);
    fill_uniform<<<1024, 256, 0, stream>>>(v, static_cast<long long>(nkv), seed * 4 + 2);
    fill_uniform<<<1024, 256, 0, stream>>>(d_o, static_cast<long long>(nq), seed * 4 + 3);
    ++seed;
    const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
    const Flash2BwdTensors t{q, k, v, o, d_o, l, dsum, acc, dq, dk, dv, dk_x, dv_x};
    const NaiveBwdTensors nt{q, k, v, d_o, p, dp, ds, dq, dk, dv, dk_x, dv_x};
    if (naive) {  // P = softmax(scale·Q·Kᵀ) (masked), S staged in dS
      launch_naive_bwd_forward(s, naive_blocks, q, k, ds, p, scale, stream);
      launch_naive_bwd(s, naive_blocks, nt, scale, stream);
    } else {
      launch_flash2_fwd(s, default_flash2_blocks(s.head_dim), q, k, v, o, l, scale, stream);
      launch_flash2_bwd(s, t, scale, stream);
    }
    check_cuda(cudaStreamSynchronize(stream), "backward");

    Errors err{NAN, NAN, NAN};
    std::string verdict = "unchecked";
    if (static_cast<long long>(s.seq) * s.keys() <= (1ll << 22) && s.heads_total() <= 8) {
      err = check(s, to_host(q, nq), to_host(k, nkv), to_host(v, nkv), to_host(d_o, nq),
                  to_host(dq, nq), to_host(dk, nkv), to_host(dv, nkv));
      const bool ok = err.dq < 1e-2 && err.dk < 1e-2 && err.dv < 1e-2;
      verdict = ok ? "pass" : "FAIL";
      failed += ok ? 0 : 1;
    }
    std::fprintf(stderr, "%s B=%d H=%d Hkv=%d N=%d d=%d causal=%d: dQ %.2e dK %.2e dV %.2e %s\n",
                 workload_name(c.workload), s.batch, s.heads, s.kv_heads_or_heads(), s.seq,
                 s.head_dim, s.causal ? 1 : 0, err.dq, err.dk, err.dv, verdict.c_str());

    // The launches in order (the model's kernel names), then "total".
    std::vector<std::string> names =
        naive ? std::vector<std::string>{"dv", "dp", "softmax_bwd", "dq", "dk"}
              : std::vector<std::string>{"flash2_bwd_dot_do_o", "flash2_bwd",
                                         "flash2_bwd_convert_dq"};
    if (grouped) names.push_back(naive ? "sum_dkv" : "flash2_bwd_sum_dkv");
    names.push_back("total");
    const int parts = static_cast<int>(names.size()) - 1;
    const auto launch_part = [&](int i) {
      if (naive) {
        const NaiveBwdPart which[] = {NaiveBwdPart::kDv,         NaiveBwdPart::kDp,
                                      NaiveBwdPart::kSoftmaxBwd, NaiveBwdPart::kDq,
                                      NaiveBwdPart::kDk,         NaiveBwdPart::kSumDkv};
        launch_naive_bwd(s, naive_blocks, nt, scale, stream, which[i]);
      } else {
        const Flash2BwdPart which[] = {Flash2BwdPart::kDotDoO, Flash2BwdPart::kBackward,
                                       Flash2BwdPart::kConvertDq, Flash2BwdPart::kSumDkv};
        launch_flash2_bwd(s, t, scale, stream, which[i]);
      }
    };
    std::vector<std::vector<float>> times(names.size());
    if (!once) {
      std::vector<cudaEvent_t> ev(names.size());
      for (cudaEvent_t& e : ev) check_cuda(cudaEventCreate(&e), "event");
      for (int r = 0; r < repeats + 3; ++r) {
        check_cuda(cudaMemsetAsync(flush, r & 0xff, flush_bytes, stream), "flush");
        for (int i = 0; i < parts; ++i) {
          check_cuda(cudaEventRecord(ev[i], stream), "record");
          launch_part(i);
        }
        check_cuda(cudaEventRecord(ev[parts], stream), "record");
        check_cuda(cudaEventSynchronize(ev[parts]), "sync");
        if (r < 3) continue;
        for (int i = 0; i < parts; ++i) {
          float ms = 0;
          check_cuda(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]), "elapsed");
          times[i].push_back(ms);
        }
        float ms = 0;
        check_cuda(cudaEventElapsedTime(&ms, ev[0], ev[parts]), "elapsed");
        times[parts].push_back(ms);
      }
      for (cudaEvent_t& e : ev) check_cuda(cudaEventDestroy(e), "event");
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      char row[512];
      std::snprintf(row, sizeof row, "%s,%d,%d,%d,%d,%d,%d,%d,%d,%s,%s,%d,%.3e,%.3e,%.3e,%s\n",
                    workload_name(c.workload), s.batch, s.heads, s.kv_heads_or_heads(), s.seq,
                    s.head_dim, s.causal ? 1 : 0, blocks.block_q, blocks.block_kv, names[i].c_str(),
                    once ? "" : format_seconds(median(times[i])).c_str(), once ? 0 : repeats,
                    err.dq, err.dk, err.dv, verdict.c_str());
      out << row;
    }
    for (void* a : allocations) check_cuda(cudaFree(a), "free");
  }
  if (csv.empty()) {
    std::fputs(out.str().c_str(), stdout);
  } else {
    std::ofstream(csv) << out.str();
  }
  std::fprintf(stderr, "bwd-cuda: %zu cases, %d failed\n", cases.size(), failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace memwall::cuda

int main(int argc, char** argv) {
  return memwall::cuda::guarded_main("bwd-cuda", memwall::cuda::run, argc, argv);
}
