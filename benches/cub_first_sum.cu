// The CUB side of the cold-start measurement (scripts/cold_start.sh): the
// same work as examples/first_sum.rs (a context, 1000 floats copied to the
// GPU, one sum, the result back and printed), with cub::DeviceReduce::Sum.
#include <cub/cub.cuh>
#include <cstdio>

#define CHECK(call)                                                         \
  do {                                                                      \
    cudaError_t e = (call);                                                 \
    if (e != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));       \
      return 1;                                                             \
    }                                                                       \
  } while (0)

int main() {
  const int n = 1000;
  float host[n];
  for (int i = 0; i < n; ++i) host[i] = float(i + 1);
  float *in = nullptr, *out = nullptr;
  void *temp = nullptr;
  size_t temp_bytes = 0;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, sizeof(float)));
  CHECK(cudaMemcpy(in, host, n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n));
  CHECK(cudaMalloc(&temp, temp_bytes));
  CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n));
  float sum = 0;
  CHECK(cudaMemcpy(&sum, out, sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("%g\n", sum);
  return sum == 500500.0f ? 0 : 1;
}
