#pragma once
/// A minimal thread pool loop for independent, index-addressed work (calibration's simulations and
/// load counts): results go to per-index slots, so the outcome does not depend on the thread count.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace memwall {

/// Runs `fn(i)` for every i in [0, n), on at most `threads` threads (the caller's included; 0
/// counts as 1). Every index runs even when another fails; then the error of the lowest failing
/// index is rethrown.
template <typename Fn>
void parallel_for(std::size_t n, unsigned threads, Fn fn) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  const unsigned count = static_cast<unsigned>(
      std::min<std::size_t>(std::max(1u, threads), std::max<std::size_t>(n, 1)));
  for (unsigned t = 1; t < count; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace memwall
