#include "sim/hw/topology.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <utility>

#include <boost/graph/topological_sort.hpp>

#include "sim/core/error.h"

namespace memwall {
namespace {

using Vertex = TopologyGraph::vertex_descriptor;

[[noreturn]] void topology_error(const std::string& reason) {
  throw ConfigError(SourcePos{}, "topology", reason);
}

/// The DOT identifier of a node, also used in error messages: sm3, xbar, slice7, ch12.
std::string node_name(const TopologyNode& n) {
  switch (n.kind) {
    case NodeKind::kSm: return "sm" + std::to_string(n.index);
    case NodeKind::kXbar: return "xbar";
    case NodeKind::kSlice: return "slice" + std::to_string(n.index);
    case NodeKind::kChannel: return "ch" + std::to_string(n.index);
  }
  return "?";
}

/// "64 GB/s, 50 ns": an edge's bandwidth and latency for the DOT label.
std::string edge_label(const TopologyEdge& e) {
  return format_bandwidth(e.bandwidth) + ", " + (e.latency == 0 ? "0 ns" : format_duration(e.latency));
}

}  // namespace

Topology::Topology(const HardwareConfig& config) : m_graph(build_graph(config)) { check_and_index(); }

Topology::Topology(TopologyGraph graph) : m_graph(std::move(graph)) { check_and_index(); }

TopologyGraph Topology::build_graph(const HardwareConfig& c) {
  TopologyGraph g;
  std::vector<Vertex> sms, slices, channels;
  for (std::uint32_t i = 0; i < c.sm.count; ++i) sms.push_back(add_vertex({NodeKind::kSm, i, 0}, g));
  const Vertex xbar = add_vertex({NodeKind::kXbar, 0, 0}, g);
  // Slices are assigned to partitions in contiguous, equal groups (validation made slices a
  // multiple of partitions).
  const std::uint32_t per_partition = c.l2.partitions == 0 ? c.l2.slices : c.l2.slices / c.l2.partitions;
  for (std::uint32_t i = 0; i < c.l2.slices; ++i) {
    slices.push_back(add_vertex({NodeKind::kSlice, i, per_partition == 0 ? 0 : i / per_partition}, g));
  }
  for (std::uint32_t i = 0; i < c.hbm.channels; ++i) {
    channels.push_back(add_vertex({NodeKind::kChannel, i, 0}, g));
  }
  const TopologyEdge port{c.xbar.port_bandwidth, c.xbar.latency};
  for (const Vertex s : sms) add_edge(s, xbar, port, g);
  const TopologyEdge to_slice{Bandwidth{c.l2.bandwidth.bytes_per_second / c.l2.slices},
                              c.l2.hit_latency - c.xbar.latency};
  for (const Vertex s : slices) add_edge(xbar, s, to_slice, g);
  const TopologyEdge to_channel{Bandwidth{c.hbm.bandwidth.bytes_per_second / c.hbm.channels},
                                c.hbm.latency};
  for (const Vertex s : slices) {
    for (const Vertex ch : channels) add_edge(s, ch, to_channel, g);
  }
  return g;
}

void Topology::check_and_index() {
  const TopologyGraph& g = m_graph;
  // Index the nodes of each kind; indices must be dense and unique.
  std::vector<Vertex> sms, slices, channels, xbars;
  for (auto [v, end] = vertices(g); v != end; ++v) {
    const TopologyNode& n = g[*v];
    auto& list = n.kind == NodeKind::kSm      ? sms
                 : n.kind == NodeKind::kXbar  ? xbars
                 : n.kind == NodeKind::kSlice ? slices
                                              : channels;
    list.push_back(*v);
  }
  if (xbars.size() != 1) topology_error("expected exactly one crossbar, found " + std::to_string(xbars.size()));
  if (sms.empty() || slices.empty() || channels.empty()) {
    topology_error("needs at least one SM, one L2 slice and one HBM channel");
  }
  auto dense = [&](std::vector<Vertex>& list, const char* what) {
    std::vector<Vertex> by_index(list.size(), TopologyGraph::null_vertex());
    for (const Vertex v : list) {
      const std::uint32_t i = g[v].index;
      if (i >= list.size() || by_index[i] != TopologyGraph::null_vertex()) {
        topology_error(std::string(what) + " indices must be 0.." + std::to_string(list.size() - 1) +
                       " without repeats; found " + node_name(g[v]) + " twice or out of range");
      }
      by_index[i] = v;
    }
    list = std::move(by_index);
  };
  dense(sms, "SM");
  dense(slices, "slice");
  dense(channels, "channel");

  // No cycles in the request path.
  std::vector<Vertex> order;
  try {
    boost::topological_sort(g, std::back_inserter(order));
  } catch (const boost::not_a_dag&) {
    topology_error("the request path has a cycle (requests could loop forever)");
  }

  // Reachability: `order` lists every node after all its successors, so one pass computes, for each
  // node, the set of channels reachable from it (a bitset of 64-bit words). Nodes nobody points to
  // (the SMs of a sane graph) are never read back, so their sets live in a scratch buffer only.
  const std::size_t words = (channels.size() + 63) / 64;
  constexpr std::size_t kNoSlot = static_cast<std::size_t>(-1);
  std::vector<std::size_t> slot(num_vertices(g), kNoSlot);
  std::size_t slots = 0;
  for (auto [v, end] = vertices(g); v != end; ++v) {
    if (in_degree(*v, g) > 0) slot[*v] = slots++;
  }
  std::vector<std::uint64_t> reach(slots * words, 0);
  std::vector<std::uint64_t> scratch(words);
  for (const Vertex v : order) {
    std::uint64_t* mine = slot[v] == kNoSlot ? scratch.data() : &reach[slot[v] * words];
    std::fill(mine, mine + words, 0);
    if (g[v].kind == NodeKind::kChannel) mine[g[v].index / 64] |= std::uint64_t{1} << (g[v].index % 64);
    for (auto [e, end] = out_edges(v, g); e != end; ++e) {
      const std::uint64_t* theirs = &reach[slot[target(*e, g)] * words];
      for (std::size_t w = 0; w < words; ++w) mine[w] |= theirs[w];
    }
    if (g[v].kind != NodeKind::kSm) continue;
    for (std::uint32_t ch = 0; ch < channels.size(); ++ch) {
      if ((mine[ch / 64] >> (ch % 64) & 1) == 0) {
        topology_error(node_name(g[v]) + " cannot reach HBM channel " + std::to_string(ch));
      }
    }
  }

  // The edges the lookups use.
  auto edge_of = [&](Vertex from, Vertex to) -> const TopologyEdge& {
    const auto [e, found] = boost::edge(from, to, g);
    if (!found) topology_error("missing edge " + node_name(g[from]) + " -> " + node_name(g[to]));
    return g[e];
  };
  const Vertex xbar = xbars.front();
  m_sm_latency.clear();
  m_sm_bandwidth.clear();
  for (const Vertex s : sms) {
    const TopologyEdge& e = edge_of(s, xbar);
    m_sm_latency.push_back(e.latency);
    m_sm_bandwidth.push_back(e.bandwidth);
  }
  m_slice_latency.clear();
  m_slice_bandwidth.clear();
  m_slice_partition.clear();
  m_partitions = 0;
  for (const Vertex s : slices) {
    const TopologyEdge& e = edge_of(xbar, s);
    m_slice_latency.push_back(e.latency);
    m_slice_bandwidth.push_back(e.bandwidth);
    m_slice_partition.push_back(g[s].partition);
    m_partitions = std::max(m_partitions, g[s].partition + 1);
  }
  m_channels = static_cast<std::uint32_t>(channels.size());
  m_channel_edges.clear();
  m_channel_edges.reserve(slices.size() * channels.size());
  // One pass over each slice's out-edges (a per-pair edge lookup would be quadratic in channels).
  std::vector<char> present;
  for (const Vertex s : slices) {
    const std::size_t row = m_channel_edges.size();
    m_channel_edges.resize(row + channels.size());
    present.assign(channels.size(), 0);
    for (auto [e, end] = out_edges(s, g); e != end; ++e) {
      const TopologyNode& to = g[target(*e, g)];
      if (to.kind != NodeKind::kChannel) continue;
      m_channel_edges[row + to.index] = g[*e];
      present[to.index] = 1;
    }
    for (std::uint32_t ch = 0; ch < channels.size(); ++ch) {
      if (!present[ch]) topology_error("missing edge " + node_name(g[s]) + " -> " + node_name(g[channels[ch]]));
    }
  }
}

std::string Topology::to_dot() const {
  const TopologyGraph& g = m_graph;
  std::string out = "digraph memwall {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n";
  // Nodes: SMs, the crossbar, slices clustered by partition, channels.
  for (auto [v, end] = vertices(g); v != end; ++v) {
    const TopologyNode& n = g[*v];
    if (n.kind == NodeKind::kSm || n.kind == NodeKind::kXbar) {
      out += "  " + node_name(n) + " [label=\"" + (n.kind == NodeKind::kSm ? "SM " + std::to_string(n.index) : std::string("crossbar")) + "\"];\n";
    }
  }
  for (std::uint32_t p = 0; p < m_partitions; ++p) {
    out += "  subgraph cluster_partition" + std::to_string(p) + " {\n    label=\"L2 partition " +
           std::to_string(p) + "\";\n";
    for (auto [v, end] = vertices(g); v != end; ++v) {
      const TopologyNode& n = g[*v];
      if (n.kind == NodeKind::kSlice && n.partition == p) {
        out += "    " + node_name(n) + " [label=\"L2 slice " + std::to_string(n.index) + "\"];\n";
      }
    }
    out += "  }\n";
  }
  for (auto [v, end] = vertices(g); v != end; ++v) {
    const TopologyNode& n = g[*v];
    if (n.kind == NodeKind::kChannel) {
      out += "  " + node_name(n) + " [label=\"HBM channel " + std::to_string(n.index) + "\"];\n";
    }
  }
  for (auto [e, end] = edges(g); e != end; ++e) {
    out += "  " + node_name(g[source(*e, g)]) + " -> " + node_name(g[target(*e, g)]) + " [label=\"" +
           edge_label(g[*e]) + "\"];\n";
  }
  out += "}\n";
  return out;
}

}  // namespace memwall
