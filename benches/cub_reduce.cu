// In this repository since 2026-11-26: copied unchanged (below this comment)
// from the project's shared benchmark folder (shared/bench/cub_reduce.cu).
// Anchor benchmark: CUB DeviceReduce (the reference GPU reduction) on the same
// sizes and types the project's benches use. Prints one CSV row per case:
// impl,type,op,n,median_us,gbps
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <random>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

struct ProdOp { template <class T> __device__ T operator()(T a, T b) const { return a * b; } };

template <class T> __global__ void fill(T* p, size_t n, unsigned seed) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)(i * 2654435761u) ^ seed; h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15;
    p[i] = (T)(1 + (h % 3));  // small non-zero values: never time on zeros
  }
}

template <class T, class Run>
double time_case(Run run, int iters) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int w = 0; w < 3; ++w) run(w);
  CK(cudaDeviceSynchronize());
  for (int i = 0; i < iters; ++i) {
    CK(cudaEventRecord(a)); run(i); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float t; CK(cudaEventElapsedTime(&t, a, b)); ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  cudaEventDestroy(a); cudaEventDestroy(b);
  return ms[ms.size() / 2] * 1000.0;
}

template <class T> const char* tname();
template <> const char* tname<float>() { return "f32"; }
template <> const char* tname<double>() { return "f64"; }
template <> const char* tname<int>() { return "i32"; }
template <> const char* tname<unsigned long long>() { return "u64"; }

template <class T>
void bench_type(const std::vector<size_t>& sizes) {
  for (size_t n : sizes) {
    // rotate among enough buffers that the working set is >= 4x L2 (60 MB) when n is small
    size_t bytes = n * sizeof(T);
    int nbuf = (int)std::max<size_t>(1, std::min<size_t>(64, (256ull << 20) / std::max<size_t>(bytes, 1)));
    std::vector<T*> bufs(nbuf);
    for (auto& p : bufs) { CK(cudaMalloc(&p, bytes)); fill<T><<<1024, 256>>>(p, n, 7); }
    T* out; CK(cudaMalloc(&out, sizeof(T)));
    void* tmp = nullptr; size_t tmp_bytes = 0, t2 = 0;
    cub::DeviceReduce::Sum(nullptr, tmp_bytes, bufs[0], out, (int64_t)n);
    cub::DeviceReduce::Max(nullptr, t2, bufs[0], out, (int64_t)n); tmp_bytes = std::max(tmp_bytes, t2);
    cub::DeviceReduce::Min(nullptr, t2, bufs[0], out, (int64_t)n); tmp_bytes = std::max(tmp_bytes, t2);
    cub::DeviceReduce::Reduce(nullptr, t2, bufs[0], out, (int64_t)n, ProdOp{}, (T)1); tmp_bytes = std::max(tmp_bytes, t2);
    CK(cudaMalloc(&tmp, tmp_bytes));
    int iters = n < (1u << 24) ? 200 : 30;
    const char* ops[4] = {"sum", "max", "min", "product"};
    for (int o = 0; o < 4; ++o) {
      auto run = [&](int i) {
        T* in = bufs[i % nbuf]; size_t tb = tmp_bytes;
        if (o == 0) cub::DeviceReduce::Sum(tmp, tb, in, out, (int64_t)n);
        if (o == 1) cub::DeviceReduce::Max(tmp, tb, in, out, (int64_t)n);
        if (o == 2) cub::DeviceReduce::Min(tmp, tb, in, out, (int64_t)n);
        if (o == 3) cub::DeviceReduce::Reduce(tmp, tb, in, out, (int64_t)n, ProdOp{}, (T)1);
      };
      double us = time_case<T>(run, iters);
      CK(cudaGetLastError());
      printf("cub,%s,%s,%zu,%.2f,%.1f\n", tname<T>(), ops[o], n, us, bytes / us / 1e3);
    }
    for (auto p : bufs) cudaFree(p);
    cudaFree(out); cudaFree(tmp);
  }
}

__global__ void copyk(const float4* __restrict__ a, float4* __restrict__ b, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) b[i] = a[i];
}

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("# %s sms=%d l2=%dMB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
  // copy bandwidth ceiling (bytes read + written)
  size_t n4 = (size_t)1 << 28; float4 *a, *b; CK(cudaMalloc(&a, n4 * 16)); CK(cudaMalloc(&b, n4 * 16));
  CK(cudaMemset(a, 1, n4 * 16));
  double us = time_case<float>([&](int) { copyk<<<p.multiProcessorCount * 8, 512>>>(a, b, n4); }, 20);
  printf("copy,f32x4,copy,%zu,%.2f,%.1f\n", n4 * 4, us, 2.0 * n4 * 16 / us / 1e3);
  us = time_case<float>([&](int) { cudaMemcpyAsync(b, a, n4 * 16, cudaMemcpyDeviceToDevice); }, 20);
  printf("memcpy,u8,copy,%zu,%.2f,%.1f\n", n4 * 16, us, 2.0 * n4 * 16 / us / 1e3);
  cudaFree(a); cudaFree(b);
  std::vector<size_t> sizes;
  for (int e = 10; e <= 30; e += 2) sizes.push_back((size_t)1 << e);
  sizes.push_back(100000000);  // the seeds' headline size (100M elements)
  bench_type<float>(sizes);
  bench_type<int>(sizes);
  std::vector<size_t> s64; for (size_t s : sizes) if (s <= (1ull << 29)) s64.push_back(s);
  bench_type<double>(s64);
  return 0;
}
