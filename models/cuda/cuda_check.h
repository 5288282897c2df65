#pragma once
/// Turns CUDA runtime failures into memwall errors: every CUDA call of the harness and the
/// launchers goes through check_cuda, and every launch is followed by check_launch.

#include <cuda_runtime.h>

#include <cstdio>
#include <exception>
#include <string>

#include "sim/core/error.h"

namespace memwall::cuda {

/// A CUDA runtime call failed (no device, out of memory, a kernel fault). Exit code 1.
class CudaError : public Error {
 public:
  explicit CudaError(const std::string& message) : Error(message, kExitFailure) {}
};

/// Throws CudaError naming `what` and CUDA's reason unless `status` is cudaSuccess.
inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw CudaError(std::string(what) + ": " + cudaGetErrorName(status) + ": " +
                    cudaGetErrorString(status));
  }
}

/// Checks the launch just made (configuration errors) without synchronizing.
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

/// The main() of a models/cuda program: `run(argc, argv)`, with an Error reported as
/// "PROGRAM: error: what" and its exit code, any other exception likewise with exit code 1.
template <class Run>
int guarded_main(const char* program, Run run, int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return kExitFailure;
  }
}

}  // namespace memwall::cuda
