// The web page csan-serve answers GET / with: toolkit/serve/web/*, compiled into the
// binary at build time (cmake/CsanEmbedFiles.cmake), so the server needs no files beside it.
#pragma once

#include <string_view>
#include <vector>

namespace csan::serve {

struct WebAsset {
  std::string_view path;          // "/index.html", "/app.js", ...
  std::string_view content_type;  // "text/html; charset=utf-8", ...
  std::string_view body;
};

const std::vector<WebAsset>& web_assets();

}  // namespace csan::serve
