// Reads a torch.save() file (a zip archive: data.pkl plus data/N storages) as Python wrote
// it, for importing other toolkits' checkpoints (fairseq's checkpoint.pt, Hugging Face's
// pytorch_model.bin).
//
// Why not LibTorch's unpickler (torch::pickle_load / torch::jit::load): it refuses every
// class it does not know, and fairseq checkpoints hold argparse.Namespace settings (and
// often fairseq's own meter objects in extra_state), so it cannot read them at all. This is
// a small, bounded reader of our own for exactly the pickle subset torch.save writes:
// None, bools, ints, floats, strings, bytes, lists, tuples, dicts, collections.OrderedDict,
// argparse.Namespace (read as its attribute dict) and tensors
// (torch._utils._rebuild_tensor_v2 / _rebuild_parameter over persistent_load'ed storages).
// Any other class is never executed: it becomes an opaque value naming the class, which
// is an error only where an importer needs its contents (settings, weights). Any other
// opcode is an error naming the file, the opcode and its offset. Every length, memo index
// and storage range is checked against the data; containers nest at most kMaxDepth deep.
// The zip itself is read with LibTorch's caffe2::serialize::PyTorchStreamReader.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace csan::foreign {

struct PickleValue;
using PicklePtr = std::shared_ptr<PickleValue>;

struct PickleValue {
  enum class Kind {
    none,
    boolean,
    integer,
    floating,
    string,
    bytes,
    list,
    tuple,
    dict,
    object,
    tensor,
    global,
    storage
  };
  Kind kind = Kind::none;
  bool boolean = false;
  int64_t integer = 0;
  double floating = 0;
  std::string text;                                      // string, bytes; global: "module name"; object: its class
  std::vector<PicklePtr> items;                          // list, tuple
  std::vector<std::pair<PicklePtr, PicklePtr>> entries;  // dict; object: its attributes
  torch::Tensor tensor;                                  // tensor; storage: the whole storage
  int depth = 1;                                         // nesting depth (bounded)
  bool sealed = false;                                   // placed inside another value: no longer changes

  // The entry (dict) or attribute (object) named `key`; nullptr when absent.
  const PickleValue* find(const std::string& key) const;
  bool is_mapping() const { return kind == Kind::dict || kind == Kind::object; }
  // "a dict", "an argparse.Namespace", ... for error messages.
  std::string describe() const;
};

// The unpickled data.pkl of a torch.save() archive; throws csan::Error naming `path` for a
// file that is not such an archive, a truncated one, an unsupported opcode or a storage
// out of range. Tensors view the storages read from the archive (no further copy).
PicklePtr read_torch_save(const std::string& path);

// The same for data.pkl's bytes and a way to fetch storage `key` ("0", "1", ...) as a
// uint8 tensor (the fuzz target and the tests use it without an archive).
PicklePtr read_pickle(const std::string& bytes, const std::string& origin,
                      const std::function<torch::Tensor(const std::string& key)>& storage);

}  // namespace csan::foreign
