// NVIDIA CUB's DeviceReduce for the 64-bit integer types that
// benches/cub_reduce.cu does not print (i64 and u64), run by that
// file's own code: the same inputs, buffer rotation, timing (3 warm-up calls,
// device events around each call, the median) and sizes (its 64-bit list:
// 2^10 ... 2^28 and 10^8). Its main() is renamed and not run.
//
// Build next to cub_reduce.cu (it is in benches/; scripts/device_run.sh
// copies both into .device-bin/):
//   nvcc -O3 -arch=sm_90 -std=c++17 -I<folder of cub_reduce.cu> cub_reduce_64.cu
#define main cub_reduce_main
#include "cub_reduce.cu"
#undef main

template <> const char* tname<long long>() { return "i64"; }

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("# %s sms=%d l2=%dMB, 64-bit integers\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
  std::vector<size_t> sizes;
  for (int e = 10; e <= 28; e += 2) sizes.push_back((size_t)1 << e);
  sizes.push_back(100000000);
  bench_type<long long>(sizes);
  bench_type<unsigned long long>(sizes);
  return 0;
}
