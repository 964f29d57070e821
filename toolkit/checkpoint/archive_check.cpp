#include "toolkit/checkpoint/archive_check.h"

#include <c10/util/Exception.h>
#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace csan::checkpoint {

namespace {

uint64_t little_endian(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The argument layout of each pickle opcode (protocols 0-5) that LibTorch writes or reads.
enum class Arg { kNone, kFixed, kCounted, kTwoLines, kUnknown };
struct OpcodeArg {
  Arg kind;
  int bytes;  // kFixed: the argument's size; kCounted: the size of the count before the data
};

OpcodeArg opcode_arg(unsigned char op) {
  switch (op) {
    case 0x80:
      return {Arg::kFixed, 1};  // PROTO
    case 'K':
    case 'q':
    case 'h':
      return {Arg::kFixed, 1};  // BININT1, BINPUT, BINGET
    case 'M':
      return {Arg::kFixed, 2};  // BININT2
    case 'J':
    case 'r':
    case 'j':
      return {Arg::kFixed, 4};  // BININT, LONG_BINPUT, LONG_BINGET
    case 'G':
    case 0x95:
      return {Arg::kFixed, 8};  // BINFLOAT, FRAME
    case 'X':
    case 'B':
    case 'T':
    case 0x8b:
      return {Arg::kCounted, 4};  // BINUNICODE, BINBYTES, BINSTRING, LONG4
    case 'C':
    case 'U':
    case 0x8c:
    case 0x8a:
      return {Arg::kCounted, 1};  // SHORT_BINBYTES, SHORT_BINSTRING, SHORT_BINUNICODE, LONG1
    case 0x8d:
    case 0x8e:
      return {Arg::kCounted, 8};  // BINUNICODE8, BINBYTES8
    case 'c':
      return {Arg::kTwoLines, 0};  // GLOBAL module\nname\n
    case '(':
    case ')':
    case ']':
    case '}':
    case 't':
    case 0x85:
    case 0x86:
    case 0x87:
    case 'R':
    case 'b':
    case 'u':
    case 'e':
    case 'a':
    case 's':
    case 0x88:
    case 0x89:
    case 'N':
    case 'Q':
    case '.':
    case '0':
    case '2':
    case 0x94:
    case 0x81:
    case 'l':
    case 'd':
      return {Arg::kNone, 0};
    default:
      return {Arg::kUnknown, 0};
  }
}

// What an opcode does to the unpickler's stack: the items it needs above the latest mark
// and the change in their number; kToMark: it pops everything down to the latest mark.
struct StackEffect {
  int needs;
  int delta;
};
constexpr int kToMark = -1000;

StackEffect stack_effect(unsigned char op) {
  switch (op) {
    case 0x80:  // PROTO
    case 0x95:  // FRAME
      return {0, 0};
    case 't':  // TUPLE, LIST, DICT: the items since the mark become one
    case 'l':
    case 'd':
    case 'u':  // SETITEMS, APPENDS: the items since the mark go into the object below it
    case 'e':
      return {0, kToMark};
    case 0x85:  // TUPLE1, BINPERSID, BINPUT, LONG_BINPUT, MEMOIZE: read or replace the top
    case 'Q':
    case 'q':
    case 'r':
    case 0x94:
      return {1, 0};
    case 0x86:  // TUPLE2, REDUCE, NEWOBJ, BUILD, APPEND: two become one
    case 'R':
    case 0x81:
    case 'b':
    case 'a':
      return {2, -1};
    case 0x87:  // TUPLE3
      return {3, -2};
    case 's':  // SETITEM
      return {3, -2};
    case '0':  // POP
      return {1, -1};
    case '2':  // DUP
      return {1, 1};
    case '.':  // STOP
      return {1, 0};
    default:  // everything else pushes one value (constants, strings, globals, memo reads)
      return {0, 1};
  }
}

std::string pickle_length_problem(const unsigned char* p, size_t size) {
  size_t i = 0;
  // The stack as LibTorch's unpickler keeps it, one count per mark-delimited segment: it
  // pops without checking, so an opcode with too few items below it read before its stack
  // (a SEGV in Unpickler::readInstruction, found by the fuzz target).
  std::vector<int64_t> segments{0};
  // Memo slots in use: a pickler numbers them 0, 1, 2, ... LibTorch's unpickler grows its
  // memo table to whatever index BINPUT names (a crafted index asked for 30 GB).
  uint64_t memo_size = 0;
  while (i < size) {
    const unsigned char op = p[i++];
    const OpcodeArg arg = opcode_arg(op);
    if (arg.kind != Arg::kUnknown) {
      if (op == '(') {
        segments.push_back(0);
      } else {
        const StackEffect effect = stack_effect(op);
        if (effect.delta == kToMark) {
          if (segments.size() < 2) return "a pickle closes a mark it never set";
          segments.pop_back();
          const bool into_object_below = op == 'u' || op == 'e';
          if (into_object_below && segments.back() < 1) return "a pickle fills an object it never made";
          if (!into_object_below) ++segments.back();
        } else {
          if (segments.back() < effect.needs) return "a pickle takes more values than it made";
          segments.back() += effect.delta;
        }
      }
    }
    switch (arg.kind) {
      case Arg::kUnknown:
        return "";  // LibTorch refuses what it does not know
      case Arg::kNone:
        if (op == '.') return "";     // STOP
        if (op == 0x94) ++memo_size;  // MEMOIZE
        break;
      case Arg::kFixed:
        if (size - i < static_cast<size_t>(arg.bytes)) return "a pickle ends inside an argument";
        if (op == 'q' || op == 'r' || op == 'h' || op == 'j') {  // BINPUT, LONG_BINPUT, BINGET, LONG_BINGET
          const uint64_t index = little_endian(p + i, arg.bytes);
          const bool put = op == 'q' || op == 'r';
          if (put ? index > memo_size : index >= memo_size)
            return std::string("a pickle ") + (put ? "stores to" : "reads") + " memo slot " + std::to_string(index) +
                   " of " + std::to_string(memo_size);
          if (put && index == memo_size) ++memo_size;
        }
        i += arg.bytes;
        break;
      case Arg::kCounted: {
        if (size - i < static_cast<size_t>(arg.bytes)) return "a pickle ends inside a length";
        const uint64_t length = little_endian(p + i, arg.bytes);
        i += arg.bytes;
        if (length > size - i)
          return "a pickle asks for " + std::to_string(length) + " bytes where " + std::to_string(size - i) +
                 " are left";
        i += length;
        break;
      }
      case Arg::kTwoLines:
        for (int line = 0; line < 2; ++line) {
          const void* end = std::memchr(p + i, '\n', size - i);
          if (!end) return "a pickle ends inside a global's name";
          i = static_cast<const unsigned char*>(end) - p + 1;
        }
        break;
    }
  }
  return "a pickle has no end";
}

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// One stored record of the zip archive: its name and where its bytes lie.
struct Record {
  std::string name;
  uint64_t method;  // 0: stored, 8: deflated
  uint64_t start;
  uint64_t size;          // as stored
  uint64_t uncompressed;  // as the directory declares it
};

// Walks the central directory; `visit` returns a problem ("" to go on). Records the walk
// cannot follow (zip64, a damaged directory) end it quietly: LibTorch's reader refuses those.
template <typename Visit>
std::string for_each_record(const char* data, size_t size, Visit visit) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  // The end-of-central-directory record: 22 bytes, plus a comment of up to 64 KiB.
  constexpr size_t kEndSize = 22;
  if (size < kEndSize) return "";
  size_t end = size - kEndSize + 1;
  const size_t lowest = size > kEndSize + 65535 ? size - kEndSize - 65535 : 0;
  do {
    --end;
    if (little_endian(p + end, 4) == 0x06054b50) break;
  } while (end > lowest);
  if (little_endian(p + end, 4) != 0x06054b50) return "";
  const uint64_t entries = little_endian(p + end + 10, 2);
  uint64_t at = little_endian(p + end + 16, 4);          // the central directory's offset
  if (entries == 0xFFFF || at == 0xFFFFFFFF) return "";  // zip64: left to LibTorch
  for (uint64_t e = 0; e < entries; ++e) {
    if (at + 46 > size || little_endian(p + at, 4) != 0x02014b50) return "";
    const uint64_t method = little_endian(p + at + 10, 2);
    const uint64_t stored_size = little_endian(p + at + 20, 4);
    const uint64_t uncompressed_size = little_endian(p + at + 24, 4);
    const uint64_t name_length = little_endian(p + at + 28, 2);
    const uint64_t extra_length = little_endian(p + at + 30, 2);
    const uint64_t comment_length = little_endian(p + at + 32, 2);
    const uint64_t local = little_endian(p + at + 42, 4);
    if (at + 46 + name_length > size) return "";
    const std::string name(data + at + 46, name_length);
    at += 46 + name_length + extra_length + comment_length;
    if (stored_size == 0xFFFFFFFF || uncompressed_size == 0xFFFFFFFF || local == 0xFFFFFFFF) continue;
    // A record whose local header is damaged cannot be read (miniz checks it), but the
    // others still are: go on to them (stopping here let a damaged first record hide a
    // crafted data.pkl from the checks; found by the fuzz target).
    if (local + 30 > size || little_endian(p + local, 4) != 0x04034b50) continue;
    const uint64_t start = local + 30 + little_endian(p + local + 26, 2) + little_endian(p + local + 28, 2);
    if (start > size || stored_size > size - start) return name + ": the record runs past the end of the file";
    std::string problem = visit(Record{name, method, start, stored_size, uncompressed_size});
    if (!problem.empty()) return problem;
  }
  return "";
}

bool is_identifier(const std::string& s, size_t& i) {
  if (i >= s.size() || !(std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_')) return false;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
  return true;
}

bool accept(const std::string& s, size_t& i, const char* literal) {
  const size_t n = std::strlen(literal);
  if (s.compare(i, n, literal) != 0) return false;
  i += n;
  return true;
}

// TYPE := NAME ('.' NAME)* ('[' TYPE (', ' TYPE)* ']')?   e.g. Tensor, Optional[bool],
// Tuple[float, float], __torch__.___torch_mangle_3.Module
bool is_type(const std::string& s, size_t& i, int depth = 0) {
  if (depth > 16 || !is_identifier(s, i)) return false;
  while (i < s.size() && s[i] == '.')
    if (!is_identifier(s, ++i)) return false;
  if (!accept(s, i, "[")) return true;
  do {
    if (!is_type(s, i, depth + 1)) return false;
  } while (accept(s, i, ", "));
  return accept(s, i, "]");
}

// A double-quoted name without escapes: an attribute, parameter or buffer name.
bool is_quoted_name(const std::string& s, size_t& i) {
  if (!accept(s, i, "\"")) return false;
  while (i < s.size() && s[i] != '"' && s[i] != '\\' && static_cast<unsigned char>(s[i]) >= 0x20) ++i;
  return accept(s, i, "\"");
}

// ["a", "b", ] as LibTorch prints a parameter or buffer list.
bool is_name_list(const std::string& s, size_t& i) {
  if (!accept(s, i, "[")) return false;
  while (is_quoted_name(s, i))
    if (!accept(s, i, ", ")) return false;
  return accept(s, i, "]");
}

// The lines LibTorch prints for a module archived by torch::serialize::OutputArchive:
// a class header, its parameter and buffer lists and one annotation per attribute.
bool is_archive_code_line(const std::string& line) {
  size_t i = 0;
  if (line.empty()) return true;
  if (accept(line, i, "class ")) {
    return is_identifier(line, i) && accept(line, i, "(") && is_identifier(line, i) && accept(line, i, "):") &&
           i == line.size();
  }
  if (!accept(line, i, "  ")) return false;
  if (accept(line, i, "__parameters__ = ") || accept(line, i, "__buffers__ = "))
    return is_name_list(line, i) && i == line.size();
  if (accept(line, i, "__annotations__")) {
    if (accept(line, i, " = []")) return i == line.size();
    return accept(line, i, "[") && is_quoted_name(line, i) && accept(line, i, "] = ") && is_type(line, i) &&
           i == line.size();
  }
  return is_identifier(line, i) && accept(line, i, " : ") && is_type(line, i) && i == line.size();
}

std::string code_problem(const std::string& name, const char* text, size_t size) {
  size_t line_number = 0, begin = 0;
  while (begin < size) {
    const void* newline = std::memchr(text + begin, '\n', size - begin);
    const size_t end = newline ? static_cast<const char*>(newline) - text : size;
    ++line_number;
    if (!is_archive_code_line(std::string(text + begin, end - begin)))
      return name + ": line " + std::to_string(line_number) + " is not a module declaration csan writes";
    begin = end + 1;
  }
  return "";
}

}  // namespace

std::string pickle_problem(const std::string& pickle) {
  return pickle_length_problem(reinterpret_cast<const unsigned char*>(pickle.data()), pickle.size());
}

// data.pkl, constants.pkl and the code's debug records (*.py.debug_pkl), which LibTorch
// unpickles too.
static bool is_pickle(const std::string& name) { return ends_with(name, ".pkl") || ends_with(name, ".debug_pkl"); }

std::string archive_problem(const char* data, size_t size) {
  // Pickles and code are small (tensor data lies in records of its own): a larger record
  // is crafted, and LibTorch would allocate what its header declares before inflating it.
  constexpr uint64_t kMaxRecordBytes = uint64_t{256} << 20;
  auto check = [](const std::string& name, const char* bytes, size_t length) -> std::string {
    if (!is_pickle(name)) return code_problem(name, bytes, length);
    const std::string problem = pickle_length_problem(reinterpret_cast<const unsigned char*>(bytes), length);
    return problem.empty() ? "" : name + ": " + problem;
  };
  std::vector<std::string> deflated;
  std::string problem = for_each_record(data, size, [&](const Record& record) -> std::string {
    const bool pickle = is_pickle(record.name);
    const bool code = record.name.find("/code/") != std::string::npos && ends_with(record.name, ".py");
    if (!pickle && !code) return "";
    if (record.uncompressed > kMaxRecordBytes)
      return record.name + ": declares " + std::to_string(record.uncompressed) + " bytes (csan writes far less)";
    if (record.method == 0) return check(record.name, data + record.start, record.size);
    // Deflate shrinks at most 1032:1; a larger ratio is a crafted size.
    if (record.method != 8 || record.uncompressed > 1032 * record.size + 1024)
      return record.name + ": a compressed record that deflate cannot have written";
    deflated.push_back(record.name);
    return "";
  });
  if (!problem.empty() || deflated.empty()) return problem;
  // LibTorch writes code records deflated: read them through its own zip reader (miniz),
  // whose record names drop the archive's top folder.
  try {
    caffe2::serialize::PyTorchStreamReader reader(
        std::make_shared<caffe2::serialize::MemoryReadAdapter>(data, static_cast<off_t>(size)));
    for (const auto& name : deflated) {
      const auto [bytes, length] = reader.getRecord(name.substr(name.find('/') + 1));
      problem = check(name, static_cast<const char*>(bytes.get()), length);
      if (!problem.empty()) return problem;
    }
  } catch (const c10::Error&) {
    return "";  // an archive LibTorch's reader refuses: it refuses it again when loading
  }
  return "";
}

bool tensor_within_storage(const torch::Tensor& t) {
  if (!t.defined()) return true;
  if (t.is_sparse() || t.is_quantized() || !t.has_storage()) return false;
  if (t.numel() == 0) return true;
  if (t.storage_offset() < 0) return false;
  // The last element's offset, in 128 bits: crafted sizes and strides may overflow 64.
  __int128 last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) < 0) return false;
    last += static_cast<__int128>(t.size(d) - 1) * t.stride(d);
  }
  return (last + 1) * static_cast<__int128>(t.element_size()) <= static_cast<__int128>(t.storage().nbytes());
}

namespace {

bool value_within_storage(const c10::IValue& value) {
  if (value.isTensor()) return tensor_within_storage(value.toTensor());
  if (value.isList()) {
    for (const c10::IValue& item : value.toListRef())
      if (!value_within_storage(item)) return false;
  }
  if (value.isTuple()) {
    for (const c10::IValue& item : value.toTupleRef().elements())
      if (!value_within_storage(item)) return false;
  }
  return true;
}

std::string tensor_outside_storage(torch::serialize::InputArchive& archive, const std::string& prefix) {
  for (const std::string& key : archive.keys()) {
    c10::IValue value;
    if (!archive.try_read(key, value)) continue;
    if (value.isObject()) {  // a nested archive
      torch::serialize::InputArchive nested;
      if (!archive.try_read(key, nested)) continue;
      std::string outside = tensor_outside_storage(nested, prefix + key + ".");
      if (!outside.empty()) return outside;
    } else if (!value_within_storage(value)) {
      return prefix + key;
    }
  }
  return "";
}

}  // namespace

std::string tensor_outside_storage(torch::serialize::InputArchive& archive) {
  return tensor_outside_storage(archive, "");
}

}  // namespace csan::checkpoint
