// A component's part of a checkpoint (the precision's loss scaler and master weights, an
// inference checkpoint's int8 scales): named tensors, scalars as 0-dim tensors (a double
// or a counter stays exact). The interface does not depend on the file format: format 3
// stores a section's tensors as "section.NAME.KEY"; formats 1 and 2 (read only) kept them
// in a nested LibTorch archive.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace csan::checkpoint {

class SectionWriter {
 public:
  // Keeps `value` (detached) until the checkpoint is written; writing a key again
  // replaces it.
  void write(const std::string& key, const torch::Tensor& value);
  // In the order written.
  const std::vector<std::pair<std::string, torch::Tensor>>& tensors() const { return tensors_; }

 private:
  std::vector<std::pair<std::string, torch::Tensor>> tensors_;
};

class SectionReader {
 public:
  // Finds `key`'s tensor (on the CPU, a copy the caller may write) or returns false.
  using Lookup = std::function<bool(const std::string& key, torch::Tensor& value)>;
  using Keys = std::function<std::vector<std::string>()>;
  // `where` names the section in errors ("PATH: section 'precision'").
  SectionReader(std::string where, Lookup lookup, Keys keys)
      : where_(std::move(where)), lookup_(std::move(lookup)), keys_(std::move(keys)) {}
  // A reader of what `writer` holds (tests, and a section carried from one file to another).
  static SectionReader of(const SectionWriter& writer, const std::string& where);

  bool try_read(const std::string& key, torch::Tensor& value) const { return lookup_(key, value); }
  // Throws csan::Error "WHERE has no 'KEY'" when the key is missing.
  torch::Tensor read(const std::string& key) const;
  const std::string& where() const { return where_; }
  // Every key the section holds (a conversion copies them all).
  std::vector<std::string> keys() const { return keys_(); }

 private:
  std::string where_;
  Lookup lookup_;
  Keys keys_;
};

}  // namespace csan::checkpoint
