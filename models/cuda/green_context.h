#pragma once
/// A green context (CUDA driver API): a share of the GPU's SMs that memwall-cuda's kernels run on,
/// so that one measurement can be repeated on fewer SMs. While one exists it is the calling
/// thread's current context, so the runtime calls of the harness (cudaMalloc, launches, events)
/// go to it; kernels launched on stream() run on its SMs only. Nothing on the GPU is changed:
/// the partition ends with the green context (at the latest with the process).

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace memwall::cuda {

/// A green context of a requested number of SMs of one device, current on the calling thread.
class GreenContext {
 public:
  /// Creates a green context of at least `sm_count` SMs of `device` and makes it current. All the
  /// device's SMs take the device's SM resource unsplit; fewer split it with
  /// cuDevSmResourceSplitByCount, ignoring SM co-scheduling (the finest granularity the driver
  /// offers; the kernels use no thread-block clusters; the default split where the driver refuses
  /// that), which rounds the count up to the driver's granularity: sm_count() is what the green
  /// context actually holds. Throws UsageError when
  /// `sm_count` is not in [1, the device's SMs] and CudaError when a driver call fails.
  GreenContext(int device, int sm_count);
  /// Destroys the stream and the green context, and makes the previous context current again.
  ~GreenContext();
  GreenContext(const GreenContext&) = delete;
  GreenContext& operator=(const GreenContext&) = delete;

  /// The SM count asked for.
  int requested_sm_count() const { return m_requested_sm_count; }
  /// The SMs the green context holds, as cuGreenCtxGetDevResource reports them.
  int sm_count() const { return m_sm_count; }
  /// The device's SMs, and its smallest partition and partition alignment in SMs (default split).
  int device_sm_count() const { return m_device_sm_count; }
  int min_partition_sm_count() const { return m_min_partition_sm_count; }
  int partition_alignment_sm_count() const { return m_partition_alignment_sm_count; }
  /// How the SMs were chosen: the whole device resource, or a split with which flags.
  const std::string& how() const { return m_how; }
  /// A non-blocking stream in the green context (a CUstream is a cudaStream_t).
  cudaStream_t stream() const { return m_stream; }

 private:
  void release() noexcept;

  int m_requested_sm_count = 0;
  int m_sm_count = 0;
  int m_device_sm_count = 0;
  int m_min_partition_sm_count = 0;
  int m_partition_alignment_sm_count = 0;
  std::string m_how;
  CUcontext m_previous = nullptr;
  CUgreenCtx m_green = nullptr;
  CUstream m_stream = nullptr;
};

/// The distinct SM ids (%smid), ascending, that a grid of many short CTAs launched on `stream`
/// ran on: in a green context, the SMs it really gets (the driver may lend more than it holds).
std::vector<int> sms_used(cudaStream_t stream);

}  // namespace memwall::cuda
