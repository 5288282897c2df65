// memwall-cuda: runs the real attention kernels (naive: qk, softmax, pv; flash2_fwd) case by
// case: fresh random inputs per case, poisoned outputs, a check against a double-precision CPU
// reference, CUDA-event timing (warm-up, median of repeats, cold L2 before each repeat), CSV out.

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "models/cuda/cuda_check.h"
#include "models/cuda/flash2_attention.h"
#include "models/cuda/green_context.h"
#include "models/cuda/harness_cases.h"
#include "models/cuda/l2_reserve.h"
#include "models/cuda/naive_attention.h"
#include "models/cuda/reference.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"

namespace memwall::cuda {
namespace {

/// Elements of S up to which naive's P is also computed by the streaming softmax and compared
/// (two host copies of P: 2 × 4 bytes each).
constexpr std::int64_t kMaxStreamCompareElements = std::int64_t{1} << 26;
constexpr double kTolerance = 1e-2;  // relative error ‖out − ref‖ / ‖ref‖ over the sampled rows
constexpr int kSampleHeads = 4;
constexpr int kSampleRowsPerHead = 16;
constexpr std::int64_t kCheckAllRowsUpTo = 4096;  // B·H·N at or under which every row is checked
constexpr std::int64_t kCheckAllWorkUpTo = 1 << 24;  // … and B·H·N·Nkv at or under this

/// The harness's command line.
struct Options {
  std::string sweep = "check";
  std::vector<std::string> case_specs;
  std::string workload_filter;
  std::string csv_path;
  bool once = false;
  bool list = false;
  bool help = false;
  int repeats = 25;
  int warmup = 3;
  int sms = 0;  ///< SMs of the green context to run in; 0: none (the whole GPU, as before)
  bool l2_reserve = false;  ///< --l2-reserve given (0 included)
  std::uint64_t l2_reserve_bytes = 0;  ///< its bytes, when not given as a percentage
  int l2_reserve_percent = -1;  ///< its percentage of the device's maximum; -1: bytes
  std::string l2_probe_path;  ///< --l2-probe FILE; empty: no probe
  std::uint64_t seed = 1;
  // The variant flags, applied to every case (flash2 only); unset: each case's own.
  bool causal = false;
  int kv_heads = 0;
  int seq_kv = 0;
  int splits = 0;
};

const char* const kHelp =
    "memwall-cuda: runs the real attention kernels, checks them against a CPU reference, times\n"
    "them with CUDA events and writes one CSV row per (case, kernel).\n"
    "\n"
    "Options:\n"
    "  --sweep NAME     built-in case list: check, sweep, profile, variants-check or variants\n"
    "                   (default: check)\n"
    "  --case SPEC      one case as key=value,... with the contract's keys (repeatable; replaces "
    "--sweep)\n"
    "  --workload W     keep only the cases of workload W (naive or flash2)\n"
    "  --csv FILE       write the CSV to FILE, atomically (default: standard output)\n"
    "  --once           run each case once, checked but untimed (for ncu; time_s left empty)\n"
    "  --repeats N      timed runs per case; the median is reported (default 25)\n"
    "  --warmup N       untimed runs before timing (default 3)\n"
    "  --seed N         base seed; case i draws its inputs with seed N + i (default 1)\n"
    "  --sms N          run everything in a green context of N SMs (CUDA driver API; the driver\n"
    "                   rounds N up to its partition granularity; N = all SMs is a control) and\n"
    "                   add the CSV columns sms_requested and sms (the SMs it holds)\n"
    "  --l2-reserve R   set aside R bytes of L2 for persisting accesses (R%: that percentage of\n"
    "                   the device's maximum) and fill them with a hog buffer read through a\n"
    "                   persisting access policy window on a stream of its own, again after each\n"
    "                   flush; the kernels run without a window and get the rest of the L2. With\n"
    "                   --once every kernel gets a flush and a hog read before it (run ncu with\n"
    "                   --cache-control none: its own flush would come after the hog read). Adds\n"
    "                   the CSV columns reserve_bytes and granted_bytes (the limit read back)\n"
    "  --l2-probe FILE  with --l2-reserve: before the cases, time re-reads of buffers of 2-56 MiB\n"
    "                   and a read of the hog after a flush (l2_probe_* kernels); CSV to FILE\n"
    "  --causal         causal mask, aligned bottom-right (key j visible to row i iff\n"
    "                   j <= i + seq_kv - seq), for every case (flash2 only)\n"
    "  --kv-heads N     K/V heads (grouped-query attention; 1: multi-query); must divide heads\n"
    "  --seq-kv N       keys per head (default: seq); --seq-kv 65536 with seq=1 is decode\n"
    "  --splits N       split-KV: N splits of the K/V blocks and a combine kernel (1: none)\n"
    "  --list           print the cases' parameter columns and exit\n"
    "  --help           print this help and exit\n"
    "\n"
    "Exit status: 0 all cases passed, 1 a check failed or CUDA failed, 2 bad command line.\n"
    "\n"
    "Examples:\n"
    "  memwall-cuda --sweep check\n"
    "  memwall-cuda --sweep sweep --csv timing.csv\n"
    "  memwall-cuda --case workload=flash2,batch=4,heads=16,seq=4096,head_dim=128,block_q=64\n"
    "  memwall-cuda --case workload=flash2,batch=1,heads=32,seq=1,head_dim=128 --kv-heads 8\n"
    "      --seq-kv 65536 --splits 4\n"
    "  memwall-cuda --sweep variants-check\n"
    "  memwall-cuda --sweep sweep --sms 66 --csv timing-66.csv\n"
    "  memwall-cuda --sweep sweep --l2-reserve 50% --l2-probe probe.csv --csv timing-l2.csv\n"
    "  ncu --clock-control none --cache-control none ... memwall-cuda --sweep profile --once\n"
    "      --l2-reserve 25% --csv launches.csv\n"
    "  ncu --clock-control none --csv ... memwall-cuda --sweep profile --once --csv launches.csv\n";

int parse_count(const std::string& flag, const std::string& value, int min_value) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(value, &used);
    if (used != value.size() || v < min_value || v > 1000000) {
      throw UsageError("");
    }
    return static_cast<int>(v);
  } catch (const std::exception&) {
    throw UsageError(flag + ": expected an integer ≥ " + std::to_string(min_value) + ", got '" +
                     value + "'");
  }
}

