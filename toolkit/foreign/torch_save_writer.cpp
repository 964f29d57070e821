#include "toolkit/foreign/torch_save_writer.h"

#include <caffe2/serialize/inline_container.h>

#include <cstring>
#include <limits>
#include <map>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"

namespace csan::foreign {

namespace {

using Kind = PickleValue::Kind;

// Pickle protocol 2 opcodes (Python's Lib/pickle.py).
constexpr char kProto = '\x80', kStop = '.', kNone = 'N', kTrue = '\x88', kFalse = '\x89', kBinInt = 'J',
               kLong1 = '\x8a', kBinFloat = 'G', kBinUnicode = 'X', kEmptyList = ']', kAppends = 'e', kEmptyDict = '}',
               kSetItems = 'u', kEmptyTuple = ')', kMark = '(', kTuple = 't', kGlobal = 'c', kReduce = 'R',
               kNewObj = '\x81', kBuild = 'b', kBinPersId = 'Q';

const char* const kNamespaceClass = "argparse Namespace";

class Pickler {
 public:
  // A storage to write as data/KEY.
  struct Storage {
    std::string key;
    torch::Tensor bytes;  // the whole storage, as uint8
  };

  void value(const PickleValue& v) {
    switch (v.kind) {
      case Kind::none:
        out_ += kNone;
        return;
      case Kind::boolean:
        out_ += v.boolean ? kTrue : kFalse;
        return;
      case Kind::integer:
        integer(v.integer);
        return;
      case Kind::floating: {
        uint64_t bits;
        std::memcpy(&bits, &v.floating, 8);
        out_ += kBinFloat;
        for (int shift = 56; shift >= 0; shift -= 8) out_ += static_cast<char>((bits >> shift) & 0xff);  // big-endian
        return;
      }
      case Kind::string:
        string(v.text);
        return;
      case Kind::list:
        out_ += kEmptyList;
        if (v.items.empty()) return;
        out_ += kMark;
        for (const auto& item : v.items) value(*item);
        out_ += kAppends;
        return;
      case Kind::tuple:
        out_ += kMark;
        for (const auto& item : v.items) value(*item);
        out_ += kTuple;
        return;
      case Kind::dict:
        entries(v);
        return;
      case Kind::object:
        if (v.text != kNamespaceClass) throw Error("torch.save writer: cannot write an object of class " + v.text);
        global(kNamespaceClass);
        out_ += kEmptyTuple;
        out_ += kNewObj;
        entries(v);
        out_ += kBuild;
        return;
      case Kind::tensor:
        tensor(v.tensor);
        return;
      default:
        throw Error("torch.save writer: cannot write " + v.describe());
    }
  }
  std::string finish() {
    out_ += kStop;
    return std::string{kProto, '\x02'} + out_;
  }
  const std::vector<Storage>& storages() const { return storages_; }

