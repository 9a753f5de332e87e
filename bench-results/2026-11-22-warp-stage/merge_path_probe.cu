// A probe, not library code: how fast could a merge-path division of the work
// reduce short random segments on this GPU? Each warp takes a contiguous range
// of the elements (not of the segments); per 512-element step, lane l folds
// elements [16l, 16l + 16) of the step (four 16-byte loads, coalesced per
// warp) segment by segment, with the step's segment boundaries staged in
// shared memory; pieces that cross lanes are joined by a segmented scan over
// the lanes, and the piece that crosses into the next step is carried.
// Two ways to load: directly (lane l's four vectors are its own 64 bytes, so
// each warp load instruction spans 2 KiB) or transposed (each warp load
// instruction reads 512 contiguous bytes; shared memory hands each lane its
// 16 elements).
//
// Left out, so its results are wrong for the segments that cross from one
// warp's range into the next (about one per warp, counted and excluded from
// the check): the cross-warp fix-up (each warp's first and last piece,
// combined in warp order by a look-back or by the last block). Offsets must
// be sorted; f32 sums only. Build: nvcc -O3 -arch=sm_90 -std=c++17.
#include <cub/cub.cuh>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cstdint>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

constexpr int STEP = 512;      // elements per warp step: 32 lanes x 16
constexpr int PIECE = 16;      // elements per lane per step
constexpr int BATCH = 160;     // boundaries of one step the warp stages
constexpr int WARPS = 16;      // per 512-thread block
constexpr int TRANSPOSED_BYTES = WARPS * 640 * 4;

template <bool TRANSPOSE>
__global__ void __launch_bounds__(512, 2)
segmented_merge(const float* __restrict__ x, const unsigned long long* __restrict__ off,
                long long segments, long long n, long long range, float* out, int* overflow) {
  __shared__ unsigned long long staged[WARPS][BATCH];
  const int lane = threadIdx.x & 31, warp_in_block = threadIdx.x >> 5;
  extern __shared__ float4 dynamic[];  // TRANSPOSE: WARPS x 640 floats
  float* const transposed = reinterpret_cast<float*>(dynamic) + warp_in_block * 640;
  const long long warp = (long long)blockIdx.x * WARPS + warp_in_block;
  const long long r0 = warp * range, r1 = min(n, r0 + range);
  if (r0 >= r1) return;
  unsigned long long* B = staged[warp_in_block];

  // The segment holding element r0: the last s < segments with off[s] <= r0.
  long long s = 0;
  if (lane == 0) {
    long long lo = 0, hi = segments - 1;
    while (lo < hi) {
      long long mid = (lo + hi + 1) / 2;
      if (off[mid] <= (unsigned long long)r0) lo = mid; else hi = mid - 1;
    }
    s = lo;
  }
  s = __shfl_sync(0xffffffff, s, 0);
  float carry = 0.f;  // the step's first segment, accumulated so far

  for (long long c0 = r0; c0 < r1; c0 += STEP) {
    const long long p0 = c0 + (long long)PIECE * lane;
    float v[PIECE];
    if (TRANSPOSE) {
      // Coalesced: load k of lane l is float4 number 32k + l of the step;
      // through shared memory (80 bytes per 16-element piece: no bank
      // conflicts) to lane l's 16 contiguous elements.
      #pragma unroll
      for (int k = 0; k < PIECE / 4; ++k) {
        const long long q0 = c0 + 4 * (32 * k + lane);
        float4 q = make_float4(0.f, 0.f, 0.f, 0.f);
        if (q0 < r1) q = __ldg(reinterpret_cast<const float4*>(x + q0));
        const int piece = (32 * k + lane) / 4, part = (32 * k + lane) % 4;
        *reinterpret_cast<float4*>(transposed + piece * 20 + part * 4) = q;
      }
      __syncwarp();
      #pragma unroll
      for (int k = 0; k < PIECE / 4; ++k) {
        float4 q = *reinterpret_cast<const float4*>(transposed + lane * 20 + k * 4);
        v[4 * k] = q.x; v[4 * k + 1] = q.y; v[4 * k + 2] = q.z; v[4 * k + 3] = q.w;
      }
    } else {
      #pragma unroll
      for (int k = 0; k < PIECE / 4; ++k) {
        float4 q = make_float4(0.f, 0.f, 0.f, 0.f);
        if (p0 + 4 * k < r1) q = __ldg(reinterpret_cast<const float4*>(x + p0) + k);
        v[4 * k] = q.x; v[4 * k + 1] = q.y; v[4 * k + 2] = q.z; v[4 * k + 3] = q.w;
      }
    }
    // B[k] = off[s + 1 + k]: the end of segment s + k.
    for (int k = lane; k < BATCH; k += 32) {
      long long i = s + 1 + k;
      B[k] = i <= segments ? off[i] : ~0ull;
    }
    __syncwarp();
    // j = boundaries before p0 (binary search in the staged batch).
    int lo = 0, hi = BATCH;
    while (lo < hi) { int mid = (lo + hi) / 2; if (B[mid] < (unsigned long long)p0) lo = mid + 1; else hi = mid; }
    int j = lo;
    unsigned long long next = j < BATCH ? B[j] : ~0ull;
    float acc = 0.f, head = 0.f;
    bool closed = false;
    #pragma unroll
    for (int k = 0; k < PIECE; ++k) {
      const unsigned long long e = p0 + k;
      while (next <= e) {
        if (closed) out[s + j] = acc; else { head = acc; closed = true; }
        acc = 0.f;
        ++j;
        if (j >= BATCH) { atomicAdd(overflow, 1); next = ~0ull; break; }
        next = B[j];
      }
      acc += v[k];
    }
    const int head_segment_offset = lo;  // head piece's segment: s + lo
    // Segmented inclusive scan over lanes of (acc, closed): T(l) = acc(l) +
    // (closed(l) ? 0 : T(l - 1)), T(-1) = carry.
    float t = acc; int f = closed;
    #pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      float tv = __shfl_up_sync(0xffffffff, t, d);
      int tf = __shfl_up_sync(0xffffffff, f, d);
      if (lane >= d) { if (!f) t += tv; f |= tf; }
    }
    if (!f) t += carry;
    float carry_in = __shfl_up_sync(0xffffffff, t, 1);
    if (lane == 0) carry_in = carry;
    if (closed) out[s + head_segment_offset] = carry_in + head;
    carry = __shfl_sync(0xffffffff, t, 31);
    const int ended = __shfl_sync(0xffffffff, j, 31);
    __syncwarp();
    s += ended;
  }
  // Segments that end exactly at the range's end (and empty ones there):
  // no element of this range closes them. A segment that goes on into the
  // next range is left out (the fix-up this probe does not have).
  if (lane == 0) {
    while (s + 1 <= segments && off[s + 1] <= (unsigned long long)r1) { out[s] = carry; carry = 0.f; ++s; }
  }
}

