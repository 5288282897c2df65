#include "sim/report/timeline.h"

#include <algorithm>
#include <cstdio>

#include "sim/core/json.h"

namespace memwall {
namespace {

/// Microseconds (the trace-event unit) with picosecond resolution, fixed format.
std::string micros(Tick t) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(t / 1'000'000),
                static_cast<long long>(t % 1'000'000));
  return buf;
}

}  // namespace

Timeline::Timeline(std::string path, std::uint64_t detail_budget, std::uint64_t cta_budget)
    : m_file(std::move(path)), m_detail_budget(detail_budget), m_cta_budget(cta_budget) {
  m_file.stream() << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
}

void Timeline::event_prefix(char phase, std::uint32_t pid, std::uint32_t tid, Tick ts) {
  std::ofstream& out = m_file.stream();
  if (!m_first) out << ",\n";
  m_first = false;
  out << "{\"ph\":\"" << phase << "\",\"pid\":" << pid << ",\"tid\":" << tid
      << ",\"ts\":" << micros(ts);
}

void Timeline::begin(std::uint32_t sm_count, const std::string& config,
                     const std::string& workload) {
  m_config = config;
  m_workload = workload;
  m_named.assign(sm_count, {});
  event_prefix('M', 0, 0, 0);
  m_file.stream() << ",\"name\":\"process_name\",\"args\":{\"name\":\"kernels\"}}";
  for (std::uint32_t s = 0; s < sm_count; ++s) {
    event_prefix('M', s + 1, 0, 0);
    m_file.stream() << ",\"name\":\"process_name\",\"args\":{\"name\":\"SM " << s << "\"}}";
    event_prefix('M', s + 1, 0, 0);
    m_file.stream() << ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" << s + 1
                    << "}}";
  }
}

void Timeline::name_thread(std::uint32_t sm, std::uint32_t slot) {
  std::vector<bool>& named = m_named[sm];
  if (slot < named.size() && named[slot]) return;
  if (slot >= named.size()) named.resize(slot + 1, false);
  named[slot] = true;
  event_prefix('M', sm + 1, slot, 0);
  m_file.stream() << ",\"name\":\"thread_name\",\"args\":{\"name\":\"slot " << slot << "\"}}";
}

void Timeline::kernel(const std::string& name, Tick start, Tick end) {
  ++m_kernels;
  event_prefix('X', 0, 0, start);
  m_file.stream() << ",\"dur\":" << micros(end - start) << ",\"name\":" << json_quote(name) << "}";
}

void Timeline::cta(std::uint32_t sm, std::uint32_t slot, const std::string& kernel,
                   std::uint64_t index, Tick start, Tick end) {
  if (m_cta_written >= m_cta_budget) {
    ++m_cta_dropped;
    return;
  }
  ++m_cta_written;
  name_thread(sm, slot);
  event_prefix('X', sm + 1, slot, start);
  m_file.stream() << ",\"dur\":" << micros(end - start) << ",\"name\":" << json_quote(kernel)
                  << ",\"args\":{\"cta\":" << index << "}}";
}

void Timeline::drop_detail(Tick at) {
  ++m_detail_dropped;
  m_first_drop = std::min(m_first_drop, at);
}

bool Timeline::begin_detail(char phase, std::uint32_t sm, std::uint32_t slot, Tick ts) {
  if (!detail()) {
    drop_detail(ts);
    return false;
  }
  ++m_detail_written;
  name_thread(sm, slot);
  event_prefix(phase, sm + 1, slot, ts);
  return true;
}

void Timeline::end_detail(const char* name, const std::string& args_json) {
  m_file.stream() << ",\"name\":\"" << name << "\"";
  if (!args_json.empty()) m_file.stream() << ",\"args\":{" << args_json << "}";
  m_file.stream() << "}";
}

void Timeline::slice(std::uint32_t sm, std::uint32_t slot, const char* name, Tick start, Tick end,
                     const std::string& args_json) {
  if (!begin_detail('X', sm, slot, start)) return;
  m_file.stream() << ",\"dur\":" << micros(end - start);
  end_detail(name, args_json);
}

void Timeline::instant(std::uint32_t sm, std::uint32_t slot, const char* name, Tick at,
                       const std::string& args_json) {
  if (!begin_detail('i', sm, slot, at)) return;
  m_file.stream() << ",\"s\":\"t\"";
  end_detail(name, args_json);
}

void Timeline::finish() {
  std::ofstream& out = m_file.stream();
  out << "\n],\"metadata\":{\"config\":" << json_quote(m_config)
      << ",\"workload\":" << json_quote(m_workload) << ",\"kernels\":" << m_kernels
      << ",\"cta_slices_written\":" << m_cta_written << ",\"cta_slices_dropped\":" << m_cta_dropped
      << ",\"op_events_written\":" << m_detail_written
      << ",\"op_events_dropped\":" << m_detail_dropped << ",\"cta_budget\":" << m_cta_budget
      << ",\"op_event_budget\":" << m_detail_budget
      << ",\"bounding\":\"every kernel slice; CTA slices until cta_budget; op-level events "
         "(computes, waits, loads, stores) until op_event_budget, in simulation order\"}}\n";
  m_file.commit();
}

}  // namespace memwall
