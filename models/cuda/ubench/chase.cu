/// Pointer-chase latency of L2 hits and of HBM (L2 misses), one thread of one CTA on a chosen SM.
///
/// The buffer is cut into 128-byte lines; the first word of each line points to the next line of
/// one random cycle through all of them (Sattolo's shuffle), so every load depends on the last
/// and no two consecutive loads share a line. Loads are ld.global.cg (L2, not L1). A launch has
/// 8 CTAs per SM; only the first CTA to start on the target SM (%smid) chases, the rest return.
///
/// Usage: chase HIST_CSV > latency.csv
///   latency.csv rows:
///     l2, hbm: cycles_per_load = clock64 span / loads (median of 3 launches), ns_per_load from
///       %globaltimer over the same span, clock_mhz their ratio;
///     l2_samples: every load of a 16 MiB cycle timed alone (clock64 before the load and after a
///       shared-memory store of its value, so each sample also holds that store and one clock
///       read), split in two modes by the threshold that minimises the within-mode variance
///       (samples over 3x the median left out as outliers first).
///     l2_side: which L2 partition each SM reads near. A 4 MiB cycle, the L2 flushed, SM 0
///       loads every line twice; then the probe SM times each line once (pass "side"). SM 0's
///       side holds every line (home or copy), so a probe SM of that side sees near hits only,
///       one of the other side sees the lines homed on SM 0's side as far hits (about half).
///     hbm_samples: 65536 loads of the 1 GiB HBM chase, each timed alone (pass "hbm").
///   HIST_CSV: sm,pass,latency_cycles,count of those samples, 1-cycle bins.
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

#include "ubench_common.cuh"

namespace {

using ubench::median;

constexpr size_t kLineBytes = 128;
constexpr size_t kWordsPerLine = kLineBytes / sizeof(unsigned long long);
constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kGiB = size_t(1) << 30;
constexpr size_t kBufferBytes = 4 * kGiB;  // the largest chased buffer
constexpr size_t kFlushBytes = 512 * kMiB;  // written between linking and an HBM chase
constexpr unsigned kSampleChunk = 8192;  // samples held in shared memory, then copied out
constexpr size_t kMaxSamples = 16 * kMiB / kLineBytes;  // one per line of the sampled buffer
constexpr unsigned long long kHbmSteps = 65536;
constexpr int kTimedLaunches = 3;
constexpr int kCtasPerSm = 8;

/// What the chasing thread reports.
struct ChaseRun {
  unsigned long long cycles;  // clock64 span of the chase
  unsigned long long ns;  // %globaltimer span of the same
  unsigned long long end;  // the pointer the chase stopped at
  unsigned sm;  // %smid of the chasing thread
  unsigned ran;  // 1 when a CTA on the target SM chased
};

/// Line i's first word := address of line next[i].
__global__ void link_lines(unsigned long long* buf, const uint32_t* next, size_t lines) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < lines; i += stride) {
    buf[i * kWordsPerLine] =
        reinterpret_cast<unsigned long long>(buf + size_t(next[i]) * kWordsPerLine);
  }
}

