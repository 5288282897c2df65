/// The floor of a kernel's time as Nsight Compute measures it (gpu__time_duration, the figure the
/// calibration compares with): empty kernels of 1 to 33792 CTAs of 128 threads, and a kernel whose
/// one thread per CTA only reads its clock, each launched 5 times. Run under
/// `ncu --clock-control none --metrics gpu__time_duration.sum` (kernel_floor.sh); on its own it
/// prints the grid of every launch in order, which kernel_floor.py pairs with ncu's rows.
///
/// Usage: kernel_floor > launches.csv   (kernel,ctas,threads_per_cta,repeat)
#include <cstdio>

#include "ubench_common.cuh"

namespace {

__global__ void empty_kernel() {}

/// One thread per CTA stores its SM's clock (so that the CTA does some work that cannot be
/// removed): the smallest kernel that touches memory.
__global__ void clock_kernel(long long* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = clock64();
}

constexpr int kRepeats = 5;

}  // namespace

int main() {
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const int grids[] = {1, sms / 2, sms, 2 * sms, 8 * sms, 32 * sms, 128 * sms, 256 * sms};
  long long* out = nullptr;
  UB_CHECK(cudaMalloc(&out, sizeof(long long) * 256 * sms));
  std::printf("kernel,ctas,threads_per_cta,repeat\n");
  for (const int ctas : grids) {
    for (int r = 0; r < kRepeats; ++r) {
      empty_kernel<<<ctas, 128>>>();
      UB_CHECK_LAUNCH("empty_kernel");
      UB_CHECK(cudaDeviceSynchronize());
      std::printf("empty_kernel,%d,128,%d\n", ctas, r);
    }
    for (int r = 0; r < kRepeats; ++r) {
      clock_kernel<<<ctas, 128>>>(out);
      UB_CHECK_LAUNCH("clock_kernel");
      UB_CHECK(cudaDeviceSynchronize());
      std::printf("clock_kernel,%d,128,%d\n", ctas, r);
    }
  }
  cudaFree(out);
  return 0;
}
