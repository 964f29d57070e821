#include "toolkit/checkpoint/section.h"

#include "toolkit/core/error.h"

namespace csan::checkpoint {

void SectionWriter::write(const std::string& key, const torch::Tensor& value) {
  for (auto& [name, tensor] : tensors_)
    if (name == key) {
      tensor = value.detach();
      return;
    }
  tensors_.emplace_back(key, value.detach());
}

SectionReader SectionReader::of(const SectionWriter& writer, const std::string& where) {
  return SectionReader(
      where,
      [&writer](const std::string& key, torch::Tensor& value) {
        for (const auto& [name, tensor] : writer.tensors())
          if (name == key) {
            value = tensor.to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true);
            return true;
          }
        return false;
      },
      [&writer] {
        std::vector<std::string> keys;
        for (const auto& entry : writer.tensors()) keys.push_back(entry.first);
        return keys;
      });
}

torch::Tensor SectionReader::read(const std::string& key) const {
  torch::Tensor value;
  if (!try_read(key, value)) throw Error(where_ + " has no '" + key + "'", ErrorKind::corrupt_checkpoint);
  return value;
}

}  // namespace csan::checkpoint
