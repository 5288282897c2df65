#include "sim/hw/topology.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <utility>

#include <boost/graph/topological_sort.hpp>

#include "sim/core/error.h"

namespace memwall {
namespace {

using Vertex = TopologyGraph::vertex_descriptor;

[[noreturn]] void topology_error(const std::string& reason) {
  throw ConfigError(SourcePos{}, "topology", reason);
}

/// The DOT identifier of a node, also used in error messages: sm3, xbar1, slice7, ch12.
std::string node_name(const TopologyNode& n) {
  switch (n.kind) {
    case NodeKind::kSm: return "sm" + std::to_string(n.index);
    case NodeKind::kXbar: return "xbar" + std::to_string(n.index);
    case NodeKind::kSlice: return "slice" + std::to_string(n.index);
    case NodeKind::kChannel: return "ch" + std::to_string(n.index);
  }
  return "?";
}

/// "64 GB/s, 50 ns": an edge's bandwidth and latency for the DOT label.
std::string edge_label(const TopologyEdge& e) {
  return format_bandwidth(e.bandwidth) + ", " +
         (e.latency == 0 ? "0 ns" : format_duration(e.latency));
}

}  // namespace

Topology::Topology(const HardwareConfig& config) : m_graph(build_graph(config)) {
  check_and_index();
}

Topology::Topology(TopologyGraph graph) : m_graph(std::move(graph)) { check_and_index(); }

TopologyGraph Topology::build_graph(const HardwareConfig& c) {
  TopologyGraph g;
  // SMs and slices are split among the partitions in contiguous, equal groups (validation made
  // slices a multiple of partitions; SM groups differ by at most one).
  const std::uint32_t partitions = std::max<std::uint32_t>(c.l2.partitions, 1);
  const std::uint32_t per_partition = c.l2.slices / partitions;
  std::vector<Vertex> sms, xbars, slices, channels;
  for (std::uint32_t i = 0; i < c.sm.count; ++i) {
    const auto p = static_cast<std::uint32_t>(std::uint64_t{i} * partitions / c.sm.count);
    sms.push_back(add_vertex({NodeKind::kSm, i, p}, g));
  }
  for (std::uint32_t p = 0; p < partitions; ++p)
    xbars.push_back(add_vertex({NodeKind::kXbar, p, p}, g));
  for (std::uint32_t i = 0; i < c.l2.slices; ++i) {
    slices.push_back(
        add_vertex({NodeKind::kSlice, i, per_partition == 0 ? 0 : i / per_partition}, g));
  }
  for (std::uint32_t i = 0; i < c.hbm.channels; ++i) {
    channels.push_back(add_vertex({NodeKind::kChannel, i, 0}, g));
  }
  const TopologyEdge port{c.xbar.port_bandwidth, c.xbar.latency};
  for (const Vertex s : sms) add_edge(s, xbars[g[s].partition], port, g);
  // Validation keeps hit_latency >= xbar.latency; a hand-made config that does not is clamped.
  const Tick lookup = c.l2.hit_latency > c.xbar.latency ? c.l2.hit_latency - c.xbar.latency : 0;
  const Bandwidth slice_bw{c.l2.bandwidth.bytes_per_second / c.l2.slices};
  for (const Vertex x : xbars) {
    for (const Vertex s : slices) {
      const bool far = g[s].partition != g[x].partition;
      add_edge(x, s, TopologyEdge{slice_bw, lookup + (far ? c.l2.far_latency : 0)}, g);
    }
  }
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
  if (sms.empty() || xbars.empty() || slices.empty() || channels.empty()) {
    topology_error("needs at least one SM, one crossbar, one L2 slice and one HBM channel");
  }
  auto dense = [&](std::vector<Vertex>& list, const char* what) {
    std::vector<Vertex> by_index(list.size(), TopologyGraph::null_vertex());
    for (const Vertex v : list) {
      const std::uint32_t i = g[v].index;
      if (i >= list.size() || by_index[i] != TopologyGraph::null_vertex()) {
        topology_error(std::string(what) + " indices must be 0.." +
                       std::to_string(list.size() - 1) + " without repeats; found " +
                       node_name(g[v]) + " twice or out of range");
      }
      by_index[i] = v;
    }
    list = std::move(by_index);
  };
  dense(sms, "SM");
  dense(xbars, "crossbar");
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
    if (g[v].kind == NodeKind::kChannel)
      mine[g[v].index / 64] |= std::uint64_t{1} << (g[v].index % 64);
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
  m_sm_latency.clear();
  m_sm_bandwidth.clear();
  m_sm_crossbar.clear();
  for (const Vertex s : sms) {
    if (out_degree(s, g) != 1 || g[target(*out_edges(s, g).first, g)].kind != NodeKind::kXbar) {
      topology_error(node_name(g[s]) + " must have exactly one edge, to a crossbar");
    }
    const auto e = *out_edges(s, g).first;
    m_sm_latency.push_back(g[e].latency);
    m_sm_bandwidth.push_back(g[e].bandwidth);
    m_sm_crossbar.push_back(g[target(e, g)].index);
  }
  m_crossbars = static_cast<std::uint32_t>(xbars.size());
  m_crossbar_partition.assign(xbars.size(), 0);
  for (const Vertex x : xbars) m_crossbar_partition[g[x].index] = g[x].partition;
  m_crossbar_slice_latency.assign(xbars.size() * slices.size(), 0);
  for (const Vertex x : xbars) {
    for (const Vertex s : slices) {
      m_crossbar_slice_latency[std::size_t{g[x].index} * slices.size() + g[s].index] =
          edge_of(x, s).latency;
    }
  }
  m_slice_bandwidth.clear();
  m_slice_partition.clear();
  m_partitions = 0;
  for (const Vertex s : slices) {
    m_slice_bandwidth.push_back(edge_of(xbars.front(), s).bandwidth);
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
      if (!present[ch])
        topology_error("missing edge " + node_name(g[s]) + " -> " + node_name(g[channels[ch]]));
    }
  }
}

