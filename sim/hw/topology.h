#pragma once
/// The memory hierarchy as a graph, and the wiring the engine times requests on:
/// SM → crossbar of its partition → L2 slice → HBM channel, a bandwidth and a latency on every
/// edge. The memory path (sim/engine/memory_path.h) takes every latency and bandwidth from these
/// edges; the config keys only build the graph.
///
/// A config builds one crossbar node per L2 partition (SMs and slices are split evenly and in
/// order among the partitions) and these edges:
///   SM → its crossbar:   bandwidth xbar.port_bandwidth,          latency xbar.latency
///   crossbar → slice:    bandwidth l2.bandwidth / l2.slices,     latency l2.hit_latency - xbar.latency
///                        (+ l2.far_latency when the slice is in another partition)
///   slice → channel:     bandwidth hbm.bandwidth / hbm.channels, latency hbm.latency
/// The SM → crossbar edge is the request's trip to the slice; the crossbar → slice edge is the
/// slice's lookup and the data's trip back. So an unloaded hit in the SM's own partition is ready
/// l2.hit_latency after the request leaves the SM, a far one l2.far_latency later, and a miss adds
/// hbm.latency. A slice's bandwidth is one resource however many crossbars feed it, and so is a
/// channel's; every slice has an edge to every channel (addresses are interleaved over all of them).
///
/// Invariants checked at construction (ConfigError with key "topology" otherwise): at least one
/// crossbar; the request path has no cycle; every SM reaches every HBM channel; every SM has one
/// edge, to a crossbar; every crossbar has an edge to every slice; every slice to every channel.

#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "sim/core/units.h"
#include "sim/hw/config.h"

namespace memwall {

/// What a node of the topology is.
enum class NodeKind : std::uint8_t { kSm, kXbar, kSlice, kChannel };

/// A node: its kind, its index among the nodes of that kind, and its L2 partition.
struct TopologyNode {
  NodeKind kind = NodeKind::kSm;
  std::uint32_t index = 0;
  std::uint32_t partition = 0;  ///< the L2 partition of an SM, crossbar or slice; 0 for a channel
};

/// A directed link in the request direction.
struct TopologyEdge {
  Bandwidth bandwidth;  ///< peak rate of this link
  Tick latency = 0;  ///< one-way latency of this link
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

  /// The graph a config describes, unchecked (node order: SMs, crossbars, slices, channels).
  static TopologyGraph build_graph(const HardwareConfig& config);

  std::uint32_t sm_count() const { return static_cast<std::uint32_t>(m_sm_latency.size()); }
  std::uint32_t slice_count() const { return static_cast<std::uint32_t>(m_slice_partition.size()); }
  std::uint32_t channel_count() const { return m_channels; }
  std::uint32_t partition_count() const { return m_partitions; }
  std::uint32_t crossbar_count() const { return m_crossbars; }

  /// Latency of the edge SM → its crossbar (= xbar.latency for a config-built topology).
  Tick sm_port_latency(std::uint32_t sm) const { return m_sm_latency[sm]; }
  /// The crossbar SM `sm` is attached to, in [0, crossbar_count()).
  std::uint32_t crossbar_of_sm(std::uint32_t sm) const { return m_sm_crossbar[sm]; }
  /// Latency of the edge crossbar → slice: the lookup and the return trip.
  Tick crossbar_to_slice_latency(std::uint32_t crossbar, std::uint32_t slice) const {
    return m_crossbar_slice_latency[std::size_t{crossbar} * slice_count() + slice];
  }
  /// Latency of the path SM → crossbar → slice (= l2.hit_latency for a config-built topology and a
  /// slice of the SM's partition; + l2.far_latency for another partition's).
  Tick sm_to_slice_latency(std::uint32_t sm, std::uint32_t slice) const {
    return m_sm_latency[sm] + crossbar_to_slice_latency(m_sm_crossbar[sm], slice);
  }
  /// Latency of the edge slice → channel (= hbm.latency for a config-built topology).
  Tick slice_to_channel_latency(std::uint32_t slice, std::uint32_t channel) const {
    return m_channel_edges[std::size_t{slice} * m_channels + channel].latency;
  }
  /// Bandwidth of an SM's port into the crossbar.
  Bandwidth sm_port_bandwidth(std::uint32_t sm) const { return m_sm_bandwidth[sm]; }
  /// Bandwidth of a slice: its in-edges' (the slice's share of the L2 bandwidth; all equal).
  Bandwidth slice_bandwidth(std::uint32_t slice) const { return m_slice_bandwidth[slice]; }
  /// Bandwidth of the slice → channel edge (the channel's share of the HBM bandwidth).
  Bandwidth slice_to_channel_bandwidth(std::uint32_t slice, std::uint32_t channel) const {
    return m_channel_edges[std::size_t{slice} * m_channels + channel].bandwidth;
  }
  /// The L2 partition a slice belongs to, in [0, partition_count()).
  std::uint32_t partition_of_slice(std::uint32_t slice) const { return m_slice_partition[slice]; }
  /// The L2 partition a crossbar serves (its SMs'), in [0, partition_count()).
  std::uint32_t partition_of_crossbar(std::uint32_t crossbar) const {
    return m_crossbar_partition[crossbar];
  }
  /// Bandwidth of a channel: its in-edges' (the channel's share of the HBM bandwidth).
  Bandwidth channel_bandwidth(std::uint32_t channel) const {
    return m_channel_edges[channel].bandwidth;
  }

  const TopologyGraph& graph() const { return m_graph; }

  /// Graphviz DOT: one node per SM, crossbar, slice (clustered by partition) and channel; edges
  /// labelled with bandwidth and latency. Deterministic.
  std::string to_dot() const;
  /// Graphviz DOT with one node per group: the SMs of each crossbar, each crossbar, the slices of
  /// each partition, all channels; an edge per pair of groups with an edge between them, labelled
  /// with the edge count and, when all agree, their bandwidth and latency (else the range).
  std::string to_dot_collapsed() const;

 private:
  void check_and_index();

  TopologyGraph m_graph;
  std::vector<Tick> m_sm_latency;  ///< per SM: SM → crossbar latency
  std::vector<Bandwidth> m_sm_bandwidth;  ///< per SM: SM → crossbar bandwidth
  std::vector<std::uint32_t> m_sm_crossbar;  ///< per SM: its crossbar
  std::vector<Tick> m_crossbar_slice_latency;  ///< crossbars x slices, row-major by crossbar
  std::vector<Bandwidth> m_slice_bandwidth;  ///< per slice: crossbar 0 → slice bandwidth
  std::vector<std::uint32_t> m_slice_partition;
  std::vector<std::uint32_t> m_crossbar_partition;
  std::vector<TopologyEdge> m_channel_edges;  ///< slices x channels, row-major by slice
  std::uint32_t m_channels = 0;
  std::uint32_t m_partitions = 0;
  std::uint32_t m_crossbars = 0;
};

}  // namespace memwall
