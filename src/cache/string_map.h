// A transparent hash for unordered containers keyed by std::string, so lookups by
// string_view allocate nothing.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace turnpike::cache {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace turnpike::cache
