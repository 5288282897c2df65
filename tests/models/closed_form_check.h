#pragma once
// A check shared by the model tests: the bytes a kernel's ops move equal the closed form.

#include <catch2/catch.hpp>

#include "models/closed_forms.h"
#include "models/model_source.h"
#include "traces/traffic_counter.h"

namespace memwall::test {

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
