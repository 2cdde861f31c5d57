#include "common/vectors.h"

#include <cmath>

namespace turnpike {
namespace {
// Eight independent accumulators so the loops vectorise without -ffast-math.
constexpr size_t kLanes = 8;
}  // namespace

float Dot(const float* a, const float* b, size_t n) {
  float acc[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  }
  float sum = 0;
  for (; i < n; ++i) sum += a[i] * b[i];
  for (float x : acc) sum += x;
  return sum;
}

float SquaredDistance(const float* a, const float* b, size_t n) {
  float acc[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) {
      const float d = a[i + l] - b[i + l];
      acc[l] += d * d;
    }
  }
  float sum = 0;
  for (; i < n; ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  for (float x : acc) sum += x;
  return sum;
}

float Cosine(const float* a, const float* b, size_t n) {
  const float norm = std::sqrt(Dot(a, a, n)) * std::sqrt(Dot(b, b, n));
  return norm == 0 ? 0.0F : Dot(a, b, n) / norm;
}

bool Normalize(std::span<float> v) {
  const float length = std::sqrt(Dot(v.data(), v.data(), v.size()));
  if (length == 0 || !std::isfinite(length)) return false;
  for (float& x : v) x /= length;
  return true;
}

}  // namespace turnpike