/// Follows `steps` pointers from `start` in thread 0 of the first CTA on SM `target_sm`. With
/// `samples`, also times each load alone into samples[0, steps).
__global__ void chase(const unsigned long long* start, unsigned long long steps, unsigned target_sm,
                      unsigned* claim, ChaseRun* run, unsigned* samples) {
  __shared__ unsigned chunk[kSampleChunk];
  __shared__ volatile unsigned long long sink;
  if (threadIdx.x != 0 || ubench::sm_id() != target_sm) return;
  if (atomicCAS(claim, 0u, 1u) != 0u) return;
  const unsigned long long* p = start;
  const long long c0 = clock64();
  const unsigned long long g0 = ubench::global_timer_ns();
  if (samples == nullptr) {
    for (unsigned long long s = 0; s < steps; ++s) {
      p = reinterpret_cast<const unsigned long long*>(__ldcg(p));
    }
  } else {
    for (unsigned long long s = 0; s < steps; s += kSampleChunk) {
      const unsigned n = steps - s < kSampleChunk ? unsigned(steps - s) : kSampleChunk;
      for (unsigned k = 0; k < n; ++k) {
        const long long t0 = clock64();
        p = reinterpret_cast<const unsigned long long*>(__ldcg(p));
        sink = reinterpret_cast<unsigned long long>(p);  // the store waits for the load
        const long long t1 = clock64();
        chunk[k] = unsigned(t1 - t0);
      }
      for (unsigned k = 0; k < n; ++k) samples[s + k] = chunk[k];
    }
  }
  sink = reinterpret_cast<unsigned long long>(p);  // the last load lands before the clock read
  const long long c1 = clock64();
  const unsigned long long g1 = ubench::global_timer_ns();
  run->cycles = static_cast<unsigned long long>(c1 - c0);
  run->ns = g1 - g0;
  run->end = reinterpret_cast<unsigned long long>(p);
  run->sm = ubench::sm_id();
  run->ran = 1;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// A random permutation of [0, n) that is one cycle (Sattolo), checked by walking it.
std::vector<uint32_t> random_cycle(size_t n, uint64_t seed) {
  std::vector<uint32_t> next(n);
  std::iota(next.begin(), next.end(), 0u);
  for (size_t i = n - 1; i > 0; --i) std::swap(next[i], next[splitmix64(seed) % i]);
  size_t length = 0;
  uint32_t at = 0;
  do {
    at = next[at];
    ++length;
  } while (at != 0 && length <= n);
  UB_REQUIRE(length == n, "the permutation is not one cycle");
  return next;
}

/// Device state of the chase: the chased buffer, a flush buffer, the claim flag and the report.
class Chaser {
 public:
  explicit Chaser(int num_sms) : m_num_sms(num_sms) {
    UB_CHECK(cudaMalloc(&m_buf, kBufferBytes));
    UB_CHECK(cudaMalloc(&m_flush, kFlushBytes));
    UB_CHECK(cudaMalloc(&m_next, kBufferBytes / kLineBytes * sizeof(uint32_t)));
    UB_CHECK(cudaMalloc(&m_claim, sizeof(unsigned)));
    UB_CHECK(cudaMalloc(&m_run, sizeof(ChaseRun)));
    UB_CHECK(cudaMalloc(&m_samples, kMaxSamples * sizeof(unsigned)));
  }
  ~Chaser() {
    cudaFree(m_buf);
    cudaFree(m_flush);
    cudaFree(m_next);
    cudaFree(m_claim);
    cudaFree(m_run);
    cudaFree(m_samples);
  }
  Chaser(const Chaser&) = delete;
  Chaser& operator=(const Chaser&) = delete;

  const unsigned long long* start() const { return m_buf; }

  /// Links the first `bytes` of the buffer into one random cycle of lines.
  void link(size_t bytes, uint64_t seed) {
    const size_t lines = bytes / kLineBytes;
    const std::vector<uint32_t> next = random_cycle(lines, seed);
    UB_CHECK(cudaMemcpy(m_next, next.data(), lines * sizeof(uint32_t), cudaMemcpyHostToDevice));
    link_lines<<<4 * m_num_sms, 256>>>(m_buf, m_next, lines);
    UB_CHECK_LAUNCH("link_lines");
    UB_CHECK(cudaDeviceSynchronize());
  }

  /// Writes the flush buffer, several times the L2, so no chased line stays there.
  void flush_l2() {
    UB_CHECK(cudaMemset(m_flush, 0x5a, kFlushBytes));
    UB_CHECK(cudaDeviceSynchronize());
  }

  /// One chase launch; ran == 0 when no CTA started on the target SM. With `samples`, the
  /// per-load samples are copied into it (steps of them).
  ChaseRun run(const unsigned long long* from, unsigned long long steps, unsigned target_sm,
               std::vector<unsigned>* samples = nullptr) {
    UB_REQUIRE(samples == nullptr || steps <= kMaxSamples, "too many samples");
    UB_CHECK(cudaMemset(m_claim, 0, sizeof(unsigned)));
    UB_CHECK(cudaMemset(m_run, 0, sizeof(ChaseRun)));
    chase<<<kCtasPerSm * m_num_sms, 32>>>(from, steps, target_sm, m_claim, m_run,
                                          samples ? m_samples : nullptr);
    UB_CHECK_LAUNCH("chase");
    UB_CHECK(cudaDeviceSynchronize());
    ChaseRun r{};
    UB_CHECK(cudaMemcpy(&r, m_run, sizeof r, cudaMemcpyDeviceToHost));
    if (r.ran == 1) UB_REQUIRE(r.sm == target_sm, "the chase ran on another SM");
    if (samples != nullptr && r.ran == 1) {
      samples->resize(steps);
      UB_CHECK(
          cudaMemcpy(samples->data(), m_samples, steps * sizeof(unsigned), cudaMemcpyDeviceToHost));
    }
    return r;
  }

 private:
  int m_num_sms;
  unsigned long long* m_buf = nullptr;
  unsigned char* m_flush = nullptr;
  uint32_t* m_next = nullptr;
  unsigned* m_claim = nullptr;
  ChaseRun* m_run = nullptr;
  unsigned* m_samples = nullptr;
};

/// Two latency modes of a sample set: the Otsu threshold over the samples at most 3x the median.
struct Modes {
  double low_median = 0, high_median = 0, low_fraction = 0, threshold = 0, outlier_fraction = 0;
  double mean = 0;
};

Modes split_modes(std::vector<unsigned> samples) {
  Modes m;
  std::sort(samples.begin(), samples.end());
  const double mid = samples[samples.size() / 2];
  double total = 0;
  for (unsigned s : samples) total += s;
  m.mean = total / double(samples.size());
  std::vector<double> kept;
  for (unsigned s : samples) {
    if (s <= 3 * mid) kept.push_back(s);
  }
  m.outlier_fraction = 1.0 - double(kept.size()) / double(samples.size());
  const size_t n = kept.size();
  std::vector<double> sum(n + 1, 0.0), sum2(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) {
    sum[i + 1] = sum[i] + kept[i];
    sum2[i + 1] = sum2[i] + kept[i] * kept[i];
  }
  auto sse = [&](size_t a, size_t b) {  // within-group squared error of kept[a, b)
    const double s = sum[b] - sum[a];
    return (sum2[b] - sum2[a]) - s * s / double(b - a);
  };
  size_t best = 1;
  double best_cost = -1;
  for (size_t i = 1; i < n; ++i) {
    if (kept[i] == kept[i - 1]) continue;  // split only between distinct values
    const double cost = sse(0, i) + sse(i, n);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = i;
    }
  }
  m.low_median = median(std::vector<double>(kept.begin(), kept.begin() + long(best)));
  m.high_median = median(std::vector<double>(kept.begin() + long(best), kept.end()));
  m.low_fraction = double(best) / double(n);
  m.threshold = kept[best];
  return m;
}

