#include "sim/engine/run_result.h"

namespace memwall {
namespace {

using Unit = FigureStat::Unit;

constexpr FigureStat kFigureStats[] = {
    {"time_s", "time", "time", Unit::kSeconds, "the kernel's or run's span, seconds", nullptr,
     [](const TrafficCounters&, Tick span) { return seconds(span); }},
    {"dram_read_bytes", "DRAM read", "DRAM read", Unit::kBytes,
     "bytes read from HBM: load misses and partial-write fills", &TrafficCounters::dram_read_bytes},
    {"dram_write_bytes", "DRAM write", "DRAM write", Unit::kBytes,
     "dirty bytes written back to HBM on eviction", &TrafficCounters::dram_write_bytes},
    {"dram_bytes", "DRAM total", "DRAM total", Unit::kBytes, "DRAM read + write bytes", nullptr,
     nullptr, [](const TrafficCounters& c) { return c.dram_read_bytes + c.dram_write_bytes; }},
    {"dram_row_misses", "DRAM row misses", "", Unit::kCount,
     "HBM accesses (reads and write-backs) that opened a new row of their bank",
     &TrafficCounters::dram_row_misses},
    {"l2_read_bytes", "SM&rarr;L2 read", "SM->L2 read", Unit::kBytes,
     "sector bytes requested by loads (SM to L2)", &TrafficCounters::l2_read_bytes},
    {"l2_write_bytes", "SM&rarr;L2 write", "SM->L2 write", Unit::kBytes,
     "sector bytes written by stores (SM to L2)", &TrafficCounters::l2_write_bytes},
    {"l2_hit_rate", "L2 hit rate", "L2 hit rate", Unit::kFraction,
     "load sectors found valid in L2 over all load sectors", nullptr,
     [](const TrafficCounters& c, Tick) { return c.l2_hit_rate(); }},
    {"l2_hit_sectors", "", "", Unit::kCount, "load sectors found valid in L2",
     &TrafficCounters::l2_hit_sectors},
    {"l2_miss_sectors", "", "", Unit::kCount, "load sectors fetched from HBM",
     &TrafficCounters::l2_miss_sectors},
    {"l2_line_accesses", "", "", Unit::kCount, "L2 line lookups of loads and stores",
     &TrafficCounters::l2_line_accesses},
    {"smem_bytes", "shared-memory bytes", "shared memory", Unit::kBytes,
     "shared-memory bytes of smem ops", &TrafficCounters::smem_bytes},
    {"flops", "FLOPs", "FLOPs", Unit::kFlops, "FLOPs and ops of compute ops (tensor, fp32, sfu)",
     &TrafficCounters::flops},
    {"tensor_flops", "tensor-core FLOPs", "", Unit::kFlops,
     "of the FLOPs, the tensor cores' (tensor and mma_sync ops): the matrix products",
     &TrafficCounters::tensor_flops},
    {"fp32_flops", "fp32 FLOPs", "", Unit::kFlops,
     "of the FLOPs, the fp32 pipe's (flops - tensor - sfu)", nullptr, nullptr,
     [](const TrafficCounters& c) { return c.flops - c.tensor_flops - c.sfu_ops; }},
    {"sfu_ops", "SFU ops", "", Unit::kOps,
     "of the FLOPs, the special-function units' ops (exponentials, reciprocals)",
     &TrafficCounters::sfu_ops},
    {"warp_instructions", "warp instructions issued", "", Unit::kCount,
     "warp instructions of issue ops", &TrafficCounters::warp_instructions},
    {"achieved_dram_bandwidth", "achieved DRAM bandwidth", "DRAM bandwidth", Unit::kBandwidth,
     "(DRAM read + write bytes) / span, bytes per second", nullptr,
     [](const TrafficCounters& c, Tick span) { return achieved_dram_bandwidth(c, span); }},
    {"ctas", "CTAs", "CTAs", Unit::kCount, "CTAs that ran", &TrafficCounters::ctas},
    {"sm_cycles", "SM clock cycles", "", Unit::kCount,
     "SM clock cycles over the span: sm.clock, or lower where the power limiter slowed it",
     &TrafficCounters::sm_cycles},
    {"sm_clock_hz", "SM clock", "SM clock", Unit::kHertz,
     "sm_cycles / span: the mean SM clock, hertz (sm.clock unless power.limit_watts slowed it)",
     nullptr,
     [](const TrafficCounters& c, Tick span) {
       return span == 0 ? 0.0 : static_cast<double>(c.sm_cycles) / seconds(span);
     }},
    {"energy_pj", "board energy (pJ)", "", Unit::kCount,
     "board energy over the span by the config's power model (power.*), picojoules; 0 without one",
     &TrafficCounters::energy_pj},
    {"power_w", "board power", "board power", Unit::kWatts,
     "energy_pj / span: the mean board power, watts (power model; 0 without one)", nullptr,
     [](const TrafficCounters& c, Tick span) {
       return span == 0 ? 0.0 : static_cast<double>(c.energy_pj) * 1e-12 / seconds(span);
     }},
};

using Kind = ResourceStat::Kind;

constexpr ResourceStat kResourceStats[] = {
    {"requests", "requests", "requests", Kind::kCount,
     "bookings: lines at a port or slice, misses and write-backs at a channel, ops at a pipe",
     nullptr, [](const ResourceUse& u) { return u.requests; }},
    {"queue_s", "queueing, summed", "", Kind::kSeconds, "the requests' waits, summed, seconds",
     nullptr, nullptr, [](const ResourceUse& u) { return static_cast<double>(u.queue); }},
    {"mean_queue_s", "mean queueing", "mean wait", Kind::kSeconds,
     "the mean wait of a request, seconds", nullptr, nullptr,
     [](const ResourceUse& u) { return u.mean_queue(); }},
    {"busiest", "busiest instance", "busiest", Kind::kInstance,
     "the instance with the most time booked on it"},
    {"busiest_busy_s", "its busy time", "", Kind::kSeconds,
     "the time booked on the busiest instance, seconds", nullptr, nullptr,
     [](const ResourceUse& u) { return static_cast<double>(u.busiest_busy); }},
    {"busiest_utilization", "its utilization", "busy", Kind::kFraction,
     "the busiest instance's busy time over the kernel's span",
     [](const ResourceUse& u, Tick span) {
       return span == 0 ? 0.0 : static_cast<double>(u.busiest_busy) / static_cast<double>(span);
     }},
};

constexpr TensorStat kTensorStats[] = {
    {"read", "read", "read", "bytes read from HBM",
     [](const TensorDramBytes& t) { return t.read; }},
    {"write", "write (write-back)", "write", "dirty bytes written back",
     [](const TensorDramBytes& t) { return t.write; }},
    {"compulsory", "read: compulsory", "", "reads of a sector for the first time in the run",
     [](const TensorDramBytes& t) { return t.compulsory(); }},
    {"reread", "read: re-read", "", "reads of a sector again after an eviction or flush",
     [](const TensorDramBytes& t) { return t.reread; }},
};

}  // namespace

std::span<const FigureStat> figure_stats() { return kFigureStats; }
std::span<const ResourceStat> resource_stats() { return kResourceStats; }
std::span<const TensorStat> tensor_stats() { return kTensorStats; }

void TrafficCounters::add(const TrafficCounters& o) {
  for (const FigureStat& f : kFigureStats) {
    if (f.counter != nullptr) this->*f.counter += o.*f.counter;
  }
}

double achieved_dram_bandwidth(const TrafficCounters& c, Tick time) {
  if (time <= 0) return 0.0;
  return static_cast<double>(c.dram_read_bytes + c.dram_write_bytes) / seconds(time);
}

const char* resource_class_name(ResourceClass c) {
  switch (c) {
    case ResourceClass::kSmPort: return "sm_port";
    case ResourceClass::kL2Slice: return "l2_slice";
    case ResourceClass::kHbmChannel: return "hbm_channel";
    case ResourceClass::kTensorPipe: return "tensor_pipe";
    case ResourceClass::kFp32Pipe: return "fp32_pipe";
    case ResourceClass::kSfuPipe: return "sfu_pipe";
    case ResourceClass::kSmemPipe: return "smem_pipe";
    case ResourceClass::kIssuePipe: return "issue_pipe";
  }
  return "?";
}

std::string resource_instance_name(ResourceClass c, std::uint32_t index) {
  switch (c) {
    case ResourceClass::kSmPort:
      return "sm " + std::to_string(index / 2) + (index % 2 == 0 ? " to_sm" : " from_sm");
    case ResourceClass::kL2Slice: return "slice " + std::to_string(index);
    case ResourceClass::kHbmChannel: return "channel " + std::to_string(index);
    default: return "sm " + std::to_string(index);
  }
}

}  // namespace memwall
