// The topology graph: shape, per-edge shares, lookups, checks and DOT export.
#include <catch2/catch.hpp>

#include <string>

#include "sim/core/error.h"
#include "sim/hw/config_loader.h"
#include "sim/hw/topology.h"

using namespace memwall;

namespace {
std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("A config's topology has one node per SM, slice and channel and the configured shares",
          "[topology]") {
  const HardwareConfig c = load_config("h200");
  const Topology t(c);
  CHECK(t.sm_count() == c.sm.count);
  CHECK(t.slice_count() == c.l2.slices);
  CHECK(t.channel_count() == c.hbm.channels);
  CHECK(t.partition_count() == c.l2.partitions);
  // One crossbar per partition; every crossbar reaches every slice.
  CHECK(t.crossbar_count() == c.l2.partitions);
  CHECK(boost::num_vertices(t.graph()) ==
        c.sm.count + c.l2.partitions + c.l2.slices + c.hbm.channels);
  CHECK(boost::num_edges(t.graph()) == c.sm.count + std::size_t{c.l2.partitions} * c.l2.slices +
                                           std::size_t{c.l2.slices} * c.hbm.channels);
  // Path latencies: SM → slice of its own partition is the L2 hit latency (SM 0 and slice 0 are in
  // partition 0); another partition's adds l2.far_latency; a miss adds the HBM latency.
  CHECK(t.sm_port_latency(0) == c.xbar.latency);
  CHECK(t.sm_to_slice_latency(0, 0) == c.l2.hit_latency);
  CHECK(t.sm_to_slice_latency(0, c.l2.slices - 1) == c.l2.hit_latency + c.l2.far_latency);
  CHECK(t.sm_to_slice_latency(c.sm.count - 1, c.l2.slices - 1) == c.l2.hit_latency);
  CHECK(t.slice_to_channel_latency(3, c.hbm.channels - 1) == c.hbm.latency);
  // Bandwidth shares of the totals.
  CHECK(t.sm_port_bandwidth(7) == c.xbar.port_bandwidth);
  CHECK(t.slice_bandwidth(0).bytes_per_second ==
        Approx(c.l2.bandwidth.bytes_per_second / c.l2.slices));
  CHECK(t.slice_to_channel_bandwidth(0, 0).bytes_per_second ==
        Approx(c.hbm.bandwidth.bytes_per_second / c.hbm.channels));
  // Slices split evenly and in order among partitions.
  CHECK(t.partition_of_slice(0) == 0);
  CHECK(t.partition_of_slice(c.l2.slices / c.l2.partitions - 1) == 0);
  CHECK(t.partition_of_slice(c.l2.slices / c.l2.partitions) == 1);
  CHECK(t.partition_of_slice(c.l2.slices - 1) == c.l2.partitions - 1);
}

TEST_CASE("DOT export has one node per SM, slice and channel and a cluster per partition",
          "[topology]") {
  const HardwareConfig c = load_config("a100-40gb");
  const std::string dot = Topology(c).to_dot();
  CHECK(dot.rfind("digraph memwall {", 0) == 0);
  CHECK(count_of(dot, "[label=\"SM ") == c.sm.count);
  CHECK(count_of(dot, "[label=\"L2 slice ") == c.l2.slices);
  CHECK(count_of(dot, "[label=\"HBM channel ") == c.hbm.channels);
  CHECK(count_of(dot, "subgraph cluster_partition") == c.l2.partitions);
  CHECK(count_of(dot, " -> ") == c.sm.count + std::size_t{c.l2.partitions} * c.l2.slices +
                                     std::size_t{c.l2.slices} * c.hbm.channels);
  CHECK(dot == Topology(c).to_dot());  // deterministic
}

TEST_CASE("SMs and slices are split evenly among partitions, each SM on its partition's crossbar",
          "[topology]") {
  HardwareConfig c = load_config("h200", {"l2.far_latency=200 cycles"});
  const Topology t(c);
  REQUIRE(c.l2.partitions == 2);
  // 132 SMs: 0..65 on crossbar 0, 66..131 on crossbar 1.
  CHECK(t.crossbar_of_sm(0) == 0);
  CHECK(t.crossbar_of_sm(c.sm.count / 2 - 1) == 0);
  CHECK(t.crossbar_of_sm(c.sm.count / 2) == 1);
  CHECK(t.crossbar_of_sm(c.sm.count - 1) == 1);
  const Tick lookup = c.l2.hit_latency - c.xbar.latency;
  CHECK(t.crossbar_to_slice_latency(1, c.l2.slices - 1) == lookup);
  CHECK(t.crossbar_to_slice_latency(1, 0) == lookup + c.l2.far_latency);
  CHECK(t.sm_to_slice_latency(c.sm.count - 1, 0) == c.l2.hit_latency + c.l2.far_latency);
}

TEST_CASE("The collapsed DOT has one node per group and counts the edges it stands for",
          "[topology]") {
  const HardwareConfig c = load_config("h200");
  const std::string dot = Topology(c).to_dot_collapsed();
  CHECK(dot.rfind("digraph memwall {", 0) == 0);
  // Groups: SMs per crossbar, crossbars, slices per partition, one channel group.
  const std::size_t p = c.l2.partitions;
  const std::size_t groups = 2 * p + p + 1;
  const std::size_t bundles =
      p + p * p + p;  // SMs -> crossbar, crossbar -> slices, slices -> channels
  CHECK(count_of(dot, " -> ") == bundles);
  CHECK(count_of(dot, " [label=") == groups + bundles);
  CHECK(count_of(dot, "[label=\"" + std::to_string(c.sm.count / 2) + " SMs\"]") == 2);
  CHECK(count_of(dot, "[label=\"" + std::to_string(c.hbm.channels) + " HBM channels\"]") == 1);
  const std::string slice_to_channels = "slices_p0 -> channels [label=\"" +
                                        std::to_string(c.l2.slices / 2 * c.hbm.channels) +
                                        " edges, ";
  CHECK(count_of(dot, slice_to_channels) == 1);
  CHECK(dot.size() < 4096);  // a page, where the full graph of an H200 is thousands of lines
  CHECK(dot == Topology(c).to_dot_collapsed());  // deterministic
}

TEST_CASE("A graph in which an SM cannot reach a channel is rejected", "[topology]") {
  const HardwareConfig c = load_config("teaching-gpu");
  TopologyGraph g = Topology::build_graph(c);
  // Cut every slice's edge to channel 2: no SM reaches it any more.
  std::vector<std::pair<TopologyGraph::vertex_descriptor, TopologyGraph::vertex_descriptor>> cut;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    if (g[boost::target(*e, g)].kind == NodeKind::kChannel && g[boost::target(*e, g)].index == 2) {
      cut.emplace_back(boost::source(*e, g), boost::target(*e, g));
    }
  }
  REQUIRE(cut.size() == c.l2.slices);
  for (const auto& [u, v] : cut) boost::remove_edge(u, v, g);
  try {
    Topology t(std::move(g));
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key_path() == "topology");
    CHECK(e.reason() == "sm0 cannot reach HBM channel 2");
  }
}

