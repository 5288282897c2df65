#pragma once
/// A persisting-L2 carve-out, so that memwall-cuda's kernels can be measured with less L2: a
/// part of the L2 is set aside for persisting accesses (cudaLimitPersistingL2CacheSize) and
/// filled with the lines of a "hog" buffer read through an access policy window that marks them
/// persisting. The window is set on the reserve's own stream only, and only the hog is read
/// there; the attention kernels run on the harness's stream, with no window, so their accesses
/// are normal and find the L2 less the persisting lines. Normal accesses use the set-aside part
/// only while persisting lines do not hold it, so the hog is read again (touch()) before the
/// kernels it is meant to crowd. Nothing on the GPU is changed beyond this process: the limit is
/// the current context's, and the destructor sets it back to 0.

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace memwall::cuda {

/// The persisting-L2 limits the device reports, in bytes.
struct L2PersistingLimits {
  std::uint64_t l2_bytes = 0;  ///< cudaDeviceProp::l2CacheSize
  std::uint64_t max_reserve_bytes = 0;  ///< cudaDevAttrMaxPersistingL2CacheSize
  std::uint64_t max_window_bytes = 0;  ///< cudaDevAttrMaxAccessPolicyWindowSize
};

/// Reads the limits of `device`. Throws CudaError when a query fails, or when the attribute and
/// cudaDeviceProp::persistingL2CacheMaxSize disagree.
L2PersistingLimits persisting_l2_limits(int device);

/// A persisting-L2 set-aside of the current context, with its hog and the hog's stream.
class L2Reserve {
 public:
  /// Sets the persisting-L2 limit to `bytes` (0: none; the limit is still set, to 0), reads back
  /// the limit granted, allocates a hog of the granted size and creates a non-blocking stream
  /// whose access policy window covers the hog: hitRatio 1, persisting on hit, streaming on miss.
  /// Throws UsageError when `bytes` exceeds the device's maximum and CudaError when a CUDA call
  /// fails or the window read back is not the one set.
  L2Reserve(int device, std::uint64_t bytes);
  /// Frees the hog, its stream and events, after resetting the persisting lines and the limit
  /// as reset() does (unchecked here: call reset() first to see its errors).
  ~L2Reserve();
  L2Reserve(const L2Reserve&) = delete;
  L2Reserve& operator=(const L2Reserve&) = delete;

  std::uint64_t requested_bytes() const { return m_requested_bytes; }
  /// The limit as cudaDeviceGetLimit(cudaLimitPersistingL2CacheSize) reads it after the set.
  std::uint64_t granted_bytes() const { return m_granted_bytes; }
  /// The hog's size: the granted limit (0 when none was granted).
  std::uint64_t hog_bytes() const { return m_hog_bytes; }
  const L2PersistingLimits& limits() const { return m_limits; }
  /// The window as cudaStreamGetAttribute reads it back (base address and bytes).
  const cudaAccessPolicyWindow& window() const { return m_window; }
  const void* hog() const { return m_hog; }

  /// Makes the hog's lines persisting before the work queued on `stream` next: waits for what is
  /// queued on `stream`, reads the whole hog on the reserve's stream (the window applies there),
  /// and makes `stream` wait for that read. Asynchronous; does nothing when the hog is empty.
  void touch(cudaStream_t stream);

  /// Waits for the device, resets every persisting line to normal (cudaCtxResetPersistingL2Cache)
  /// and sets the limit back to 0. Throws CudaError when a call fails.
  void reset();

 private:
  void release() noexcept;

  L2PersistingLimits m_limits;
  std::uint64_t m_requested_bytes = 0;
  std::uint64_t m_granted_bytes = 0;
  std::uint64_t m_hog_bytes = 0;
  cudaAccessPolicyWindow m_window{};
  void* m_hog = nullptr;
  int* m_sink = nullptr;
  cudaStream_t m_stream = nullptr;
  cudaEvent_t m_before = nullptr;
  cudaEvent_t m_after = nullptr;
};

/// One measurement of the L2 probe.
struct L2ProbeRow {
  std::string probe;  ///< "reread": a buffer read twice; "hog": the hog read after a flush
  std::uint64_t bytes = 0;  ///< bytes read by the timed kernel
  double time_s = 0.0;  ///< median CUDA-event time of the timed kernel
  int repeats = 0;
};

/// Measures how much of the L2 normal accesses get under `reserve`, on `stream`, with normal
/// accesses only (as the attention kernels make them). For each size in `reread_bytes`, `repeats`
/// times: flush() (queued on `stream`), reserve.touch(stream), a read of a buffer of that size
/// (l2_probe_fill_kernel), then the same read again, timed (l2_probe_reread_kernel): the second
/// read hits in the L2 as far as the buffer fits beside the hog's persisting lines. Then, when
/// the hog is not empty: flush(), touch, flush() again, and a timed normal read of the hog
/// (l2_probe_hog_kernel): fast if the persisting lines outlived a flush several times the L2.
/// Under ncu (--cache-control none) the DRAM bytes of the two timed kernels say the same without
/// timing. Throws CudaError when a CUDA call fails.
std::vector<L2ProbeRow> probe_l2(L2Reserve& reserve, cudaStream_t stream,
                                 const std::function<void()>& flush,
                                 const std::vector<std::uint64_t>& reread_bytes, int repeats);

}  // namespace memwall::cuda
