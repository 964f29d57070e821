#include "toolkit/foreign/pickle_reader.h"

#include <caffe2/serialize/inline_container.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>

#include "toolkit/core/error.h"
#include "toolkit/core/mapped_file.h"

namespace csan::foreign {

namespace {

using Kind = PickleValue::Kind;
constexpr int kMaxDepth = 100;

PicklePtr make(Kind kind) {
  auto v = std::make_shared<PickleValue>();
  v->kind = kind;
  return v;
}

// torch.save's storage classes and their element types.
const std::map<std::string, torch::ScalarType>& storage_types() {
  static const std::map<std::string, torch::ScalarType> types = {
      {"torch FloatStorage", torch::kFloat}, {"torch DoubleStorage", torch::kDouble},
      {"torch HalfStorage", torch::kHalf},   {"torch BFloat16Storage", torch::kBFloat16},
      {"torch LongStorage", torch::kLong},   {"torch IntStorage", torch::kInt},
      {"torch ShortStorage", torch::kShort}, {"torch CharStorage", torch::kChar},
      {"torch ByteStorage", torch::kByte},   {"torch BoolStorage", torch::kBool}};
  return types;
}

class Unpickler {
 public:
  Unpickler(const std::string& bytes, std::string origin, std::function<torch::Tensor(const std::string&)> storage)
      : data_(bytes), origin_(std::move(origin)), storage_(std::move(storage)) {}