/// --l2-reserve's value: a byte count, or a whole percentage (0-100) of the device's maximum.
void parse_l2_reserve(const std::string& value, Options& opt) {
  const bool percent = !value.empty() && value.back() == '%';
  const std::string digits = percent ? value.substr(0, value.size() - 1) : value;
  try {
    std::size_t used = 0;
    if (digits.empty() || digits[0] < '0' || digits[0] > '9') {
      throw UsageError("");
    }
    const unsigned long long v = std::stoull(digits, &used);
    if (used != digits.size() || v > (percent ? 100ull : (1ull << 40))) {
      throw UsageError("");
    }
    opt.l2_reserve = true;
    opt.l2_reserve_percent = percent ? static_cast<int>(v) : -1;
    opt.l2_reserve_bytes = percent ? 0 : v;
  } catch (const std::exception&) {
    throw UsageError(
        "--l2-reserve: expected a byte count or a percentage 0-100% of the "
        "device's maximum, got '" +
        value + "'");
  }
}

Options parse_options(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        throw UsageError(arg + ": missing value (see --help)");
      }
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      opt.help = true;
      return opt;
    } else if (arg == "--sweep") {
      opt.sweep = value();
    } else if (arg == "--case") {
      opt.case_specs.push_back(value());
    } else if (arg == "--workload") {
      opt.workload_filter = value();
      if (opt.workload_filter != "naive" && opt.workload_filter != "flash2") {
        throw UsageError("--workload: must be naive or flash2, got '" + opt.workload_filter + "'");
      }
    } else if (arg == "--csv") {
      opt.csv_path = value();
    } else if (arg == "--once") {
      opt.once = true;
    } else if (arg == "--repeats") {
      opt.repeats = parse_count(arg, value(), 1);
    } else if (arg == "--warmup") {
      opt.warmup = parse_count(arg, value(), 0);
    } else if (arg == "--sms") {
      opt.sms = parse_count(arg, value(), 1);
    } else if (arg == "--l2-reserve") {
      parse_l2_reserve(value(), opt);
    } else if (arg == "--l2-probe") {
      opt.l2_probe_path = value();
    } else if (arg == "--seed") {
      opt.seed = static_cast<std::uint64_t>(parse_count(arg, value(), 0));
    } else if (arg == "--causal") {
      opt.causal = true;
    } else if (arg == "--kv-heads") {
      opt.kv_heads = parse_count(arg, value(), 1);
    } else if (arg == "--seq-kv") {
      opt.seq_kv = parse_count(arg, value(), 1);
    } else if (arg == "--splits") {
      opt.splits = parse_count(arg, value(), 1);
    } else if (arg == "--list") {
      opt.list = true;
    } else {
      throw UsageError("unknown option '" + arg + "' (see --help)");
    }
  }
  if (!opt.l2_probe_path.empty() && !opt.l2_reserve) {
    throw UsageError("--l2-probe: needs --l2-reserve (0 for none)");
  }
  return opt;
}

// ---- device helpers -------------------------------------------------------------------------

__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// x[i] = uniform in [lo, hi) from a counter-based hash of (seed, i): never all zeros.
__global__ void fill_uniform_kernel(half* x, std::int64_t count, std::uint64_t seed, float lo,
                                    float hi) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    const std::uint64_t r = splitmix64(seed * 0x100000001B3ull + static_cast<std::uint64_t>(i));
    const float u = static_cast<float>(r >> 40) * (1.0f / 16777216.0f);
    x[i] = __float2half_rn(lo + (hi - lo) * u);
  }
}

/// Adds to *count the number of non-finite values among `count` halves (poison left unwritten).
__global__ void count_nonfinite_half_kernel(const half* x, std::int64_t count,
                                            unsigned long long* bad) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    local += __hisinf(x[i]) != 0 || __hisnan(x[i]) ? 1ull : 0ull;
  }
  if (local != 0) {
    atomicAdd(bad, local);
  }
}

__global__ void count_nonfinite_float_kernel(const float* x, std::int64_t count,
                                             unsigned long long* bad) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    local += isfinite(x[i]) ? 0ull : 1ull;
  }
  if (local != 0) {
    atomicAdd(bad, local);
  }
}

