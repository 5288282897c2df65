#pragma once
/// Clean interruption: Ctrl-C (SIGINT) or SIGTERM sets a flag that long loops poll. A loop that
/// sees it throws `Interrupted`, which unwinds (removing unfinished output files, see
/// atomic_file.h) and makes `memwall` exit with code 130 and a clear message.

#include "sim/core/error.h"

namespace memwall {

/// Thrown by `throw_if_interrupted` once SIGINT/SIGTERM has arrived.
class Interrupted : public Error {
 public:
  Interrupted() : Error("interrupted (SIGINT); no partial output was left behind", kExitInterrupted) {}
};

/// Installs the SIGINT/SIGTERM handlers (idempotent). Called once by main.
void install_interrupt_handlers();

/// True once SIGINT or SIGTERM has been received. Cheap: a relaxed atomic load.
bool interrupt_requested();

/// Throws Interrupted if a signal has been received. Poll it at least every ~10 ms of work.
void throw_if_interrupted();

/// Sets the flag as a signal would (for tests).
void request_interrupt_for_testing();
/// Clears the flag (for tests).
void clear_interrupt_for_testing();

}  // namespace memwall
