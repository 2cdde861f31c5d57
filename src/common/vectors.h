// The exact float32 vector kernels, shared by every exact vector scan in the gateway: the
// search door's kNN (doors/search/embedded/rank.cc) and the LLM cache's semantic index
// (doors/llm/semantic_index.h). One implementation, so both score alike.
//
// Pure functions over caller-owned arrays of `n` floats; thread-safe; no allocation, no errors.
// They vectorise without -ffast-math (independent accumulators), so results are deterministic
// for a given build but may differ in the last bits from a naive left-to-right sum.
#pragma once

#include <cstddef>
#include <span>

namespace turnpike {

// Sum of a[i] * b[i].
float Dot(const float* a, const float* b, size_t n);

// Sum of (a[i] - b[i])^2.
float SquaredDistance(const float* a, const float* b, size_t n);

// The cosine of the angle between a and b, in [-1, 1]; 0 when either has length 0.
float Cosine(const float* a, const float* b, size_t n);

// Scales `v` to unit length, so that Dot of two normalised vectors is their cosine. false (and
// `v` unchanged) when its length is 0 or not finite.
bool Normalize(std::span<float> v);

}  // namespace turnpike