std::string Topology::to_dot() const {
  const TopologyGraph& g = m_graph;
  std::string out =
      "digraph memwall {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n";
  // Nodes: SMs, the crossbar, slices clustered by partition, channels.
  for (auto [v, end] = vertices(g); v != end; ++v) {
    const TopologyNode& n = g[*v];
    if (n.kind == NodeKind::kSm || n.kind == NodeKind::kXbar) {
      out += "  " + node_name(n) + " [label=\"" +
             (n.kind == NodeKind::kSm ? "SM " + std::to_string(n.index)
                                      : "crossbar " + std::to_string(n.index)) +
             "\"];\n";
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
    out += "  " + node_name(g[source(*e, g)]) + " -> " + node_name(g[target(*e, g)]) +
           " [label=\"" + edge_label(g[*e]) + "\"];\n";
  }
  out += "}\n";
  return out;
}

std::string Topology::to_dot_collapsed() const {
  const TopologyGraph& g = m_graph;
  // The group of a node: SMs by crossbar, each crossbar, slices by partition, all channels.
  auto group = [&](Vertex v) -> std::string {
    const TopologyNode& n = g[v];
    switch (n.kind) {
      case NodeKind::kSm: return "sms_xbar" + std::to_string(m_sm_crossbar[n.index]);
      case NodeKind::kXbar: return "xbar" + std::to_string(n.index);
      case NodeKind::kSlice: return "slices_p" + std::to_string(n.partition);
      case NodeKind::kChannel: return "channels";
    }
    return "?";
  };
  // Nodes per group, and per pair of groups the edges between them (ordered maps: deterministic).
  std::map<std::string, std::pair<std::string, std::uint64_t>> nodes;  // id -> (kind label, count)
  struct Bundle {
    std::uint64_t count = 0;
    Tick min_latency = 0, max_latency = 0;
    double min_bw = 0, max_bw = 0;
  };
  std::map<std::pair<std::string, std::string>, Bundle> bundles;
  for (auto [v, end] = vertices(g); v != end; ++v) {
    const TopologyNode& n = g[*v];
    const char* what = n.kind == NodeKind::kSm      ? "SMs"
                       : n.kind == NodeKind::kXbar  ? "crossbar"
                       : n.kind == NodeKind::kSlice ? "L2 slices"
                                                    : "HBM channels";
    auto& entry = nodes[group(*v)];
    entry.first = what;
    ++entry.second;
  }
  for (auto [e, end] = edges(g); e != end; ++e) {
    Bundle& b = bundles[{group(source(*e, g)), group(target(*e, g))}];
    const TopologyEdge& te = g[*e];
    if (b.count == 0) {
      b.min_latency = b.max_latency = te.latency;
      b.min_bw = b.max_bw = te.bandwidth.bytes_per_second;
    }
    ++b.count;
    b.min_latency = std::min(b.min_latency, te.latency);
    b.max_latency = std::max(b.max_latency, te.latency);
    b.min_bw = std::min(b.min_bw, te.bandwidth.bytes_per_second);
    b.max_bw = std::max(b.max_bw, te.bandwidth.bytes_per_second);
  }
  auto duration = [](Tick t) { return t == 0 ? std::string("0 ns") : format_duration(t); };
  std::string out =
      "digraph memwall {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n";
  for (const auto& [id, entry] : nodes) {
    const std::string label = entry.first == "crossbar"
                                  ? "crossbar " + id.substr(4)
                                  : std::to_string(entry.second) + " " + entry.first;
    out += "  " + id + " [label=\"" + label + "\"];\n";
  }
  for (const auto& [ends, b] : bundles) {
    const std::string bw = b.min_bw == b.max_bw ? format_bandwidth(Bandwidth{b.min_bw})
                                                : format_bandwidth(Bandwidth{b.min_bw}) + " - " +
                                                      format_bandwidth(Bandwidth{b.max_bw});
    const std::string lat = b.min_latency == b.max_latency
                                ? duration(b.min_latency)
                                : duration(b.min_latency) + " - " + duration(b.max_latency);
    out += "  " + ends.first + " -> " + ends.second + " [label=\"" + std::to_string(b.count) +
           " edges, " + bw + " each, " + lat + "\"];\n";
  }
  out += "}\n";
  return out;
}

}  // namespace memwall