/// Reads a buffer several times the L2 and writes nothing back: the next kernel starts cold.
__global__ void flush_l2_kernel(const int4* buf, std::int64_t count, int* sink) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  int acc = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    const int4 v = buf[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) {
    *sink = acc;  // practically never taken; keeps the loads alive
  }
}

constexpr int kHelperGrid = 1024;
constexpr int kHelperThreads = 256;

// ---- host side --------------------------------------------------------------------------------

/// A cudaMalloc'd array, freed on scope exit.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(std::int64_t count) : m_count(count) {
    check_cuda(cudaMalloc(&m_ptr, static_cast<std::size_t>(count) * sizeof(T)), "cudaMalloc");
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(m_ptr); }
  T* get() const { return m_ptr; }
  std::int64_t count() const { return m_count; }
  std::size_t bytes() const { return static_cast<std::size_t>(m_count) * sizeof(T); }

 private:
  T* m_ptr = nullptr;
  std::int64_t m_count;
};

std::uint64_t count_nonfinite(const half* x, std::int64_t count, unsigned long long* d_bad) {
  check_cuda(cudaMemset(d_bad, 0, sizeof(unsigned long long)), "cudaMemset");
  count_nonfinite_half_kernel<<<kHelperGrid, kHelperThreads>>>(x, count, d_bad);
  check_launch("count_nonfinite_half_kernel");
  unsigned long long bad = 0;
  check_cuda(cudaMemcpy(&bad, d_bad, sizeof(bad), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return bad;
}

std::uint64_t count_nonfinite(const float* x, std::int64_t count, unsigned long long* d_bad) {
  check_cuda(cudaMemset(d_bad, 0, sizeof(unsigned long long)), "cudaMemset");
  count_nonfinite_float_kernel<<<kHelperGrid, kHelperThreads>>>(x, count, d_bad);
  check_launch("count_nonfinite_float_kernel");
  unsigned long long bad = 0;
  check_cuda(cudaMemcpy(&bad, d_bad, sizeof(bad), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return bad;
}

std::vector<float> copy_halves(const half* src, std::int64_t count) {
  std::vector<half> tmp(static_cast<std::size_t>(count));
  check_cuda(cudaMemcpy(tmp.data(), src, tmp.size() * sizeof(half), cudaMemcpyDeviceToHost),
             "cudaMemcpy");
  std::vector<float> out(tmp.size());
  for (std::size_t i = 0; i < tmp.size(); ++i) {
    out[i] = __half2float(tmp[i]);
  }
  return out;
}

/// The result of checking one case.
struct CheckResult {
  double rel_err = 0.0;  ///< ‖O − ref‖ / ‖ref‖ over the checked rows
  double lse_max_err = 0.0;  ///< max |L − ref| over the checked rows (flash2 only)
  std::uint64_t unwritten = 0;
  int rows_checked = 0;
  bool split_compared = false;  ///< split-KV: compared with the unsplit kernel (not under --once)
  double split_rel_diff = 0.0;  ///< ‖O_split − O_unsplit‖ / ‖O_unsplit‖ over every row
  double split_lse_diff = 0.0;  ///< max |L_split − L_unsplit|
  /// naive: the streaming softmax run on the same S as the shared-memory one (not under --once)
  bool stream_compared = false;
  double stream_rel_diff = 0.0;  ///< ‖P_stream − P‖ / ‖P‖ over every element
  bool ok = false;
};

/// The (bh, row) pairs checked: every row for small problems, else kSampleRowsPerHead rows of
/// kSampleHeads heads (first and last head, first and last row included), chosen from `seed`;
/// with fewer than kSampleRowsPerHead rows per head (decode), every row of more heads, so that
/// at least kSampleHeads·kSampleRowsPerHead / 2 rows are checked.
std::vector<std::pair<std::int64_t, int>> sample_rows(const AttentionShape& shape,
                                                      std::uint64_t seed) {
  std::vector<std::pair<std::int64_t, int>> rows;
  const std::int64_t bh_count = shape.heads_total();
  if (bh_count * shape.seq <= kCheckAllRowsUpTo &&
      bh_count * shape.seq * shape.keys() <= kCheckAllWorkUpTo) {
    for (std::int64_t bh = 0; bh < bh_count; ++bh) {
      for (int r = 0; r < shape.seq; ++r) {
        rows.emplace_back(bh, r);
      }
    }
    return rows;
  }
  const int sample_heads =
      shape.seq >= kSampleRowsPerHead
          ? kSampleHeads
          : std::max(kSampleHeads, kSampleHeads * kSampleRowsPerHead / 2 / shape.seq);
  std::vector<std::int64_t> heads = {0, bh_count - 1};
  for (int h = 2; h < sample_heads; ++h) {
    heads.push_back(static_cast<std::int64_t>((seed * 2654435761ull + h * 40503ull) %
                                              static_cast<std::uint64_t>(bh_count)));
  }
  std::sort(heads.begin(), heads.end());
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  for (const std::int64_t bh : heads) {
    std::vector<int> picked;
    for (int i = 0; i < kSampleRowsPerHead; ++i) {
      int r = 0;
      if (i == 1) {
        r = shape.seq - 1;
      } else if (i > 1) {
        r = static_cast<int>((seed * 97ull + static_cast<std::uint64_t>(i) * 7919ull +
                              static_cast<std::uint64_t>(bh) * 131ull) %
                             static_cast<std::uint64_t>(shape.seq));
      }
      picked.push_back(r);
    }
    if (shape.seq < kSampleRowsPerHead) {  // short heads: each row once
      std::sort(picked.begin(), picked.end());
      picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
    }
    for (const int r : picked) {
      rows.emplace_back(bh, r);
    }
  }
  return rows;
}

CheckResult check_case(const HarnessCase& c, const half* q, const half* k, const half* v,
                       const half* o, const float* l, std::uint64_t seed,
                       unsigned long long* d_bad) {
  const AttentionShape& s = c.shape;
  const int d = s.head_dim;
  const int nkv = s.keys();
  const int group = s.group();
  CheckResult res;
  res.unwritten = count_nonfinite(o, s.q_elements(), d_bad);
  if (l != nullptr) {
    res.unwritten += count_nonfinite(l, s.heads_total() * s.seq, d_bad);
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const auto rows = sample_rows(s, seed);
  double err2 = 0.0;
  double ref2 = 0.0;
  std::int64_t current_bh = -1;
  std::int64_t current_kvbh = -1;
  std::vector<float> keys;
  std::vector<float> values;
  std::vector<float> queries;
  std::vector<float> outs;
  std::vector<float> lses;
  for (const auto& [bh, r] : rows) {
    // Query head bh reads KV head bh / G (b·Hkv + h / G, since G divides H).
    const std::int64_t kvbh = bh / group;
    if (kvbh != current_kvbh) {
      const std::int64_t kv_offset = kvbh * nkv * d;
      keys = copy_halves(k + kv_offset, static_cast<std::int64_t>(nkv) * d);
      values = copy_halves(v + kv_offset, static_cast<std::int64_t>(nkv) * d);
      current_kvbh = kvbh;
    }
    if (bh != current_bh) {
      const std::int64_t head_offset = bh * s.seq * d;
      queries = copy_halves(q + head_offset, static_cast<std::int64_t>(s.seq) * d);
      outs = copy_halves(o + head_offset, static_cast<std::int64_t>(s.seq) * d);
      if (l != nullptr) {
        lses.resize(static_cast<std::size_t>(s.seq));
        check_cuda(cudaMemcpy(lses.data(), l + bh * s.seq, lses.size() * sizeof(float),
                              cudaMemcpyDeviceToHost),
                   "cudaMemcpy");
      }
      current_bh = bh;
    }
    // Causal (bottom-right): row r sees keys 0 … r + Nkv − Nq, a prefix of the head's keys.
    const int visible = s.causal ? std::min(nkv, r + nkv - s.seq + 1) : nkv;
    const std::size_t row_offset = static_cast<std::size_t>(r) * d;
    const ReferenceRow ref = attention_row_reference(queries.data() + row_offset, keys.data(),
                                                     values.data(), visible, d, scale);
    for (int col = 0; col < d; ++col) {
      const double diff = static_cast<double>(outs[row_offset + col]) - ref.out[col];
      err2 += diff * diff;
      ref2 += ref.out[col] * ref.out[col];
    }
    if (l != nullptr) {
      res.lse_max_err = std::max(res.lse_max_err, std::fabs(lses[r] - ref.logsumexp));
    }
    ++res.rows_checked;
  }
  res.rel_err = ref2 > 0.0 ? std::sqrt(err2 / ref2) : INFINITY;
  res.ok = res.unwritten == 0 && std::isfinite(res.rel_err) && res.rel_err < kTolerance &&
           res.lse_max_err < kTolerance;
  return res;
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (static_cast<double>(v[m - 1]) + v[m]);
}

std::string format_double(double x, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, x);
  return buf;
}

/// Split against unsplit: runs the same case with splits 1 into fresh outputs and adds to
/// `check` ‖O_split − O_1‖ / ‖O_1‖ over every row and max |L_split − L_1|; fails the check when
/// either reaches the tolerance.
void compare_with_unsplit(const HarnessCase& c, const half* q, const half* k, const half* v,
                          const half* o, const float* l, float scale, cudaStream_t stream,
                          CheckResult& check) {
  const AttentionShape& s = c.shape;
  Flash2Blocks unsplit = c.flash2;
  unsplit.splits = 1;
  DeviceArray<half> o1(s.q_elements());
  DeviceArray<float> l1(s.heads_total() * s.seq);
  launch_flash2_fwd(s, unsplit, q, k, v, o1.get(), l1.get(), scale, stream);
  check_cuda(cudaDeviceSynchronize(), "unsplit run");
  const std::vector<float> a = copy_halves(o, s.q_elements());
  const std::vector<float> b = copy_halves(o1.get(), s.q_elements());
  std::vector<float> la(static_cast<std::size_t>(l1.count()));
  std::vector<float> lb(la.size());
  check_cuda(cudaMemcpy(la.data(), l, la.size() * sizeof(float), cudaMemcpyDeviceToHost),
             "cudaMemcpy");
  check_cuda(cudaMemcpy(lb.data(), l1.get(), lb.size() * sizeof(float), cudaMemcpyDeviceToHost),
             "cudaMemcpy");
  double diff2 = 0.0;
  double ref2 = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff2 += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    ref2 += static_cast<double>(b[i]) * b[i];
  }
  double lse_diff = 0.0;
  for (std::size_t i = 0; i < la.size(); ++i) {
    lse_diff = std::max(lse_diff, std::fabs(static_cast<double>(la[i]) - lb[i]));
  }
  check.split_rel_diff = ref2 > 0.0 ? std::sqrt(diff2 / ref2) : INFINITY;
  check.split_lse_diff = lse_diff;
  check.split_compared = true;
  check.ok = check.ok && std::isfinite(check.split_rel_diff) && check.split_rel_diff < kTolerance &&
             std::isfinite(lse_diff) && lse_diff < kTolerance;
}

/// naive: the streaming softmax (naive_softmax_stream_kernel, which the launcher picks only for
/// rows too long for shared memory) on the same S into fresh memory, against the P of the run;
/// adds ‖P_stream − P‖ / ‖P‖ over every element to `check` and fails it at the tolerance.
void compare_streamed_softmax(const HarnessCase& c, const half* scores, const half* probs,
                              cudaStream_t stream, CheckResult& check) {
  const AttentionShape& s = c.shape;
  DeviceArray<half> p2(s.score_elements());
  check_cuda(cudaMemset(p2.get(), 0xFF, p2.bytes()), "cudaMemset");
  launch_naive_softmax_streamed(s, c.naive, scores, p2.get(), stream);
  check_cuda(cudaDeviceSynchronize(), "streamed softmax");
  const std::vector<float> a = copy_halves(p2.get(), s.score_elements());
  const std::vector<float> b = copy_halves(probs, s.score_elements());
  double diff2 = 0.0;
  double ref2 = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff2 += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    ref2 += static_cast<double>(b[i]) * b[i];
  }
  check.stream_rel_diff = ref2 > 0.0 ? std::sqrt(diff2 / ref2) : INFINITY;
  check.stream_compared = true;
  check.ok = check.ok && std::isfinite(check.stream_rel_diff) && check.stream_rel_diff < kTolerance;
}

/// Runs one case: inputs, poison, one checked run, then (unless once) the timed repeats, the
/// kernels and the L2 flushes on `stream`; with `reserve`, the hog is re-read after each flush,
/// and under --once each kernel gets a flush and a hog read of its own. Appends its CSV rows to
/// `csv`, each ending in `extra_columns`; returns whether the check passed.
bool run_case(const HarnessCase& c, const Options& opt, std::uint64_t seed, const int4* flush_buf,
              std::int64_t flush_count, int* d_sink, unsigned long long* d_bad, cudaStream_t stream,
              L2Reserve* reserve, const std::string& extra_columns, std::ostringstream& csv) {
  const AttentionShape& s = c.shape;
  const bool naive = c.workload == Workload::kNaive;
  if (naive) {
    check_naive_supported(s, c.naive);
  } else {
    check_flash2_supported(s, c.flash2);
  }
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  DeviceArray<half> q(s.q_elements());
  DeviceArray<half> k(s.kv_elements());
  DeviceArray<half> v(s.kv_elements());
  DeviceArray<half> o(s.q_elements());
  DeviceArray<half> scores(naive ? s.score_elements() : 1);
  DeviceArray<half> probs(naive ? s.score_elements() : 1);
  DeviceArray<float> lse(naive ? 1 : s.heads_total() * s.seq);
  // Split-KV's fp32 partials (O_accum, L_accum), poisoned like the outputs.
  const std::int64_t o_accum_count = naive ? 0 : flash2_o_accum_elements(s, c.flash2);
  DeviceArray<float> o_accum(std::max<std::int64_t>(o_accum_count, 1));
  DeviceArray<float> l_accum(
      std::max<std::int64_t>(naive ? 0 : flash2_l_accum_elements(s, c.flash2), 1));
  const Flash2Workspace workspace =
      o_accum_count > 0 ? Flash2Workspace{o_accum.get(), l_accum.get()} : Flash2Workspace{};

  fill_uniform_kernel<<<kHelperGrid, kHelperThreads>>>(q.get(), q.count(), seed * 3 + 0, -2.0f,
                                                       2.0f);
  fill_uniform_kernel<<<kHelperGrid, kHelperThreads>>>(k.get(), k.count(), seed * 3 + 1, -1.0f,
                                                       1.0f);
  fill_uniform_kernel<<<kHelperGrid, kHelperThreads>>>(v.get(), v.count(), seed * 3 + 2, -1.0f,
                                                       1.0f);
  check_launch("fill_uniform_kernel");
  // 0xFF bytes are NaN in fp16 and fp32: anything a kernel leaves unwritten stays NaN.
  check_cuda(cudaMemset(o.get(), 0xFF, o.bytes()), "cudaMemset");
  if (naive) {
    check_cuda(cudaMemset(scores.get(), 0xFF, scores.bytes()), "cudaMemset");
    check_cuda(cudaMemset(probs.get(), 0xFF, probs.bytes()), "cudaMemset");
  } else {
    check_cuda(cudaMemset(lse.get(), 0xFF, lse.bytes()), "cudaMemset");
    check_cuda(cudaMemset(o_accum.get(), 0xFF, o_accum.bytes()), "cudaMemset");
    check_cuda(cudaMemset(l_accum.get(), 0xFF, l_accum.bytes()), "cudaMemset");
  }
  check_cuda(cudaDeviceSynchronize(), "input setup");

  // A cold L2 (the flush) that, under --l2-reserve, holds the hog's persisting lines.
  auto prepare = [&]() {
    flush_l2_kernel<<<kHelperGrid, kHelperThreads, 0, stream>>>(flush_buf, flush_count, d_sink);
    check_launch("flush_l2_kernel");
    if (reserve != nullptr) reserve->touch(stream);
  };
  // The one run of --once under --l2-reserve: every kernel starts from prepare(), in place of
  // ncu's own flush (which would come after the hog read).
  const bool prepare_each_kernel = opt.once && reserve != nullptr;
  auto run_once = [&](cudaEvent_t* marks) {
    if (prepare_each_kernel) prepare();
    if (marks != nullptr) check_cuda(cudaEventRecord(marks[0], stream), "cudaEventRecord");
    if (naive) {
      launch_naive_qk(s, c.naive, q.get(), k.get(), scores.get(), scale, stream);
      if (marks != nullptr) check_cuda(cudaEventRecord(marks[1], stream), "cudaEventRecord");
      if (prepare_each_kernel) prepare();
      launch_naive_softmax(s, c.naive, scores.get(), probs.get(), stream);
      if (marks != nullptr) check_cuda(cudaEventRecord(marks[2], stream), "cudaEventRecord");
      if (prepare_each_kernel) prepare();
      launch_naive_pv(s, c.naive, probs.get(), v.get(), o.get(), stream);
      if (marks != nullptr) check_cuda(cudaEventRecord(marks[3], stream), "cudaEventRecord");
    } else {
      if (c.flash2.splits > 1) {
        // The split kernel and the combine, each timed (marks 0-1, 1-2).
        launch_flash2_fwd(s, c.flash2, q.get(), k.get(), v.get(), o.get(), lse.get(), scale, stream,
                          workspace, Flash2Part::kForward);
        if (marks != nullptr) check_cuda(cudaEventRecord(marks[1], stream), "cudaEventRecord");
        if (prepare_each_kernel) prepare();
        launch_flash2_fwd(s, c.flash2, q.get(), k.get(), v.get(), o.get(), lse.get(), scale, stream,
                          workspace, Flash2Part::kCombine);
        if (marks != nullptr) check_cuda(cudaEventRecord(marks[2], stream), "cudaEventRecord");
      } else {
        launch_flash2_fwd(s, c.flash2, q.get(), k.get(), v.get(), o.get(), lse.get(), scale,
                          stream);
        if (marks != nullptr) check_cuda(cudaEventRecord(marks[1], stream), "cudaEventRecord");
      }
    }
  };

  run_once(nullptr);
  check_cuda(cudaDeviceSynchronize(), "first run");
  CheckResult check =
      check_case(c, q.get(), k.get(), v.get(), o.get(), naive ? nullptr : lse.get(), seed, d_bad);
  if (!naive && c.flash2.splits > 1 && !opt.once) {
    compare_with_unsplit(c, q.get(), k.get(), v.get(), o.get(), lse.get(), scale, stream, check);
  }
  if (naive && !opt.once && naive_softmax_in_smem(s, c.naive) &&
      s.score_elements() <= kMaxStreamCompareElements) {
    compare_streamed_softmax(c, scores.get(), probs.get(), stream, check);
  }

  const std::vector<std::string> kernels = case_kernels(c);
  const int marks_count = static_cast<int>(kernels.size()) + 1;
  std::vector<std::vector<float>> times(kernels.size() + 1);  // per kernel, then total
  if (!opt.once && check.ok) {
    std::vector<cudaEvent_t> marks(static_cast<std::size_t>(marks_count));
    for (auto& e : marks) check_cuda(cudaEventCreate(&e), "cudaEventCreate");
    for (int w = 0; w < opt.warmup; ++w) run_once(nullptr);
    for (int rep = 0; rep < opt.repeats; ++rep) {
      prepare();
      run_once(marks.data());
      check_cuda(cudaEventSynchronize(marks.back()), "timed run");
      for (std::size_t kidx = 0; kidx < kernels.size(); ++kidx) {
        float ms = 0.0f;
        check_cuda(cudaEventElapsedTime(&ms, marks[kidx], marks[kidx + 1]), "cudaEventElapsedTime");
        times[kidx].push_back(ms);
      }
      float total = 0.0f;
      check_cuda(cudaEventElapsedTime(&total, marks.front(), marks.back()), "cudaEventElapsedTime");
      times.back().push_back(total);
    }
    for (auto& e : marks) cudaEventDestroy(e);
  }

  const std::string params = case_csv_columns(c);
  const std::string err = format_double(check.rel_err, "%.3e");
  const std::string lse_err = naive ? "" : format_double(check.lse_max_err, "%.3e");
  for (std::size_t kidx = 0; kidx <= kernels.size(); ++kidx) {
    const std::string name = kidx < kernels.size() ? kernels[kidx] : "total";
    const std::string t =
        times[kidx].empty() ? "" : format_double(median(times[kidx]) * 1e-3, "%.6e");
    csv << params << "," << name << "," << t << "," << (times[kidx].empty() ? 0 : opt.repeats)
        << "," << err << "," << lse_err << "," << (check.ok ? "pass" : "FAIL") << "," << seed
        << extra_columns << "\n";
  }
  std::fprintf(stderr, "%-6s B=%d H=%d N=%d d=%d %s: rel_err %.2e%s, %d rows checked, %s%s\n",
               workload_name(c.workload).c_str(), s.batch, s.heads, s.seq, s.head_dim,
               params.c_str(), check.rel_err, naive ? "" : (", lse err " + lse_err).c_str(),
               check.rows_checked, check.ok ? "pass" : "FAIL",
               times.back().empty()
                   ? ""
                   : (", total " + format_double(median(times.back()), "%.4f") + " ms").c_str());
  if (check.split_compared) {
    std::fprintf(stderr, "  split %d vs unsplit: O rel diff %.2e, L max diff %.2e\n",
                 c.flash2.splits, check.split_rel_diff, check.split_lse_diff);
  }
  if (check.stream_compared) {
    std::fprintf(stderr, "  streamed softmax vs shared-memory softmax: P rel diff %.2e\n",
                 check.stream_rel_diff);
  }
  if (check.unwritten != 0) {
    std::fprintf(stderr, "  %llu output values left unwritten (still NaN)\n",
                 static_cast<unsigned long long>(check.unwritten));
  }
  return check.ok;
}

/// --l2-probe: probe_l2 on `stream` with the harness's flush, re-reads of 2-56 MiB, one run each
/// under --once, else --repeats; CSV rows (ending in `extra_columns`) to opt.l2_probe_path and a
/// summary on stderr.
void write_l2_probe(const Options& opt, L2Reserve& reserve, cudaStream_t stream,
                    const int4* flush_buf, std::int64_t flush_count, int* d_sink,
                    const std::string& extra_columns) {
  AtomicFile file(opt.l2_probe_path);
  constexpr std::uint64_t kMiB = 1ull << 20;
  std::vector<std::uint64_t> sizes = {2 * kMiB, 4 * kMiB};
  for (std::uint64_t mib = 8; mib <= 40; mib += 4) sizes.push_back(mib * kMiB);
  sizes.push_back(48 * kMiB);
  sizes.push_back(56 * kMiB);
  const auto flush = [&]() {
    flush_l2_kernel<<<kHelperGrid, kHelperThreads, 0, stream>>>(flush_buf, flush_count, d_sink);
    check_launch("flush_l2_kernel");
  };
  const int repeats = opt.once ? 1 : opt.repeats;
  const std::vector<L2ProbeRow> rows = probe_l2(reserve, stream, flush, sizes, repeats);
  file.stream() << "probe,bytes,time_s,repeats" << (opt.sms > 0 ? ",sms_requested,sms" : "")
                << ",reserve_bytes,granted_bytes\n";
  for (const L2ProbeRow& r : rows) {
    file.stream() << r.probe << "," << r.bytes << "," << format_double(r.time_s, "%.6e") << ","
                  << r.repeats << extra_columns << "\n";
    std::fprintf(stderr, "memwall-cuda: l2 probe %-6s %9.3f MiB: %9.3f us (%7.1f GB/s)\n",
                 r.probe.c_str(), static_cast<double>(r.bytes) / kMiB, r.time_s * 1e6,
                 r.time_s > 0.0 ? static_cast<double>(r.bytes) / r.time_s * 1e-9 : 0.0);
  }
  file.commit();
}

int run(int argc, char** argv) {
  const Options opt = parse_options(argc, argv);
  if (opt.help) {
    std::cout << kHelp;
    return kExitOk;
  }
  std::vector<HarnessCase> cases;
  if (!opt.case_specs.empty()) {
    for (const std::string& spec : opt.case_specs) cases.push_back(parse_case(spec));
  } else {
    cases = builtin_cases(opt.sweep);
  }
  if (!opt.workload_filter.empty()) {
    cases.erase(std::remove_if(cases.begin(), cases.end(),
                               [&](const HarnessCase& c) {
                                 return workload_name(c.workload) != opt.workload_filter;
                               }),
                cases.end());
  }
  const bool variant_flags = opt.causal || opt.kv_heads > 0 || opt.seq_kv > 0 || opt.splits > 0;
  for (HarnessCase& c : cases) {  // the variant flags override each case's own
    if (!variant_flags) break;
    if (c.workload == Workload::kNaive) {
      throw UsageError(
          "--causal, --kv-heads, --seq-kv and --splits apply to flash2 only (add "
          "--workload flash2)");
    }
    if (opt.causal) c.shape.causal = true;
    if (opt.kv_heads > 0) c.shape.kv_heads = opt.kv_heads;
    if (opt.seq_kv > 0) c.shape.seq_kv = opt.seq_kv;
    if (opt.splits > 0) c.flash2.splits = opt.splits;
  }
  for (const HarnessCase& c : cases) {  // bad parameters are reported before any GPU work
    if (c.workload == Workload::kNaive) {
      check_naive_supported(c.shape, c.naive);
    } else {
      check_flash2_supported(c.shape, c.flash2);
    }
  }
  if (opt.list) {
    std::cout << case_csv_header() << "\n";
    for (const HarnessCase& c : cases) std::cout << case_csv_columns(c) << "\n";
    return kExitOk;
  }

  // The output file is opened before any GPU work, so a bad path fails at once.
  std::unique_ptr<AtomicFile> csv_file;
  if (!opt.csv_path.empty()) {
    csv_file = std::make_unique<AtomicFile>(opt.csv_path);
  }
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  // Created before any allocation, destroyed after them all: everything runs in it.
  std::unique_ptr<GreenContext> green;
  if (opt.sms > 0) {
    green = std::make_unique<GreenContext>(device, opt.sms);
  }
  const cudaStream_t stream = green != nullptr ? green->stream() : nullptr;
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  std::fprintf(stderr, "memwall-cuda: %s, %d SMs, L2 %d bytes, %zu cases%s\n", prop.name,
               prop.multiProcessorCount, prop.l2CacheSize, cases.size(),
               opt.once ? ", once each (untimed)" : "");
  std::string extra_columns;
  if (green != nullptr) {
    const std::vector<int> used = sms_used(stream);
    std::string ids;
    for (const int id : used) ids += (ids.empty() ? "" : " ") + std::to_string(id);
    std::fprintf(stderr,
                 "memwall-cuda: green context of %d SMs (asked for %d; %s; the device's %d SMs "
                 "split by default in partitions of at least %d, aligned to %d); a probe grid ran "
                 "on %zu SMs: %s\n",
                 green->sm_count(), green->requested_sm_count(), green->how().c_str(),
                 green->device_sm_count(), green->min_partition_sm_count(),
                 green->partition_alignment_sm_count(), used.size(), ids.c_str());
    extra_columns =
        "," + std::to_string(green->requested_sm_count()) + "," + std::to_string(green->sm_count());
  }
  // Set up in the context the kernels run in, after the green context (destroyed before it).
  std::unique_ptr<L2Reserve> reserve;
  if (opt.l2_reserve) {
    const L2PersistingLimits limits = persisting_l2_limits(device);
    const std::uint64_t bytes =
        opt.l2_reserve_percent < 0
            ? opt.l2_reserve_bytes
            : limits.max_reserve_bytes * static_cast<std::uint64_t>(opt.l2_reserve_percent) / 100;
    reserve = std::make_unique<L2Reserve>(device, bytes);
    const cudaAccessPolicyWindow& w = reserve->window();
    std::fprintf(
        stderr,
        "memwall-cuda: persisting L2: asked %llu bytes%s, granted %llu (device maximum "
        "%llu of %llu; access policy window at most %llu); hog of %llu bytes, window "
        "%zu bytes at %p (hog at %p), hitRatio %.2f, on its own stream; the kernels' "
        "stream has none\n",
        static_cast<unsigned long long>(bytes),
        opt.l2_reserve_percent < 0
            ? ""
            : (" (" + std::to_string(opt.l2_reserve_percent) + "% of the maximum)").c_str(),
        static_cast<unsigned long long>(reserve->granted_bytes()),
        static_cast<unsigned long long>(limits.max_reserve_bytes),
        static_cast<unsigned long long>(limits.l2_bytes),
        static_cast<unsigned long long>(limits.max_window_bytes),
        static_cast<unsigned long long>(reserve->hog_bytes()), w.num_bytes, w.base_ptr,
        reserve->hog(), static_cast<double>(w.hitRatio));
    extra_columns += "," + std::to_string(bytes) + "," + std::to_string(reserve->granted_bytes());
  }

  const std::int64_t flush_count =
      opt.once && reserve == nullptr
          ? 1
          : std::max<std::int64_t>(4 * static_cast<std::int64_t>(prop.l2CacheSize), 1 << 20) / 16;
  DeviceArray<int4> flush_buf(flush_count);
  check_cuda(cudaMemset(flush_buf.get(), 0x5A, flush_buf.bytes()), "cudaMemset");
  DeviceArray<int> sink(1);
  DeviceArray<unsigned long long> bad(1);

  std::ostringstream csv;
  csv << case_csv_header() << ",kernel,time_s,repeats,rel_err,lse_max_abs_err,check,seed"
      << (green != nullptr ? ",sms_requested,sms" : "")
      << (reserve != nullptr ? ",reserve_bytes,granted_bytes" : "") << "\n";
  int failed = 0;
  auto write_csv = [&]() {
    if (csv_file == nullptr) {
      std::cout << csv.str();
    } else {
      csv_file->stream() << csv.str();
      csv_file->commit();
    }
  };
  if (!opt.l2_probe_path.empty()) {
    write_l2_probe(opt, *reserve, stream, flush_buf.get(), flush_count, sink.get(), extra_columns);
  }
  try {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (!run_case(cases[i], opt, opt.seed + i, flush_buf.get(), flush_count, sink.get(),
                    bad.get(), stream, reserve.get(), extra_columns, csv)) {
        ++failed;
      }
    }
  } catch (const Error&) {
    write_csv();  // the rows of the cases that finished
    throw;
  }
  write_csv();
  if (reserve != nullptr) {
    reserve->reset();
  }
  std::fprintf(stderr, "memwall-cuda: %zu cases, %d failed\n", cases.size(), failed);
  return failed == 0 ? kExitOk : kExitFailure;
}

}  // namespace
}  // namespace memwall::cuda

int main(int argc, char** argv) {
  return memwall::cuda::guarded_main("memwall-cuda", memwall::cuda::run, argc, argv);
}
