// Writes a safetensors file atomically (core/atomic_file: a temporary sibling renamed into
// place, so a failure part-way keeps the previous file) with csan's checksum (checksum.h).
// Tensors are given by name, dtype and shape with their bytes either borrowed or produced
// piece by piece during write(), so that a large model is never gathered in one buffer.
// Files are laid out for use in place (format.h): tensors by decreasing element size, then
// by name, the data starting at a multiple of kDataAlignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "toolkit/safetensors/dtype.h"

namespace csan::safetensors {

class Writer {
 public:
  // Receives a tensor's bytes in order, in pieces of any size.
  using Sink = std::function<void(const void* data, size_t size)>;
  // Passes exactly the tensor's bytes (elements x dtype size) to the sink, once.
  using Producer = std::function<void(const Sink& sink)>;

  // A string of the header's __metadata__ map (valid UTF-8: binary data belongs in a U8
  // tensor). Setting a key again replaces its value.
  void set_metadata(const std::string& key, std::string value);
  // A tensor whose bytes are at `data` (row-major, little-endian); they must stay valid
  // until write() returns.
  void add(const std::string& name, Dtype dtype, std::vector<int64_t> shape, const void* data);
  // A tensor whose bytes `produce` passes to its sink during write().
  void add(const std::string& name, Dtype dtype, std::vector<int64_t> shape, Producer produce);

  // Writes the file. Throws csan::Error "PATH: ..." naming the tensor or metadata key at
  // fault (a bad name, shape or string, a producer that fails or passes the wrong number of
  // bytes, a failed write); `path` is then left as it was.
  void write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    Dtype dtype;
    std::vector<int64_t> shape;
    const void* data;  // or, when null, `produce`
    Producer produce;
  };
  std::vector<Tensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace csan::safetensors
