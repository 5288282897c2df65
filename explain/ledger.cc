#include "explain/ledger.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "explain/random.h"
#include "sim/core/error.h"

namespace memwall::explain {
namespace {

void check_options(const LedgerOptions& o) {
  if (o.row_len == 0) throw UsageError("ledger: --row-len must be at least 1");
  if (o.tile == 0) throw UsageError("ledger: --tile must be at least 1");
  if (o.row_len > kMaxLedgerRowLen) {
    throw UsageError("ledger: --row-len " + std::to_string(o.row_len) + " exceeds the limit of " +
                     std::to_string(kMaxLedgerRowLen));
  }
}

/// Fills scores (scaled normals) and values (uniform in [−1, 1)); with late_max, plants the
/// maximum in the last tile, kLedgerLateMaxGap above everything else.
void generate_row(const LedgerOptions& o, LedgerResult& r) {
  Random random(o.seed);
  r.scores.resize(o.row_len);
  r.values.resize(o.row_len);
  for (std::uint64_t j = 0; j < o.row_len; ++j) {
    r.scores[j] = kLedgerScoreScale * random.normal();
    r.values[j] = random.uniform(-1.0, 1.0);
  }
  if (o.late_max) {
    const std::uint64_t tile = std::min(o.tile, o.row_len);
    const std::uint64_t last_tile_begin = (o.row_len - 1) / tile * tile;
    const std::uint64_t planted =
        last_tile_begin + static_cast<std::uint64_t>(
                              random.uniform() * static_cast<double>(o.row_len - last_tile_begin));
    const double rest_max = *std::max_element(r.scores.begin(), r.scores.end());
    r.scores[planted] = rest_max + kLedgerLateMaxGap;
  }
}

}  // namespace

LedgerResult run_ledger(const LedgerOptions& options) {
  check_options(options);
  LedgerResult r;
  r.options = options;
  generate_row(options, r);
  const std::vector<double>& s = r.scores;
  const std::vector<double>& v = r.values;
  const std::uint64_t n = options.row_len;
  const std::uint64_t tile = std::min(options.tile, n);

  // All at once: max, then Σ exp(s − max), then the weighted sum of the values.
  r.argmax = static_cast<std::uint64_t>(std::max_element(s.begin(), s.end()) - s.begin());
  r.reference_max = s[r.argmax];
  double ref_o = 0.0;
  for (std::uint64_t j = 0; j < n; ++j) {
    const double e = std::exp(s[j] - r.reference_max);
    r.reference_sum += e;
    ref_o += e * v[j];
  }
  r.reference_output = ref_o / r.reference_sum;

  // Streamed: the rescaled ledger (m, l, o) and the one that skips the rescale (l_nr, o_nr).
  double m = -std::numeric_limits<double>::infinity();
  double l = 0.0, o = 0.0, l_nr = 0.0, o_nr = 0.0;
  for (std::uint64_t begin = 0, index = 0; begin < n; begin += tile, ++index) {
    const std::uint64_t end = std::min(begin + tile, n);
    LedgerStep step;
    step.tile_index = index;
    step.begin = begin;
    step.end = end;
    step.tile_max = *std::max_element(s.begin() + static_cast<std::ptrdiff_t>(begin),
                                      s.begin() + static_cast<std::ptrdiff_t>(end));
    step.m_old = m;
    step.m_new = std::max(m, step.tile_max);
    step.rescale = std::exp(step.m_old - step.m_new);  // exp(−inf) = 0 on the first tile
    double tile_l = 0.0, tile_o = 0.0;
    for (std::uint64_t j = begin; j < end; ++j) {
      const double e = std::exp(s[j] - step.m_new);
      tile_l += e;
      tile_o += e * v[j];
    }
    l = step.rescale * l + tile_l;
    o = step.rescale * o + tile_o;
    l_nr += tile_l;
    o_nr += tile_o;
    m = step.m_new;
    step.l = l;
    step.l_no_rescale = l_nr;
    r.steps.push_back(step);
  }
  r.online_output = o / l;
  r.no_rescale_output = o_nr / l_nr;

  // Errors: the output and every probability p_j = exp(s_j − m) / ℓ against the reference.
  r.online_error = std::fabs(r.online_output - r.reference_output);
  r.no_rescale_error = std::fabs(r.no_rescale_output - r.reference_output);
  for (std::uint64_t j = 0; j < n; ++j) {
    const double p_ref = std::exp(s[j] - r.reference_max) / r.reference_sum;
    const double e = std::exp(s[j] - m);
    r.online_error = std::max(r.online_error, std::fabs(e / l - p_ref));
    r.no_rescale_error = std::max(r.no_rescale_error, std::fabs(e / l_nr - p_ref));
  }
  return r;
}

std::string format_ledger(const LedgerResult& r) {
  std::string out;
  char line[256];
  const LedgerOptions& o = r.options;
  std::snprintf(
      line, sizeof line,
      "online softmax ledger: one row of %llu scores (%g x normal%s), tiles of %llu, seed %llu\n",
      static_cast<unsigned long long>(o.row_len), kLedgerScoreScale,
      o.late_max ? ", maximum planted in the last tile" : "",
      static_cast<unsigned long long>(std::min(o.tile, o.row_len)),
      static_cast<unsigned long long>(o.seed));
  out += line;
  std::snprintf(line, sizeof line, "%6s %15s %11s %11s %22s %22s %22s\n", "tile", "scores",
                "tile max", "m", "rescale exp(m_old-m)", "l (rescaled)", "l (no rescale)");
  out += line;
  for (const LedgerStep& st : r.steps) {
    char range[48];
    std::snprintf(range, sizeof range, "%llu..%llu", static_cast<unsigned long long>(st.begin),
                  static_cast<unsigned long long>(st.end - 1));
    std::snprintf(line, sizeof line, "%6llu %15s %11.4f %11.4f %22.6e %22.15e %22.15e\n",
                  static_cast<unsigned long long>(st.tile_index), range, st.tile_max, st.m_new,
                  st.rescale, st.l, st.l_no_rescale);
    out += line;
  }
  std::snprintf(line, sizeof line, "row maximum %.4f at score %llu (tile %llu)\n", r.reference_max,
                static_cast<unsigned long long>(r.argmax),
                static_cast<unsigned long long>(r.argmax / std::min(o.tile, o.row_len)));
  out += line;
  std::snprintf(line, sizeof line,
                "all at once:        l = %.15e  o = sum softmax(s)_j v_j = %+.15f\n",
                r.reference_sum, r.reference_output);
  out += line;
  std::snprintf(line, sizeof line,
                "streamed, rescaled: l = %.15e  o = %+.15f  max abs error %.3e\n", r.steps.back().l,
                r.online_output, r.online_error);
  out += line;
  std::snprintf(line, sizeof line,
                "streamed, no rescale: l = %.15e  o = %+.15f  max abs error %.3e\n",
                r.steps.back().l_no_rescale, r.no_rescale_output, r.no_rescale_error);
  out += line;
  out +=
      "(max abs error: over the output o and every probability p_j = exp(s_j - m) / l. Without\n"
      " the rescale, tiles seen before the running max rose keep weights exp(s_j - m_old) that\n"
      " are too large by exp(m_new - m_old), so l and o are wrong.)\n";
  return out;
}

}  // namespace memwall::explain