static double median_ms(std::vector<float> t) { std::sort(t.begin(), t.end()); return t[t.size() / 2]; }

int main(int argc, char** argv) {
  const long long n = 1ll << 28;
  const int runs = 21;
  float* x; CHECK(cudaMalloc(&x, n * sizeof(float)));
  std::vector<float> hx(n);
  uint64_t h = 12345;
  for (long long i = 0; i < n; ++i) { h = h * 6364136223846793005ull + 1442695040888963407ull; hx[i] = float(1 + (h >> 33) % 3); }
  CHECK(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t a, b; CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
  int sms; CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long long blocks = 2ll * sms, warps = blocks * WARPS;
  const long long range = ((n + warps - 1) / warps + STEP - 1) / STEP * STEP;
  CHECK(cudaFuncSetAttribute(segmented_merge<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, TRANSPOSED_BYTES));

  // The whole-input sum (CUB) of the same data, for the ratio.
  float* sum; CHECK(cudaMalloc(&sum, sizeof(float)));
  size_t temp_bytes = 0; void* temp = nullptr;
  cub::DeviceReduce::Sum(temp, temp_bytes, x, sum, n);
  CHECK(cudaMalloc(&temp, temp_bytes));
  std::vector<float> ts;
  for (int r = 0; r < runs + 2; ++r) {
    CHECK(cudaEventRecord(a)); cub::DeviceReduce::Sum(temp, temp_bytes, x, sum, n); CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b)); float ms; CHECK(cudaEventElapsedTime(&ms, a, b)); if (r >= 2) ts.push_back(ms);
  }
  const double whole = median_ms(ts);
  printf("whole-input sum (CUB), 2^28 f32: %.1f us\n", whole * 1e3);

  for (long long mean : {10ll, 100ll, 1000ll}) {
    std::vector<unsigned long long> hoff{0};
    while (hoff.back() < (unsigned long long)n) {
      h = h * 6364136223846793005ull + 1442695040888963407ull;
      hoff.push_back(std::min<unsigned long long>(n, hoff.back() + ((h >> 33) % 3) * mean));
    }
    const long long segments = hoff.size() - 1;
    unsigned long long* off; CHECK(cudaMalloc(&off, hoff.size() * 8));
    CHECK(cudaMemcpy(off, hoff.data(), hoff.size() * 8, cudaMemcpyHostToDevice));
    float* out; CHECK(cudaMalloc(&out, segments * sizeof(float)));
    int* overflow; CHECK(cudaMalloc(&overflow, 4)); CHECK(cudaMemset(overflow, 0, 4));
    auto time_probe = [&](bool transpose) {
      CHECK(cudaMemset(out, 0xff, segments * sizeof(float)));  // NaN poison
      ts.clear();
      for (int r = 0; r < runs + 2; ++r) {
        CHECK(cudaEventRecord(a));
        if (transpose) segmented_merge<true><<<blocks, 512, TRANSPOSED_BYTES>>>(x, off, segments, n, range, out, overflow);
        else segmented_merge<false><<<blocks, 512>>>(x, off, segments, n, range, out, overflow);
        CHECK(cudaEventRecord(b)); CHECK(cudaEventSynchronize(b));
        float ms; CHECK(cudaEventElapsedTime(&ms, a, b)); if (r >= 2) ts.push_back(ms);
      }
      CHECK(cudaGetLastError());
      return median_ms(ts);
    };
    const double direct = time_probe(false);
    const double merge = time_probe(true);  // its results are the ones checked
    printf("mean %lld: direct loads %.1f us (%.2f x whole sum)\n", mean, direct * 1e3, direct / whole);
    std::vector<float> hout(segments); int hover;
    CHECK(cudaMemcpy(hout.data(), out, segments * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&hover, overflow, 4, cudaMemcpyDeviceToHost));
    long long wrong = 0, crossing = 0, wrong_inside = 0;
    for (long long sgi = 0; sgi < segments; ++sgi) {
      double ref = 0; for (unsigned long long i = hoff[sgi]; i < hoff[sgi + 1]; ++i) ref += hx[i];
      const bool crosses = hoff[sgi + 1] > hoff[sgi] && hoff[sgi] / range != (hoff[sgi + 1] - 1) / range;
      crossing += crosses;
      if ((double)hout[sgi] != ref) { ++wrong; wrong_inside += !crosses; }
    }
    // CUB's segmented reduction of the same segments, for comparison.
    size_t seg_temp_bytes = 0; void* seg_temp = nullptr;
    cub::DeviceSegmentedReduce::Sum(seg_temp, seg_temp_bytes, x, out, segments, off, off + 1);
    CHECK(cudaMalloc(&seg_temp, seg_temp_bytes));
    ts.clear();
    for (int r = 0; r < runs + 2; ++r) {
      CHECK(cudaEventRecord(a));
      cub::DeviceSegmentedReduce::Sum(seg_temp, seg_temp_bytes, x, out, segments, off, off + 1);
      CHECK(cudaEventRecord(b)); CHECK(cudaEventSynchronize(b));
      float ms; CHECK(cudaEventElapsedTime(&ms, a, b)); if (r >= 2) ts.push_back(ms);
    }
    const double cub_seg = median_ms(ts);
    printf("mean %lld: %lld segments; merge probe (transposed loads) %.1f us (%.2f x whole sum), CUB segmented %.1f us (%.2f x); "
           "wrong %lld, of them not crossing a warp range %lld, crossing segments %lld, batch overflows %d\n",
           mean, segments, merge * 1e3, merge / whole, cub_seg * 1e3, cub_seg / whole, wrong, wrong_inside, crossing, hover);
    CHECK(cudaFree(off)); CHECK(cudaFree(out)); CHECK(cudaFree(overflow)); CHECK(cudaFree(seg_temp));
  }
  return 0;
}
