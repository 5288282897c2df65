#pragma once
/// The memory hierarchy as a graph: SM → crossbar → L2 slice (grouped in partitions) → HBM
/// channel, with a bandwidth and a latency on every edge.
///
/// Edge shares of the configured totals:
///   SM → xbar:       bandwidth xbar.port_bandwidth,          latency xbar.latency
///   xbar → slice:    bandwidth l2.bandwidth / l2.slices,     latency l2.hit_latency - xbar.latency
///   slice → channel: bandwidth hbm.bandwidth / hbm.channels, latency hbm.latency
/// so the path latency SM → slice is l2.hit_latency and a miss adds hbm.latency. Every slice has
/// an edge to every channel (addresses are interleaved over all channels).
///
/// Invariants checked at construction (ConfigError with key "topology" otherwise): exactly one
/// crossbar; the request path has no cycle; every SM reaches every HBM channel; every SM has an
/// edge to the crossbar, the crossbar to every slice, every slice to every channel.

#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "sim/core/units.h"
#include "sim/hw/config.h"

namespace memwall {

/// What a node of the topology is.
enum class NodeKind : std::uint8_t { kSm, kXbar, kSlice, kChannel };

/// A node: its kind, its index among the nodes of that kind, and (slices) its partition.
struct TopologyNode {
  NodeKind kind = NodeKind::kSm;
  std::uint32_t index = 0;
  std::uint32_t partition = 0;  ///< the L2 partition of a slice; 0 for other kinds
};

/// A directed link in the request direction.
struct TopologyEdge {
  Bandwidth bandwidth;  ///< peak rate of this link
  Tick latency = 0;     ///< one-way latency of this link
};

/// The graph type; vertices and edges carry the bundles above.
using TopologyGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                            TopologyNode, TopologyEdge>;

class Topology {
 public:
  /// Builds the graph of a validated config (see build_graph) and checks it.
  explicit Topology(const HardwareConfig& config);
  /// Checks and adopts a graph built elsewhere (tests build broken ones). Throws ConfigError.
  explicit Topology(TopologyGraph graph);

  /// The graph a config describes, unchecked (node order: SMs, xbar, slices, channels).
  static TopologyGraph build_graph(const HardwareConfig& config);

  std::uint32_t sm_count() const { return static_cast<std::uint32_t>(m_sm_latency.size()); }
  std::uint32_t slice_count() const { return static_cast<std::uint32_t>(m_slice_partition.size()); }
  std::uint32_t channel_count() const { return m_channels; }
  std::uint32_t partition_count() const { return m_partitions; }

  /// Latency of the path SM → xbar → slice (= l2.hit_latency for a config-built topology).
  Tick sm_to_slice_latency(std::uint32_t sm, std::uint32_t slice) const {
    return m_sm_latency[sm] + m_slice_latency[slice];
  }
  /// Latency of the edge slice → channel (= hbm.latency for a config-built topology).
  Tick slice_to_channel_latency(std::uint32_t slice, std::uint32_t channel) const {
    return m_channel_edges[std::size_t{slice} * m_channels + channel].latency;
  }
  /// Bandwidth of an SM's port into the crossbar.
  Bandwidth sm_port_bandwidth(std::uint32_t sm) const { return m_sm_bandwidth[sm]; }
  /// Bandwidth of the crossbar → slice edge (the slice's share of the L2 bandwidth).
  Bandwidth slice_bandwidth(std::uint32_t slice) const { return m_slice_bandwidth[slice]; }
  /// Bandwidth of the slice → channel edge (the channel's share of the HBM bandwidth).
  Bandwidth slice_to_channel_bandwidth(std::uint32_t slice, std::uint32_t channel) const {
    return m_channel_edges[std::size_t{slice} * m_channels + channel].bandwidth;
  }
  /// The L2 partition a slice belongs to, in [0, partition_count()).
  std::uint32_t partition_of_slice(std::uint32_t slice) const { return m_slice_partition[slice]; }

  const TopologyGraph& graph() const { return m_graph; }

  /// Graphviz DOT: one node per SM, the crossbar, one per slice (clustered by partition) and one
  /// per channel; edges labelled with bandwidth and latency. Deterministic.
  std::string to_dot() const;

 private:
  void check_and_index();

  TopologyGraph m_graph;
  std::vector<Tick> m_sm_latency;            ///< per SM: SM → xbar latency
  std::vector<Bandwidth> m_sm_bandwidth;     ///< per SM: SM → xbar bandwidth
  std::vector<Tick> m_slice_latency;         ///< per slice: xbar → slice latency
  std::vector<Bandwidth> m_slice_bandwidth;  ///< per slice: xbar → slice bandwidth
  std::vector<std::uint32_t> m_slice_partition;
  std::vector<TopologyEdge> m_channel_edges;  ///< slices x channels, row-major by slice
  std::uint32_t m_channels = 0;
  std::uint32_t m_partitions = 0;
};

}  // namespace memwall