 private:
  void integer(int64_t n) {
    if (n >= std::numeric_limits<int32_t>::min() && n <= std::numeric_limits<int32_t>::max()) {
      out_ += kBinInt;
      little_endian(static_cast<uint32_t>(static_cast<int32_t>(n)), 4);
    } else {
      out_ += kLong1;
      out_ += '\x08';
      little_endian(static_cast<uint64_t>(n), 8);
    }
  }
  void little_endian(uint64_t bits, int bytes) {
    for (int i = 0; i < bytes; ++i) out_ += static_cast<char>((bits >> (8 * i)) & 0xff);
  }
  void string(const std::string& s) {
    out_ += kBinUnicode;
    little_endian(s.size(), 4);
    out_ += s;
  }
  // "module name" -> GLOBAL module\nname\n.
  void global(const std::string& qualified) {
    const size_t space = qualified.find(' ');
    out_ += kGlobal;
    out_ += qualified.substr(0, space) + "\n" + qualified.substr(space + 1) + "\n";
  }
  void entries(const PickleValue& v) {
    out_ += kEmptyDict;
    if (v.entries.empty()) return;
    out_ += kMark;
    for (const auto& [key, item] : v.entries) {
      value(*key);
      value(*item);
    }
    out_ += kSetItems;
  }
  // torch._utils._rebuild_tensor_v2(persistent storage, offset, size, stride, False, OrderedDict()).
  void tensor(const torch::Tensor& t) {
    if (t.scalar_type() != torch::kFloat || !t.device().is_cpu())
      throw Error("torch.save writer: a " + std::string(c10::toString(t.scalar_type())) +
                  " tensor (the exporter writes float32 tensors on the CPU)");
    const void* base = t.storage().data();
    auto it = storage_keys_.find(base);
    if (it == storage_keys_.end()) {
      const std::string key = std::to_string(storages_.size());
      const int64_t nbytes = static_cast<int64_t>(t.storage().nbytes());
      storages_.push_back({key, torch::from_blob(const_cast<void*>(base), {nbytes}, torch::kUInt8)});
      it = storage_keys_.emplace(base, key).first;
    }
    global("torch._utils _rebuild_tensor_v2");
    out_ += kMark;
    out_ += kMark;
    string("storage");
    global("torch FloatStorage");
    string(it->second);
    string("cpu");
    integer(static_cast<int64_t>(t.storage().nbytes() / sizeof(float)));
    out_ += kTuple;
    out_ += kBinPersId;
    integer(t.storage_offset());
    out_ += kMark;
    for (int64_t s : t.sizes()) integer(s);
    out_ += kTuple;
    out_ += kMark;
    for (int64_t s : t.strides()) integer(s);
    out_ += kTuple;
    out_ += kFalse;
    global("collections OrderedDict");
    out_ += kEmptyTuple;
    out_ += kReduce;
    out_ += kTuple;
    out_ += kReduce;
  }

  std::string out_;
  std::vector<Storage> storages_;
  std::map<const void*, std::string> storage_keys_;
};

PicklePtr new_value(Kind kind) {
  auto v = std::make_shared<PickleValue>();
  v->kind = kind;
  return v;
}

std::vector<std::pair<PicklePtr, PicklePtr>> keyed(std::vector<std::pair<std::string, PicklePtr>> entries) {
  std::vector<std::pair<PicklePtr, PicklePtr>> out;
  for (auto& [key, value] : entries) out.emplace_back(pickle_string(key), std::move(value));
  return out;
}

}  // namespace

PicklePtr pickle_none() { return new_value(Kind::none); }
PicklePtr pickle_bool(bool value) {
  auto v = new_value(Kind::boolean);
  v->boolean = value;
  return v;
}
PicklePtr pickle_int(int64_t value) {
  auto v = new_value(Kind::integer);
  v->integer = value;
  return v;
}
PicklePtr pickle_float(double value) {
  auto v = new_value(Kind::floating);
  v->floating = value;
  return v;
}
PicklePtr pickle_string(std::string value) {
  auto v = new_value(Kind::string);
  v->text = std::move(value);
  return v;
}
PicklePtr pickle_list(std::vector<PicklePtr> items) {
  auto v = new_value(Kind::list);
  v->items = std::move(items);
  return v;
}
PicklePtr pickle_dict(std::vector<std::pair<std::string, PicklePtr>> entries) {
  auto v = new_value(Kind::dict);
  v->entries = keyed(std::move(entries));
  return v;
}
PicklePtr pickle_namespace(std::vector<std::pair<std::string, PicklePtr>> attributes) {
  auto v = new_value(Kind::object);
  v->text = kNamespaceClass;
  v->entries = keyed(std::move(attributes));
  return v;
}
PicklePtr pickle_tensor(torch::Tensor tensor) {
  auto v = new_value(Kind::tensor);
  v->tensor = std::move(tensor);
  return v;
}

std::string torch_save_bytes(const PickleValue& root) {
  Pickler pickler;
  pickler.value(root);
  const std::string data_pkl = pickler.finish();
  std::string archive;
  {
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) {
      archive.append(static_cast<const char*>(data), size);
      return size;
    });
    writer.writeRecord("data.pkl", data_pkl.data(), data_pkl.size());
    for (const auto& storage : pickler.storages())
      writer.writeRecord("data/" + storage.key, storage.bytes.data_ptr(), storage.bytes.numel());
    writer.writeEndOfFile();
  }
  return archive;
}

void write_torch_save(const PickleValue& root, const std::string& path) {
  write_file_atomically(path, torch_save_bytes(root));
}

}  // namespace csan::foreign