void print_header() {
  std::printf(
      "kind,buffer_bytes,target_sm,sm,pass,steps,cycles_per_load,ns_per_load,clock_mhz,"
      "low_mode_cycles,high_mode_cycles,low_fraction,split_cycles,outlier_fraction\n");
}

/// Appends `samples` to the histogram file as (sm, pass, latency, count) rows.
void write_hist(std::FILE* hist, unsigned sm, const char* pass, std::vector<unsigned> samples) {
  std::sort(samples.begin(), samples.end());
  for (size_t i = 0; i < samples.size();) {
    size_t j = i;
    while (j < samples.size() && samples[j] == samples[i]) ++j;
    std::fprintf(hist, "%u,%s,%u,%zu\n", sm, pass, samples[i], j - i);
    i = j;
  }
}

/// One latency.csv row of per-load samples and their two modes.
void sample_row(const char* kind, size_t bytes, unsigned target_sm, const ChaseRun& r,
                const char* pass, const std::vector<unsigned>& samples) {
  const Modes m = split_modes(samples);
  const double mhz = 1e3 * double(r.cycles) / double(r.ns);
  std::printf("%s,%zu,%u,%u,%s,%zu,%.2f,%.2f,%.1f,%.1f,%.1f,%.4f,%.0f,%.5f\n", kind, bytes,
              target_sm, r.sm, pass, samples.size(), m.mean, 1e3 * m.mean / mhz, mhz, m.low_median,
              m.high_median, m.low_fraction, m.threshold, m.outlier_fraction);
  std::fflush(stdout);
}