  PicklePtr run() {
    while (true) {
      op_pos_ = pos_;
      const auto op = static_cast<unsigned char>(take(1)[0]);
      if (op == '.') {
        if (stack_.size() != 1) fail("STOP with " + std::to_string(stack_.size()) + " values on the stack");
        return stack_.back();
      }
      step(op);
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(origin_ + ": pickle offset " + std::to_string(op_pos_) + ": " + what, ErrorKind::corrupt_checkpoint);
  }

  const char* take(size_t n) {
    if (n > data_.size() - pos_) fail("truncated (needs " + std::to_string(n) + " more bytes)");
    const char* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }
  uint64_t little_endian(size_t n) {
    const auto* p = reinterpret_cast<const unsigned char*>(take(n));
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
  }
  std::string line() {
    const size_t end = data_.find('\n', pos_);
    if (end == std::string::npos) fail("truncated (a GLOBAL name without its newline)");
    std::string s = data_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }

  PicklePtr pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) fail("stack underflow");
    PicklePtr v = stack_.back();
    stack_.pop_back();
    return v;
  }
  PicklePtr& top() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) fail("stack underflow");
    return stack_.back();
  }
  std::vector<PicklePtr> pop_to_mark() {
    if (marks_.empty()) fail("no MARK");
    std::vector<PicklePtr> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  void push(PicklePtr v) {
    if (stack_.size() > (1u << 24)) fail("stack too deep");
    stack_.push_back(std::move(v));
  }

  // `child` goes inside `parent`: it may not change from now on, and the nesting is bounded.
  void adopt(PickleValue& parent, const PicklePtr& child) {
    if (parent.sealed) fail("a container changed after it was nested (recursive data is not supported)");
    if (child.get() == &parent) fail("a container inside itself (recursive data is not supported)");
    child->sealed = true;
    parent.depth = std::max(parent.depth, child->depth + 1);
    if (parent.depth > kMaxDepth) fail("data nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  PicklePtr sequence(Kind kind, std::vector<PicklePtr> items) {
    PicklePtr v = make(kind);
    for (const auto& item : items) adopt(*v, item);
    v->items = std::move(items);
    return v;
  }
  void append(const PicklePtr& list, std::vector<PicklePtr> items) {
    if (list->kind != Kind::list) fail("APPEND to " + list->describe());
    for (const auto& item : items) {
      adopt(*list, item);
      list->items.push_back(item);
    }
  }
  void set_items(const PicklePtr& dict, const std::vector<PicklePtr>& flat) {
    if (flat.size() % 2) fail("SETITEMS with an odd number of values");
    if (dict->kind != Kind::dict && dict->kind != Kind::object) fail("SETITEM on " + dict->describe());
    for (size_t i = 0; i < flat.size(); i += 2) {
      adopt(*dict, flat[i]);
      adopt(*dict, flat[i + 1]);
      dict->entries.emplace_back(flat[i], flat[i + 1]);
    }
  }

  PicklePtr integer(int64_t value) {
    PicklePtr v = make(Kind::integer);
    v->integer = value;
    return v;
  }
  PicklePtr text(Kind kind, size_t length) {
    PicklePtr v = make(kind);
    v->text.assign(take(length), length);
    return v;
  }
  size_t length(size_t bytes) {
    const uint64_t n = little_endian(bytes);
    if (n > data_.size()) fail("length " + std::to_string(n) + " past the end of the data");
    return static_cast<size_t>(n);
  }

  void memo_put(uint64_t index) {
    if (index > (1u << 24)) fail("memo index " + std::to_string(index) + " out of range");
    if (memo_.size() <= index) memo_.resize(index + 1);
    memo_[index] = top();
  }
  void memo_get(uint64_t index) {
    if (index >= memo_.size() || !memo_[index]) fail("memo index " + std::to_string(index) + " was never stored");
    push(memo_[index]);
  }

  // persistent_load: ('storage', storage class, key, location, numel).
  PicklePtr persistent(const PicklePtr& id) {
    if (id->kind != Kind::tuple || id->items.size() < 5 || id->items[0]->text != "storage" ||
        id->items[1]->kind != Kind::global || id->items[2]->kind != Kind::string || id->items[4]->kind != Kind::integer)
      fail("a persistent id that is not a torch storage");
    const auto type = storage_types().find(id->items[1]->text);
    if (type == storage_types().end()) fail("unsupported storage class " + id->items[1]->text);
    const std::string& key = id->items[2]->text;
    auto cached = storages_.find(key);
    if (cached == storages_.end()) {
      const torch::Tensor bytes = storage_(key);
      const int64_t numel = id->items[4]->integer;
      const auto element = static_cast<int64_t>(c10::elementSize(type->second));
      if (numel < 0 || numel > bytes.numel() / element)
        fail("storage " + key + " has room for " + std::to_string(bytes.numel()) + " bytes, not " + std::to_string(numel) +
             " elements of " + std::string(c10::toString(type->second)));
      PicklePtr storage = make(Kind::storage);
      storage->tensor = bytes.narrow(0, 0, numel * element).view(type->second);
      cached = storages_.emplace(key, storage).first;
    }
    if (cached->second->tensor.scalar_type() != type->second) fail("storage " + key + " read with two types");
    return cached->second;
  }

  std::vector<int64_t> int_tuple(const PicklePtr& v, const char* what) {
    if (v->kind != Kind::tuple) fail(std::string("tensor ") + what + " is not a tuple");
    std::vector<int64_t> out;
    for (const auto& item : v->items) {
      if (item->kind != Kind::integer || item->integer < 0)
        fail(std::string("tensor ") + what + " holds a negative or non-integer value");
      out.push_back(item->integer);
    }
    return out;
  }

  // _rebuild_tensor_v2(storage, offset, size, stride, ...): a view, checked to lie inside.
  PicklePtr rebuild_tensor(const PicklePtr& args) {
    if (args->kind != Kind::tuple || args->items.size() < 4 || args->items[0]->kind != Kind::storage ||
        args->items[1]->kind != Kind::integer)
      fail("_rebuild_tensor_v2 with unexpected arguments");
    const torch::Tensor& storage = args->items[0]->tensor;
    const int64_t offset = args->items[1]->integer;
    const auto size = int_tuple(args->items[2], "size"), stride = int_tuple(args->items[3], "stride");
    if (size.size() != stride.size()) fail("tensor size and stride of different ranks");
    int64_t last = offset, numel = 1;
    for (size_t i = 0; i < size.size(); ++i) {
      if (size[i] == 0) numel = 0;
      if (size[i] > 0 && stride[i] > (int64_t{1} << 40) / size[i]) fail("tensor stride out of range");
      last += size[i] > 0 ? (size[i] - 1) * stride[i] : 0;
    }
    if (offset < 0 || (numel > 0 && last >= storage.numel()))
      fail("tensor past the end of its storage (" + std::to_string(storage.numel()) + " elements)");
    PicklePtr v = make(Kind::tensor);
    v->tensor = numel == 0 ? torch::empty(size, storage.options()) : storage.as_strided(size, stride, offset);
    return v;
  }

  PicklePtr call(const PicklePtr& callable, const PicklePtr& args) {
    if (callable->kind != Kind::global) fail("REDUCE of " + callable->describe());
    if (args->kind != Kind::tuple) fail("REDUCE arguments are not a tuple");
    const std::string& name = callable->text;
    if (name == "torch._utils _rebuild_tensor_v2") return rebuild_tensor(args);
    if (name == "torch._utils _rebuild_parameter") {
      if (args->items.empty() || args->items[0]->kind != Kind::tensor) fail("_rebuild_parameter without a tensor");
      return args->items[0];
    }
    if (name == "collections OrderedDict") {
      if (!args->items.empty()) fail("OrderedDict with arguments");
      return make(Kind::dict);
    }
    return object(name);
  }
  PicklePtr object(const std::string& class_name) {
    PicklePtr v = make(Kind::object);
    v->text = class_name;
    return v;
  }

  void step(unsigned char op) {
    switch (op) {
      case 0x80:
        take(1);
        return;  // PROTO
      case 0x95:
        take(8);
        return;  // FRAME
      case '(':
        marks_.push_back(stack_.size());
        return;  // MARK
      case 'N':
        push(make(Kind::none));
        return;
      case 0x88:
      case 0x89: {  // NEWTRUE, NEWFALSE
        PicklePtr v = make(Kind::boolean);
        v->boolean = op == 0x88;
        push(v);
        return;
      }
      case 'J':
        push(integer(static_cast<int32_t>(little_endian(4))));
        return;  // BININT
      case 'K':
        push(integer(static_cast<int64_t>(little_endian(1))));
        return;  // BININT1
      case 'M':
        push(integer(static_cast<int64_t>(little_endian(2))));
        return;     // BININT2
      case 0x8a: {  // LONG1
        const size_t n = static_cast<unsigned char>(take(1)[0]);
        if (n > 8) fail("an integer wider than 64 bits");
        uint64_t v = n ? little_endian(n) : 0;
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
        push(integer(static_cast<int64_t>(v)));
        return;
      }
      case 'G': {  // BINFLOAT, big-endian
        const auto* p = reinterpret_cast<const unsigned char*>(take(8));
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = bits << 8 | p[i];
        PicklePtr v = make(Kind::floating);
        std::memcpy(&v->floating, &bits, 8);
        push(v);
        return;
      }
      case 'X':
        push(text(Kind::string, length(4)));
        return;  // BINUNICODE
      case 0x8c:
        push(text(Kind::string, length(1)));
        return;  // SHORT_BINUNICODE
      case 0x8d:
        push(text(Kind::string, length(8)));
        return;  // BINUNICODE8
      case 'T':
        push(text(Kind::string, length(4)));
        return;  // BINSTRING
      case 'U':
        push(text(Kind::string, length(1)));
        return;  // SHORT_BINSTRING
      case 'B':
        push(text(Kind::bytes, length(4)));
        return;  // BINBYTES
      case 'C':
        push(text(Kind::bytes, length(1)));
        return;  // SHORT_BINBYTES
      case 0x8e:
        push(text(Kind::bytes, length(8)));
        return;  // BINBYTES8
      case '}':
        push(make(Kind::dict));
        return;  // EMPTY_DICT
      case ']':
        push(make(Kind::list));
        return;  // EMPTY_LIST
      case ')':
        push(make(Kind::tuple));
        return;  // EMPTY_TUPLE
      case 't':
        push(sequence(Kind::tuple, pop_to_mark()));
        return;  // TUPLE
      case 'l':
        push(sequence(Kind::list, pop_to_mark()));
        return;  // LIST
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        std::vector<PicklePtr> items(op - 0x84);
        for (auto it = items.rbegin(); it != items.rend(); ++it) *it = pop();
        push(sequence(Kind::tuple, std::move(items)));
        return;
      }
      case 'd': {  // DICT
        const auto flat = pop_to_mark();
        PicklePtr dict = make(Kind::dict);
        set_items(dict, flat);
        push(dict);
        return;
      }
      case 'a': {  // APPEND
        PicklePtr item = pop();
        append(top(), {item});
        return;
      }
      case 'e': {  // APPENDS
        auto items = pop_to_mark();
        append(top(), std::move(items));
        return;
      }
      case 's': {  // SETITEM
        PicklePtr value = pop(), key = pop();
        set_items(top(), {key, value});
        return;
      }
      case 'u': {  // SETITEMS
        const auto flat = pop_to_mark();
        set_items(top(), flat);
        return;
      }
      case 'q':
        memo_put(little_endian(1));
        return;  // BINPUT
      case 'r':
        memo_put(little_endian(4));
        return;  // LONG_BINPUT
      case 0x94:
        memo_put(memo_.size());
        return;  // MEMOIZE
      case 'h':
        memo_get(little_endian(1));
        return;  // BINGET
      case 'j':
        memo_get(little_endian(4));
        return;    // LONG_BINGET
      case 'c': {  // GLOBAL module\nname\n
        PicklePtr v = make(Kind::global);
        v->text = line();
        v->text += " " + line();
        push(v);
        return;
      }
      case 0x93: {  // STACK_GLOBAL
        PicklePtr name = pop(), module = pop();
        if (name->kind != Kind::string || module->kind != Kind::string) fail("STACK_GLOBAL of non-strings");
        PicklePtr v = make(Kind::global);
        v->text = module->text + " " + name->text;
        push(v);
        return;
      }
      case 'Q':
        push(persistent(pop()));
        return;    // BINPERSID
      case 'R': {  // REDUCE
        PicklePtr args = pop(), callable = pop();
        push(call(callable, args));
        return;
      }
      case 0x81: {  // NEWOBJ cls args
        PicklePtr args = pop(), cls = pop();
        if (cls->kind != Kind::global) fail("NEWOBJ of " + cls->describe());
        push(cls->text == "collections OrderedDict" ? make(Kind::dict) : object(cls->text));
        return;
      }
      case 'b': {  // BUILD: an object's __dict__ (or (dict, slots))
        PicklePtr state = pop();
        PicklePtr& target = top();
        if (target->kind == Kind::object && state->kind == Kind::dict) {
          std::vector<PicklePtr> flat;
          for (const auto& [k, v] : state->entries) flat.insert(flat.end(), {k, v});
          set_items(target, flat);
        }
        // An OrderedDict's attributes (a state dict's _metadata) and a tensor's are not read.
        return;
      }
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        fail(std::string("unsupported pickle opcode ") + hex);
      }
    }
  }

  const std::string& data_;
  std::string origin_;
  std::function<torch::Tensor(const std::string&)> storage_;
  size_t pos_ = 0, op_pos_ = 0;
  std::vector<PicklePtr> stack_;
  std::vector<size_t> marks_;
  std::vector<PicklePtr> memo_;
  std::map<std::string, PicklePtr> storages_;
};

}  // namespace

