// A JSON document used once and dropped: a client's request read into the pivot, an upstream
// request built and serialized, a whole answer read or rendered, an embeddings body. It is
// parsed or built in a buffer inside this object, on the caller's stack, and past kInline bytes
// in blocks freed together, instead of one heap allocation per object, array and long string.
//
// Nothing parsed or built here may outlive it. Copying a value into another container copies it
// into that container's memory (Boost.JSON copies between storages), so reading the document
// into a new DOM, or serializing it, is safe; returning or moving the value itself out is not.
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
    return boost::json::parse(text, ec, storage());
  }
  // For DOMs built here: pass it to their constructors (json::object(sp), json::array(sp)).
  boost::json::storage_ptr storage() { return boost::json::storage_ptr(&arena_); }

 private:
  alignas(std::max_align_t) unsigned char buffer_[kInline];
  boost::json::monotonic_resource arena_{buffer_, sizeof(buffer_)};
};

}  // namespace turnpike::providers
