#pragma once
/// FlashAttention-2's online softmax over one block of scores, in double, and the causal mask
/// before it: the numerics of flash2's and flash3's kernel bodies on the Eigen backend.

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/attention_params.h"
#include "models/backend.h"

namespace memwall {

/// −∞ for the scores of block `sc` (rows from r0, keys from c0) that `a`'s causal mask hides
/// (none without the mask).
inline void mask_hidden_scores(EigenBackend::Matrix& sc, const AttentionShape& a, std::uint64_t r0,
                               std::uint64_t c0) {
  for (Eigen::Index r = 0; r < sc.rows(); ++r) {
    const std::uint64_t visible = a.keys_visible(r0 + static_cast<std::uint64_t>(r));
    for (Eigen::Index c = 0; c < sc.cols(); ++c) {
      if (c0 + static_cast<std::uint64_t>(c) >= visible) {
        sc(r, c) = -std::numeric_limits<double>::infinity();
      }
    }
  }
}

/// For each row r of `sc` (one K/V block's scores, −∞ where masked): m_new = max(m(r), the row's
/// max); the row becomes exp(sc − m_new) (zeros while the row has seen no key), l(r) = α·l(r) +
/// its sum, o's row is scaled by α = exp(m(r) − m_new) (α = 1 without `rescale`, the wrong
/// variant `online_rescale` shows), and m(r) = m_new. The caller then adds sc·V to o.
inline void online_softmax_block(EigenBackend::Matrix& sc, Eigen::VectorXd& m, Eigen::VectorXd& l,
                                 EigenBackend::Matrix& o, bool rescale = true) {
  for (Eigen::Index r = 0; r < sc.rows(); ++r) {
    const double m_new = std::max(m(r), sc.row(r).maxCoeff());
    if (m_new == -std::numeric_limits<double>::infinity()) {  // no key seen yet
      sc.row(r).setZero();
      continue;
    }
    const double alpha = rescale ? std::exp(m(r) - m_new) : 1.0;
    sc.row(r) = (sc.row(r).array() - m_new).exp().matrix();
    l(r) = alpha * l(r) + sc.row(r).sum();
    o.row(r) *= alpha;
    m(r) = m_new;
  }
}

}  // namespace memwall