const PickleValue* PickleValue::find(const std::string& key) const {
  for (const auto& [k, v] : entries)
    if (k->kind == Kind::string && k->text == key) return v.get();
  return nullptr;
}

std::string PickleValue::describe() const {
  switch (kind) {
    case Kind::none:
      return "None";
    case Kind::boolean:
      return "a bool";
    case Kind::integer:
      return "an int";
    case Kind::floating:
      return "a float";
    case Kind::string:
      return "a string";
    case Kind::bytes:
      return "bytes";
    case Kind::list:
      return "a list";
    case Kind::tuple:
      return "a tuple";
    case Kind::dict:
      return "a dict";
    case Kind::object:
      return "a " + text + " object";
    case Kind::tensor:
      return "a tensor";
    case Kind::global:
      return "the class " + text;
    case Kind::storage:
      return "a storage";
  }
  return "?";
}

PicklePtr read_pickle(const std::string& bytes, const std::string& origin,
                      const std::function<torch::Tensor(const std::string& key)>& storage) {
  return Unpickler(bytes, origin, storage).run();
}

namespace {

// Where each record's bytes start in the archive, in file order: a storage's bytes end before
// the next record's local header (30 bytes at least), or before the end-of-central-directory
// record (22 bytes) for the last one.
std::vector<size_t> record_starts(caffe2::serialize::PyTorchStreamReader& zip) {
  std::vector<size_t> starts;
  for (const std::string& name : zip.getAllRecords()) starts.push_back(zip.getRecordOffset(name));
  std::sort(starts.begin(), starts.end());
  return starts;
}

}  // namespace

