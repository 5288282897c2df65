#pragma once
/// A std::allocator-compatible allocator that counts every byte it hands out, so that the
/// memory an algorithm's buffers request is measured exactly rather than estimated.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace memwall::explain {

/// The tally one or more CountingAllocators report to. All figures are bytes requested.
struct AllocationCounter {
  std::uint64_t current_bytes = 0;  ///< live now
  std::uint64_t peak_bytes = 0;  ///< largest current_bytes ever reached
  std::uint64_t total_bytes = 0;  ///< sum of every allocation (frees do not subtract)
  std::uint64_t allocations = 0;  ///< number of allocate() calls

  void on_allocate(std::uint64_t bytes) {
    current_bytes += bytes;
    total_bytes += bytes;
    ++allocations;
    if (current_bytes > peak_bytes) peak_bytes = current_bytes;
  }
  void on_deallocate(std::uint64_t bytes) { current_bytes -= bytes; }
};

/// Allocates with std::allocator<T> and reports each request to an AllocationCounter, which
/// must outlive every container using it.
template <class T>
class CountingAllocator {
 public:
  using value_type = T;

  explicit CountingAllocator(AllocationCounter& counter) : m_counter(&counter) {}
  template <class U>
  CountingAllocator(const CountingAllocator<U>& other) : m_counter(other.counter()) {}

  T* allocate(std::size_t n) {
    T* p = std::allocator<T>{}.allocate(n);
    m_counter->on_allocate(static_cast<std::uint64_t>(n) * sizeof(T));
    return p;
  }
  void deallocate(T* p, std::size_t n) {
    m_counter->on_deallocate(static_cast<std::uint64_t>(n) * sizeof(T));
    std::allocator<T>{}.deallocate(p, n);
  }

  AllocationCounter* counter() const { return m_counter; }
  template <class U>
  bool operator==(const CountingAllocator<U>& other) const {
    return m_counter == other.counter();
  }

 private:
  AllocationCounter* m_counter;
};

/// A vector of doubles whose storage is counted.
using CountedVector = std::vector<double, CountingAllocator<double>>;

}  // namespace memwall::explain
