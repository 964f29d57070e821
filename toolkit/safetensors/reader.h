// Reads a safetensors file in place: the file is memory-mapped, its header checked
// (header.h) and csan's checksum verified (checksum.h), and each tensor is a view into the
// mapping (no copy). Any problem is one csan::Error naming the file and the tensor or field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "toolkit/core/mapped_file.h"
#include "toolkit/safetensors/dtype.h"

namespace csan::safetensors {

struct TensorView {
  std::string name;
  Dtype dtype = Dtype::kU8;
  std::vector<int64_t> shape;
  const char* data = nullptr;  // `size` bytes inside the mapping
  size_t size = 0;

  int64_t elements() const;
  // Whether `data` is aligned to the element size (always so in files csan wrote; a file
  // from another writer may need a copy before its values are read as their type).
  bool aligned() const;
};

enum class ChecksumPolicy {
  kVerifyIfPresent,  // files of other writers (Python's safetensors) have none
  kRequire,          // a file csan wrote: a missing checksum is an error
};

class Reader {
 public:
  // access: how the file is mapped (core::MappedFile): copy_on_write where the views' bytes
  // become tensors that may be written in place (an importer's weights).
  explicit Reader(const std::string& path, ChecksumPolicy policy = ChecksumPolicy::kVerifyIfPresent,
                  core::MappedFile::Access access = core::MappedFile::Access::read_only);
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const { return path_; }
  // __metadata__, without csan's checksum entry.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // In the order of their data in the file.
  const std::vector<TensorView>& tensors() const { return tensors_; }
  // nullptr when the file has no tensor of that name.
  const TensorView* find(const std::string& name) const;
  // Throws csan::Error "PATH: no tensor 'NAME'" when there is none.
  const TensorView& tensor(const std::string& name) const;
  // Whether the file carried csan's checksum (and it matched).
  bool checksummed() const { return checksummed_; }
  // The mapping the views point into; holding it keeps their bytes valid after the reader
  // is gone (a tensor that adopts the bytes holds it).
  std::shared_ptr<const core::MappedFile> mapping() const { return mapping_; }

 private:
  std::string path_;
  std::shared_ptr<const core::MappedFile> mapping_;
  std::map<std::string, std::string> metadata_;
  std::vector<TensorView> tensors_;
  std::unordered_map<std::string, size_t> index_;
  bool checksummed_ = false;
};

}  // namespace csan::safetensors
