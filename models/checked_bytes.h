#pragma once
/// Byte-count arithmetic for parameter checks: a product that would not fit in 64 bits is a
/// UsageError naming what was being sized, never a wrap-around.

#include <cstdint>
#include <initializer_list>
#include <string>

#include "sim/core/error.h"

namespace memwall {

/// a·b, or UsageError "`what` is too large: its byte count overflows 64 bits".
inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw UsageError(what + " is too large: its byte count overflows 64 bits");
  }
  return r;
}

/// The product of `factors`, checked as above.
inline std::uint64_t checked_mul(std::initializer_list<std::uint64_t> factors,
                                 const std::string& what) {
  std::uint64_t r = 1;
  for (std::uint64_t f : factors) r = checked_mul(r, f, what);
  return r;
}

}  // namespace memwall
