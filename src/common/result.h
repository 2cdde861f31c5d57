// Result<T>: a value or an Error, for the request path (C++20 has no std::expected).
//
// Cheap to move; never throws on access misuse in release builds (asserts in debug). Callers
// check ok() and return early:
//
//   Result<Route> r = router.Pick(model);
//   if (!r.ok()) return r.error();
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "common/error.h"

namespace turnpike {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  T& value() {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const {
    assert(ok());
    return std::get<0>(v_);
  }
  const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> v_;
};

// For operations that return nothing on success.
struct Ok {};
using Status = Result<Ok>;

}  // namespace turnpike
