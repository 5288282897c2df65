#include "models/cuda/green_context.h"

#include <algorithm>
#include <string>
#include <vector>

#include "models/cuda/cuda_check.h"
#include "sim/core/error.h"

namespace memwall::cuda {
namespace {

/// Throws CudaError naming `what` and the driver's reason unless `status` is CUDA_SUCCESS.
void check_cu(CUresult status, const char* what) {
  if (status != CUDA_SUCCESS) {
    const char* name = nullptr;
    const char* text = nullptr;
    cuGetErrorName(status, &name);
    cuGetErrorString(status, &text);
    throw CudaError(std::string(what) + ": " + (name != nullptr ? name : "unknown CUresult") +
                    ": " + (text != nullptr ? text : ""));
  }
}

constexpr int kMaxSmId = 1024;  // %smid is below %nsmid, far under this on any GPU
constexpr int kProbeCtas = 4096;  // enough that every SM of any partition gets some
constexpr int kProbeThreads = 32;
constexpr long long kProbeSpinCycles = 20000;  // ~10 us per CTA: CTAs spread over all SMs

/// seen[%smid] = 1 for the SM each CTA runs on; each CTA then spins so the others spread out.
__global__ void record_smid_kernel(int* seen) {
  unsigned smid = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (threadIdx.x == 0 && smid < kMaxSmId) {
    seen[smid] = 1;
  }
  const long long start = clock64();
  while (clock64() - start < kProbeSpinCycles) {}
}

}  // namespace

GreenContext::GreenContext(int device, int sm_count) : m_requested_sm_count(sm_count) {
  // The primary context first, as cuGreenCtxCreate advises (cudaSetDevice initialises it).
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  check_cu(cuInit(0), "cuInit");
  CUdevice dev = 0;
  check_cu(cuDeviceGet(&dev, device), "cuDeviceGet");
  check_cu(cuCtxGetCurrent(&m_previous), "cuCtxGetCurrent");

  CUdevResource device_sms{};
  check_cu(cuDeviceGetDevResource(dev, &device_sms, CU_DEV_RESOURCE_TYPE_SM),
           "cuDeviceGetDevResource(SM)");
  m_device_sm_count = static_cast<int>(device_sms.sm.smCount);
  m_min_partition_sm_count = static_cast<int>(device_sms.sm.minSmPartitionSize);
  m_partition_alignment_sm_count = static_cast<int>(device_sms.sm.smCoscheduledAlignment);
  if (sm_count < 1 || sm_count > m_device_sm_count) {
    throw UsageError("--sms: the device has " + std::to_string(m_device_sm_count) +
                     " SMs, asked for " + std::to_string(sm_count));
  }

  CUdevResource group{};
  if (sm_count == m_device_sm_count) {
    group = device_sms;
    m_how = "whole device resource";
  } else {
    // The finest split first; a driver that refuses it gets the default (co-scheduled) one.
    unsigned groups = 1;
    const unsigned min_count = static_cast<unsigned>(sm_count);
    m_how = "split ignoring SM co-scheduling";
    if (cuDevSmResourceSplitByCount(&group, &groups, &device_sms, nullptr,
                                    CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING,
                                    min_count) != CUDA_SUCCESS) {
      groups = 1;
      m_how = "default split (the finer one was refused)";
      check_cu(cuDevSmResourceSplitByCount(&group, &groups, &device_sms, nullptr, 0, min_count),
               "cuDevSmResourceSplitByCount");
    }
    if (groups != 1) {
      throw CudaError("cuDevSmResourceSplitByCount: " + std::to_string(groups) +
                      " groups of at least " + std::to_string(sm_count) + " SMs, expected 1");
    }
  }

  try {
    CUdevResourceDesc desc = nullptr;
    check_cu(cuDevResourceGenerateDesc(&desc, &group, 1), "cuDevResourceGenerateDesc");
    check_cu(cuGreenCtxCreate(&m_green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM),
             "cuGreenCtxCreate");
    CUcontext ctx = nullptr;
    check_cu(cuCtxFromGreenCtx(&ctx, m_green), "cuCtxFromGreenCtx");
    check_cu(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    check_cu(cuGreenCtxStreamCreate(&m_stream, m_green, CU_STREAM_NON_BLOCKING, 0),
             "cuGreenCtxStreamCreate");
    CUdevResource held{};
    check_cu(cuGreenCtxGetDevResource(m_green, &held, CU_DEV_RESOURCE_TYPE_SM),
             "cuGreenCtxGetDevResource(SM)");
    m_sm_count = static_cast<int>(held.sm.smCount);
  } catch (...) {
    release();
    throw;
  }
}

GreenContext::~GreenContext() { release(); }

void GreenContext::release() noexcept {
  // Errors here are not actionable (the process is ending or already failing): ignored.
  if (m_stream != nullptr) {
    cuStreamDestroy(m_stream);
    m_stream = nullptr;
  }
  if (m_green != nullptr) {
    cuCtxSetCurrent(m_previous);
    cuGreenCtxDestroy(m_green);
    m_green = nullptr;
  }
}

std::vector<int> sms_used(cudaStream_t stream) {
  int* seen = nullptr;
  check_cuda(cudaMalloc(&seen, kMaxSmId * sizeof(int)), "cudaMalloc");
  std::vector<int> host(kMaxSmId, 0);
  try {
    check_cuda(cudaMemsetAsync(seen, 0, kMaxSmId * sizeof(int), stream), "cudaMemsetAsync");
    record_smid_kernel<<<kProbeCtas, kProbeThreads, 0, stream>>>(seen);
    check_launch("record_smid_kernel");
    check_cuda(
        cudaMemcpyAsync(host.data(), seen, kMaxSmId * sizeof(int), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream), "sms_used");
  } catch (...) {
    cudaFree(seen);
    throw;
  }
  check_cuda(cudaFree(seen), "cudaFree");
  std::vector<int> ids;
  for (int i = 0; i < kMaxSmId; ++i) {
    if (host[static_cast<std::size_t>(i)] != 0) ids.push_back(i);
  }
  return ids;
}

}  // namespace memwall::cuda
