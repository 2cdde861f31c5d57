// A JSON document read once and dropped (a client's request on its way into the pivot): parsed
// into a buffer inside this object, on the caller's stack, and past kInline bytes into blocks
// freed together, instead of one heap allocation per object, array and long string.
//
// Nothing parsed here may outlive it. Copying a value into another container copies it into
// that container's memory (Boost.JSON copies between storages), so reading the document into
// a new DOM is safe; returning or moving the parsed value itself out is not.
// Not copyable or movable; one document per object.
#pragma once

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <string_view>

namespace turnpike::providers {

class ScratchJson {
 public:
  static constexpr size_t kInline = 4096;

  ScratchJson() = default;
  ScratchJson(const ScratchJson&) = delete;
  ScratchJson& operator=(const ScratchJson&) = delete;

  boost::json::value Parse(std::string_view text, boost::system::error_code& ec) {
    return boost::json::parse(text, ec, boost::json::storage_ptr(&arena_));
  }

 private:
  alignas(std::max_align_t) unsigned char buffer_[kInline];
  boost::json::monotonic_resource arena_{buffer_, sizeof(buffer_)};
};

}  // namespace turnpike::providers
