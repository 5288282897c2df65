#pragma once
/// Clean interruption: Ctrl-C (SIGINT) or SIGTERM sets a flag that long loops poll. A loop that
/// sees it throws `Interrupted`, which unwinds (removing unfinished output files, see
/// atomic_file.h) and makes `memwall` exit with 128 + the signal's number (130 for SIGINT, 143
/// for SIGTERM, as a shell reports a process the signal killed) and a message naming it.

#include "sim/core/error.h"

namespace memwall {

/// The signal received (SIGINT or SIGTERM), or 0 before any.
int interrupt_signal();

/// Thrown by `throw_if_interrupted` once SIGINT/SIGTERM has arrived; names the signal and exits
/// with 128 + its number (130 when none is recorded, as for a test's request).
class Interrupted : public Error {
 public:
  Interrupted();
};

/// Installs the SIGINT/SIGTERM handlers (idempotent). Called once by main.
void install_interrupt_handlers();

/// True once SIGINT or SIGTERM has been received. Cheap: a relaxed atomic load.
bool interrupt_requested();

/// Throws Interrupted if a signal has been received. Poll it at least every ~10 ms of work.
void throw_if_interrupted();

/// Sets the flag as SIGINT would, without a signal number (interrupt_signal() stays 0). For tests,
/// and for a host that catches signals itself: the Python module sets it on Python's Ctrl-C.
void request_interrupt();
/// Clears the flag and the signal number, so that later work runs again (tests; the Python
/// module, once an interrupted call has unwound).
void clear_interrupt();

}  // namespace memwall