/// Median over kTimedLaunches chases of `steps` loads each, each starting where the last stopped
/// (`from` advances); a row, or a note on stderr when the SM could not be reached.
void timed_row(Chaser& chaser, const char* kind, size_t bytes, unsigned sm,
               const unsigned long long*& from, unsigned long long steps) {
  std::vector<double> cycles, ns;
  for (int i = 0; i < kTimedLaunches; ++i) {
    const ChaseRun r = chaser.run(from, steps, sm);
    if (r.ran != 1) {
      std::fprintf(stderr, "chase: no CTA started on SM %u (%s, %zu bytes)\n", sm, kind, bytes);
      return;
    }
    from = reinterpret_cast<const unsigned long long*>(r.end);
    cycles.push_back(double(r.cycles) / double(steps));
    ns.push_back(double(r.ns) / double(steps));
  }
  const double c = median(cycles), t = median(ns);
  std::printf("%s,%zu,%u,%u,timed,%llu,%.2f,%.2f,%.1f,,,,,\n", kind, bytes, sm, sm, steps, c, t,
              1e3 * c / t);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: chase HIST_CSV > latency.csv\n");
    return 2;
  }
  std::FILE* hist = std::fopen(argv[1], "w");
  UB_REQUIRE(hist != nullptr, "cannot open the histogram file");
  std::fprintf(hist, "sm,pass,latency_cycles,count\n");

  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int num_sms = prop.multiProcessorCount;
  std::fprintf(stderr, "chase: %s, %d SMs, L2 %d bytes\n", prop.name, num_sms, prop.l2CacheSize);
  const std::vector<unsigned> sms = {0u, unsigned(num_sms / 4), unsigned(num_sms / 2),
                                     unsigned(3 * num_sms / 4), unsigned(num_sms - 1)};
  Chaser chaser(num_sms);
  print_header();

  // L2 hits: the linking kernel leaves the lines in L2; one full warm pass, then timed passes.
  for (size_t mib : {1, 4, 16}) {
    const size_t bytes = mib * kMiB;
    const unsigned long long lines = bytes / kLineBytes;
    chaser.link(bytes, 0x1234 + mib);
    for (unsigned sm : sms) {
      const ChaseRun warm = chaser.run(chaser.start(), lines, sm);
      if (warm.ran == 1)
        UB_REQUIRE(warm.end == reinterpret_cast<unsigned long long>(chaser.start()),
                   "a full pass did not come back to the start");
      const unsigned long long* from = chaser.start();
      timed_row(chaser, "l2", bytes, sm, from, lines);
    }
  }

  // Per-load samples of a 16 MiB cycle: pass 1 right after linking, pass 2 after it.
  {
    const size_t bytes = 16 * kMiB;
    const unsigned long long lines = bytes / kLineBytes;
    chaser.link(bytes, 0x5678);
    for (unsigned sm : {sms[0], sms[2], sms[4]}) {
      for (const char* pass : {"1", "2"}) {
        std::vector<unsigned> samples;
        const ChaseRun r = chaser.run(chaser.start(), lines, sm, &samples);
        if (r.ran != 1) {
          std::fprintf(stderr, "chase: no CTA started on SM %u (samples)\n", sm);
          break;
        }
        sample_row("l2_samples", bytes, sm, r, pass, samples);
        write_hist(hist, sm, pass, samples);
      }
    }
  }

  // The L2 side of every SM (see l2_side above).
  {
    const size_t bytes = 4 * kMiB;
    const unsigned long long lines = bytes / kLineBytes;
    chaser.link(bytes, 0x2468);
    for (unsigned sm = 0; sm < unsigned(num_sms); ++sm) {
      chaser.flush_l2();
      const ChaseRun fill1 = chaser.run(chaser.start(), lines, 0);
      const ChaseRun fill2 = chaser.run(chaser.start(), lines, 0);
      UB_REQUIRE(fill1.ran == 1 && fill2.ran == 1, "no CTA started on SM 0");
      std::vector<unsigned> samples;
      const ChaseRun r = chaser.run(chaser.start(), lines, sm, &samples);
      if (r.ran != 1) {
        std::fprintf(stderr, "chase: no CTA started on SM %u (side)\n", sm);
        continue;
      }
      sample_row("l2_side", bytes, sm, r, "side", samples);
      write_hist(hist, sm, "side", samples);
    }
  }

  // HBM: the L2 is flushed after linking; each chase continues along a cycle far longer than the
  // loads made, so no line is loaded twice.
  for (size_t bytes : {256 * kMiB, 1 * kGiB, 4 * kGiB}) {
    chaser.link(bytes, 0x9abc + bytes / kMiB);
    chaser.flush_l2();
    const unsigned long long* from = chaser.start();
    for (unsigned sm : {sms[0], sms[2]}) timed_row(chaser, "hbm", bytes, sm, from, kHbmSteps);
    if (bytes != 1 * kGiB) continue;
    for (unsigned sm : {sms[0], sms[2]}) {
      std::vector<unsigned> samples;
      const ChaseRun r = chaser.run(from, kHbmSteps, sm, &samples);
      if (r.ran != 1) continue;
      from = reinterpret_cast<const unsigned long long*>(r.end);
      sample_row("hbm_samples", bytes, sm, r, "hbm", samples);
      write_hist(hist, sm, "hbm", samples);
    }
  }
  UB_REQUIRE(std::fclose(hist) == 0, "cannot write the histogram file");
  return 0;
}
