// foreign::read_pickle (csan-import's reader of torch.save()'s data.pkl) on any bytes, with
// two storages ("0": 64 bytes, "1": none; any other key is missing): it returns a value or
// throws csan::Error, never crashes, and every tensor it builds lies inside its storage.
#include "toolkit/foreign/pickle_reader.h"

#include "../fuzz_targets.h"
#include "toolkit/core/error.h"

namespace csan::fuzz {

void torch_pickle(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto storage = [](const std::string& key) {
    if (key == "0") return torch::zeros({64}, torch::kUInt8);
    if (key == "1") return torch::empty({0}, torch::kUInt8);
    throw Error("fuzz: storage " + key + " is missing");
  };
  try {
    const foreign::PicklePtr root = foreign::read_pickle(bytes, "fuzz.pkl", storage);
    // Reading every tensor touches exactly the bytes its view claims.
    if (root->kind == foreign::PickleValue::Kind::tensor) (void)root->tensor.sum().item<double>();
    for (const auto& [key, value] : root->entries)
      if (value->kind == foreign::PickleValue::Kind::tensor) (void)value->tensor.sum().item<double>();
  } catch (const Error&) {
  }
}

}  // namespace csan::fuzz
