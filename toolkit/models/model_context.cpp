#include "toolkit/models/model_context.h"

#include "toolkit/core/error.h"

namespace csan::models {

int64_t ModelContext::vocab_size(const std::string& name) const {
  auto it = vocab_sizes.find(name);
  if (it != vocab_sizes.end()) return it->second;
  std::string known;
  for (const auto& [n, size] : vocab_sizes) known += (known.empty() ? "" : ", ") + n;
  throw Error("the data has no '" + name + "' vocabulary (it has: " + (known.empty() ? "none" : known) +
              "); is the arch meant for another task?");
}

}  // namespace csan::models
