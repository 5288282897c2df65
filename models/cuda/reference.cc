#include "models/cuda/reference.h"

#include <algorithm>
#include <cmath>

namespace memwall::cuda {

ReferenceRow attention_row_reference(const float* q, const float* keys, const float* values,
                                     int seq, int head_dim, double scale) {
  std::vector<double> scores(static_cast<std::size_t>(seq));
  double max_score = -INFINITY;
  for (int j = 0; j < seq; ++j) {
    const float* key = keys + static_cast<std::size_t>(j) * head_dim;
    double dot = 0.0;
    for (int c = 0; c < head_dim; ++c) {
      dot += static_cast<double>(q[c]) * static_cast<double>(key[c]);
    }
    scores[j] = scale * dot;
    max_score = std::max(max_score, scores[j]);
  }
  ReferenceRow row;
  row.out.assign(static_cast<std::size_t>(head_dim), 0.0);
  double sum = 0.0;
  for (int j = 0; j < seq; ++j) {
    const double p = std::exp(scores[j] - max_score);
    sum += p;
    const float* value = values + static_cast<std::size_t>(j) * head_dim;
    for (int c = 0; c < head_dim; ++c) {
      row.out[c] += p * static_cast<double>(value[c]);
    }
  }
  for (double& x : row.out) {
    x /= sum;
  }
  row.logsumexp = max_score + std::log(sum);
  return row;
}

}  // namespace memwall::cuda