PicklePtr read_torch_save(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw Error(path + ": no such file", ErrorKind::missing_file);
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> zip;
  std::string pickle;
  std::vector<size_t> starts;
  try {
    zip = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
    auto [data, size] = zip->getRecord("data.pkl");
    pickle.assign(static_cast<const char*>(data.get()), size);
    starts = record_starts(*zip);
  } catch (const c10::Error& e) {
    throw Error(path + ": not a torch.save() zip archive, or a truncated one (" +
                    std::string(e.what_without_backtrace()).substr(0, 200) + ")",
                ErrorKind::corrupt_checkpoint);
  }
  // The storages are used where they lie in the file, as torch.load(mmap=True) does: reading
  // each record into memory of its own cost a transformer_big import more time than anything
  // else (the kernel zeroing 800 MB of fresh pages; tools/bench/import-time.sh). The map is
  // copy-on-write: an importer that changes a weight in place changes its own copy, never the
  // file. torch.save stores records uncompressed, 64-byte aligned; the pickle says how many
  // bytes a storage holds, and they must end before the next record.
  const auto file = std::make_shared<core::MappedFile>(path, core::MappedFile::Access::copy_on_write);
  auto storage = [&](const std::string& key) {
    const std::string record = "data/" + key;
    try {
      if (!zip->hasRecord(record))
        throw Error(path + ": storage " + record + " is missing", ErrorKind::corrupt_checkpoint);
      const size_t offset = zip->getRecordOffset(record);
      const auto next = std::upper_bound(starts.begin(), starts.end(), offset);
      const size_t end = next == starts.end() ? file->size() - std::min<size_t>(file->size(), 22) : *next - 30;
      if (offset > end || end > file->size())
        throw Error(path + ": storage " + record + " lies outside the file", ErrorKind::corrupt_checkpoint);
      if (offset % alignof(double) != 0) {
        // Not written by torch.save (which aligns every record): read it into memory of its
        // own, where every element type is aligned.
        auto [data, size] = zip->getRecord(record);
        auto held = std::make_shared<at::DataPtr>(std::move(data));
        return torch::from_blob(
            held->get(), {static_cast<int64_t>(size)}, [held](void*) {}, torch::kUInt8);
      }
      return torch::from_blob(
          file->writable_data() + offset, {static_cast<int64_t>(end - offset)}, [file](void*) {}, torch::kUInt8);
    } catch (const c10::Error& e) {
      throw Error(path + ": storage " + record + " cannot be read (" +
                      std::string(e.what_without_backtrace()).substr(0, 200) + ")",
                  ErrorKind::corrupt_checkpoint);
    }
  };
  return read_pickle(pickle, path + " (data.pkl)", storage);
}

}  // namespace csan::foreign
