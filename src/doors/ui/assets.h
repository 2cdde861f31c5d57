// The console's files (the top-level ui/ folder), compiled into the binary at build time by
// cmake/embed_files.cmake: each with its content type and a hash of its bytes (its ETag).
// AssetsVersion changes whenever any file does: the pages load /ui/assets/<version>/<path>, so
// an asset may be cached for a year and a new build is fetched at once.
//
// Thread safety: constant data.
#pragma once

#include <span>
#include <string_view>

namespace turnpike::doors::ui {

struct Asset {
  std::string_view path;  // relative to ui/: "app.js", "pages/calls.js"
  std::string_view content_type;
  std::string_view hash;  // 16 hex digits of its SHA-256
  std::string_view body;
};

std::span<const Asset> EmbeddedAssets();
std::string_view AssetsVersion();

}  // namespace turnpike::doors::ui
