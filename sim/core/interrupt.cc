#include "sim/core/interrupt.h"

#include <atomic>
#include <csignal>

namespace memwall {
namespace {

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "signal handlers need a lock-free flag");

extern "C" void on_signal(int /*signal*/) { g_interrupted.store(true, std::memory_order_relaxed); }

}  // namespace

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

void request_interrupt_for_testing() { g_interrupted.store(true, std::memory_order_relaxed); }
void clear_interrupt_for_testing() { g_interrupted.store(false, std::memory_order_relaxed); }

}  // namespace memwall
