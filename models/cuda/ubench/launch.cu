/// Launch overhead: back-to-back launches of an empty kernel (one 32-thread CTA) on one stream,
/// the same launches replayed from a CUDA graph, the host round trip of one launch plus a stream
/// synchronize, and empty kernels of num_sms * k CTAs of 128 threads (the slope over k gives the
/// rate at which CTAs are launched).
///
/// Usage: launch > launch.csv
///   test,ctas,threads_per_cta,launches,us_per_launch (median of 5 batches; round trip: median
///   of 1000 single launches)
#include <chrono>
#include <cstdio>
#include <vector>

#include "ubench_common.cuh"

namespace {

constexpr int kBatches = 5;

__global__ void empty_kernel() {}

/// Median over kBatches of the event time of `launches` launches of `ctas` x `threads`.
double us_per_launch(cudaStream_t stream, int ctas, int threads, int launches) {
  ubench::EventTimer timer;
  std::vector<double> us;
  for (int b = 0; b <= kBatches; ++b) {  // batch 0 warms up
    timer.start(stream);
    for (int i = 0; i < launches; ++i) {
      empty_kernel<<<ctas, threads, 0, stream>>>();
      UB_CHECK_LAUNCH("empty_kernel");
    }
    const float ms = timer.stop_ms(stream);
    if (b > 0) us.push_back(1e3 * double(ms) / launches);
  }
  return ubench::median(us);
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int num_sms = prop.multiProcessorCount;
  cudaStream_t stream = nullptr;
  UB_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("test,ctas,threads_per_cta,launches,us_per_launch\n");

  std::printf("stream,1,32,2000,%.3f\n", us_per_launch(stream, 1, 32, 2000));

  constexpr int kGraphLaunches = 1000;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  UB_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < kGraphLaunches; ++i) {
    empty_kernel<<<1, 32, 0, stream>>>();
    UB_CHECK_LAUNCH("empty_kernel (capture)");
  }
  UB_CHECK(cudaStreamEndCapture(stream, &graph));
  UB_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  {
    ubench::EventTimer timer;
    std::vector<double> us;
    for (int b = 0; b <= kBatches; ++b) {
      timer.start(stream);
      UB_CHECK(cudaGraphLaunch(exec, stream));
      const float ms = timer.stop_ms(stream);
      if (b > 0) us.push_back(1e3 * double(ms) / kGraphLaunches);
    }
    std::printf("graph,1,32,%d,%.3f\n", kGraphLaunches, ubench::median(us));
  }
  UB_CHECK(cudaGraphExecDestroy(exec));
  UB_CHECK(cudaGraphDestroy(graph));

  {
    std::vector<double> us;
    for (int i = 0; i < 1100; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      empty_kernel<<<1, 32, 0, stream>>>();
      UB_CHECK_LAUNCH("empty_kernel");
      UB_CHECK(cudaStreamSynchronize(stream));
      const auto t1 = std::chrono::steady_clock::now();
      if (i >= 100) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::printf("round_trip,1,32,1000,%.3f\n", ubench::median(us));
  }

  for (int k : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
    const int ctas = num_sms * k;
    std::printf("ctas,%d,128,200,%.3f\n", ctas, us_per_launch(stream, ctas, 128, 200));
    std::fflush(stdout);
  }
  UB_CHECK(cudaStreamDestroy(stream));
  return 0;
}
