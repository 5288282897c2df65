#pragma once
// Shared by the model tests: a small attention shape, and the check that the bytes a kernel's
// ops move equal the closed form.

#include <catch2/catch.hpp>

#include "models/closed_forms.h"
#include "models/model_source.h"
#include "traces/traffic_counter.h"

namespace memwall::test {

/// An attention workload of 2 heads (batch 1) with these blocks, unresolved; flash2 gets 2 stages.
inline WorkloadParams attention(WorkloadKind kind, std::uint64_t n, std::uint64_t d,
                                std::uint32_t block_q, std::uint32_t block_kv) {
  WorkloadParams p;
  p.workload = kind;
  p.batch = 1;
  p.heads = 2;
  p.seq = n;
  p.head_dim = d;
  p.block_q = block_q;
  p.block_kv = block_kv;
  if (kind == WorkloadKind::flash2) p.stages = 2;
  return p;
}

/// Summed ops of `p`'s model against closed_form_traffic(p): the totals and every tensor.
inline void require_ops_match_closed_form(const WorkloadParams& p) {
  const auto source = make_model_source(p);
  const TraceCounts counts = count_traffic(*source);
  const Traffic expected = closed_form_traffic(p);
  REQUIRE(counts.read_bytes == expected.read_bytes);
  REQUIRE(counts.write_bytes == expected.write_bytes);
  REQUIRE(counts.by_tensor.size() == expected.by_tensor.size());
  for (std::size_t i = 0; i < counts.by_tensor.size(); ++i) {
    INFO("tensor " << counts.by_tensor[i].tensor);
    REQUIRE(counts.by_tensor[i].tensor == expected.by_tensor[i].tensor);
    REQUIRE(counts.by_tensor[i].read_bytes == expected.by_tensor[i].read_bytes);
    REQUIRE(counts.by_tensor[i].write_bytes == expected.by_tensor[i].write_bytes);
  }
}

}  // namespace memwall::test
