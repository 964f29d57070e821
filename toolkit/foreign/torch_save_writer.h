// Writes a torch.save() file (a zip archive: data.pkl plus data/N storages) that Python's
// torch.load reads, for exporting to other toolkits (fairseq's checkpoint.pt).
//
// Why not LibTorch's torch::pickle_save: its pickler writes IValues only, and fairseq's
// checkpoint needs a Python class instance: CTranslate2's fairseq converter reads
// cfg["model"] by attribute (args.arch, args.data = ...), so it must be an
// argparse.Namespace (tools/interop/FORMATS.md 6(b)); a dict fails there. So the pickle
// (protocol 2, the subset pickle_reader.h reads) is written here, from the same PickleValue
// tree the reader produces; the zip is LibTorch's caffe2::serialize::PyTorchStreamWriter,
// as torch.save's own.
#pragma once

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "toolkit/foreign/pickle_reader.h"

namespace csan::foreign {

// Values for write_torch_save: None, bool, int, float, str, list, dict (string keys, in
// the given order), argparse.Namespace (its attributes) and float32 tensors (written as
// torch._utils._rebuild_tensor_v2 over their storage; tensors sharing a storage share it
// in the file too).
PicklePtr pickle_none();
PicklePtr pickle_bool(bool value);
PicklePtr pickle_int(int64_t value);
PicklePtr pickle_float(double value);
PicklePtr pickle_string(std::string value);
PicklePtr pickle_list(std::vector<PicklePtr> items);
PicklePtr pickle_dict(std::vector<std::pair<std::string, PicklePtr>> entries);
PicklePtr pickle_namespace(std::vector<std::pair<std::string, PicklePtr>> attributes);
PicklePtr pickle_tensor(torch::Tensor tensor);

// The archive's bytes. Throws csan::Error for a value outside the list above (a tensor
// not float32 on the CPU, an object of another class).
std::string torch_save_bytes(const PickleValue& root);

// Writes the archive to `path` atomically (core/atomic_file.h).
void write_torch_save(const PickleValue& root, const std::string& path);

}  // namespace csan::foreign