TEST_CASE("A cycle in the request path is rejected", "[topology]") {
  const HardwareConfig c = load_config("teaching-gpu");
  TopologyGraph g = Topology::build_graph(c);
  // channel 0 → sm 0 closes a loop sm0 → xbar → slice → channel 0 → sm0.
  TopologyGraph::vertex_descriptor sm0 = 0, ch0 = 0;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    if (g[*v].kind == NodeKind::kSm && g[*v].index == 0) sm0 = *v;
    if (g[*v].kind == NodeKind::kChannel && g[*v].index == 0) ch0 = *v;
  }
  boost::add_edge(ch0, sm0, TopologyEdge{Bandwidth{1e9}, 0}, g);
  CHECK_THROWS_WITH(Topology(std::move(g)), Catch::Contains("the request path has a cycle"));
}

TEST_CASE("A slice missing its edge to one channel is rejected even when all SMs reach it",
          "[topology]") {
  const HardwareConfig c = load_config("teaching-gpu");
  TopologyGraph g = Topology::build_graph(c);
  TopologyGraph::vertex_descriptor slice1 = 0, ch3 = 0;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    if (g[*v].kind == NodeKind::kSlice && g[*v].index == 1) slice1 = *v;
    if (g[*v].kind == NodeKind::kChannel && g[*v].index == 3) ch3 = *v;
  }
  boost::remove_edge(slice1, ch3, g);
  CHECK_THROWS_WITH(Topology(std::move(g)), Catch::Contains("missing edge slice1 -> ch3"));
}
