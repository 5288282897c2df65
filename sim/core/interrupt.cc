#include "sim/core/interrupt.h"

#include <atomic>
#include <csignal>
#include <string>

namespace memwall {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free, "signal handlers need a lock-free flag");
static_assert(std::atomic<int>::is_always_lock_free, "signal handlers need a lock-free number");

extern "C" void on_signal(int signal) {
  int none = 0;
  g_signal.compare_exchange_strong(none, signal,
                                   std::memory_order_relaxed);  // the first one counts
  g_interrupted.store(true, std::memory_order_relaxed);
}

const char* signal_name(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    default: return "SIGINT";
  }
}

}  // namespace

int interrupt_signal() { return g_signal.load(std::memory_order_relaxed); }

Interrupted::Interrupted()
    : Error(std::string("interrupted (") + signal_name(interrupt_signal()) +
                "); no partial output was left behind",
            interrupt_signal() == 0 ? kExitInterrupted : 128 + interrupt_signal()) {}

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interrupt_requested() { return g_interrupted.load(std::memory_order_relaxed); }

void throw_if_interrupted() {
  if (interrupt_requested()) throw Interrupted();
}

void request_interrupt() { g_interrupted.store(true, std::memory_order_relaxed); }
void clear_interrupt() {
  g_interrupted.store(false, std::memory_order_relaxed);
  g_signal.store(0, std::memory_order_relaxed);
}

}  // namespace memwall
