// CUB's float sums at its determinism levels (CCCL >= 3.5 headers, e.g.
// PyPI's nvidia-cuda-cccl, first on nvcc's include path), through the
// single-call environment API: cub::DeviceReduce::Reduce with
// cuda::execution::require(determinism::run_to_run | gpu_to_gpu). The same
// two inputs as `bench exact`: the values 1, 2, 3 (cub_reduce.cu's) and
// uniform values in (-1, 1) (the same hash), so the rows sit beside ours.
// Prints impl,type,data,what,n,median_us,gbps and, per case, the result's
// bits (to compare with the exact sum's).
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

template <class T> __global__ void fill(T* p, size_t n, int uniform) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i < n; i += (size_t)gridDim.x * blockDim.x) {
    if (uniform) {
      unsigned long long h = (unsigned long long)i * 0x9e3779b97f4a7c15ull ^ 0x5851f42d4c957f2dull;
      h ^= h >> 29; h *= 0xbf58476d1ce4e5b9ull; h ^= h >> 32;
      float m = (float)(h & 0xffffff) / (float)(1u << 24);
      p[i] = (T)((h >> 63) ? -m : m);
    } else {
      unsigned h = (unsigned)(i * 2654435761u) ^ 7u; h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15;
      p[i] = (T)(1 + (h % 3));
    }
  }
}

template <class Run> double time_case(Run run, int iters) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int w = 0; w < 3; ++w) run(w);
  CK(cudaDeviceSynchronize());
  for (int i = 0; i < iters; ++i) {
    CK(cudaEventRecord(a)); run(i); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float t; CK(cudaEventElapsedTime(&t, a, b)); ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1000.0;
}

template <class T> const char* tname();
template <> const char* tname<float>() { return "f32"; }
template <> const char* tname<double>() { return "f64"; }

template <class T, class Env> void run_sum(const T* in, T* out, size_t n, Env env) {
  CK(cub::DeviceReduce::Reduce(in, out, (int64_t)n, cuda::std::plus<T>{}, (T)0, env));
}

template <class T> void bench(const std::vector<size_t>& sizes) {
  for (size_t n : sizes) {
    size_t bytes = n * sizeof(T);
    int nbuf = (int)std::max<size_t>(1, std::min<size_t>(64, (256ull << 20) / std::max<size_t>(bytes, 1)));
    std::vector<T*> bufs(nbuf);
    for (int uniform = 0; uniform < 2; ++uniform) {
      for (auto& p : bufs) { CK(cudaMalloc(&p, bytes)); fill<T><<<1024, 256>>>(p, n, uniform); }
      T* out; CK(cudaMalloc(&out, sizeof(T)));
      int iters = n < (1u << 24) ? 200 : 30;
      for (int level = 0; level < 2; ++level) {
        auto run = [&](int i) {
          const T* in = bufs[i % nbuf];
          if (level == 0) run_sum(in, out, n, cuda::execution::require(cuda::execution::determinism::run_to_run));
          else run_sum(in, out, n, cuda::execution::require(cuda::execution::determinism::gpu_to_gpu));
        };
        double us = time_case(run, iters);
        CK(cudaGetLastError());
        T host; CK(cudaMemcpy(&host, out, sizeof(T), cudaMemcpyDeviceToHost));
        unsigned long long bits = 0; memcpy(&bits, &host, sizeof(T));
        printf("cub,%s,%s,%s,%zu,%.2f,%.1f,%.17g,0x%llx\n", tname<T>(), uniform ? "uniform" : "small",
               level ? "gpu_to_gpu" : "run_to_run", n, us, bytes / us / 1e3, (double)host, bits);
      }
      for (auto p : bufs) cudaFree(p);
      cudaFree(out);
    }
  }
}

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("# %s sms=%d cccl=%d\n", p.name, p.multiProcessorCount, CCCL_VERSION);
  std::vector<size_t> sizes;
  for (int e = 20; e <= 30; e += 2) sizes.push_back((size_t)1 << e);
  bench<float>(sizes);
  std::vector<size_t> s64; for (size_t s : sizes) if (s <= (1ull << 29)) s64.push_back(s);
  bench<double>(s64);
  return 0;
}
