#include "toolkit/checkpoint/archive_check.h"

#include <cstdint>
#include <cstring>

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

std::string pickle_length_problem(const unsigned char* p, size_t size) {
  size_t i = 0;
  while (i < size) {
    const unsigned char op = p[i++];
    const OpcodeArg arg = opcode_arg(op);
    switch (arg.kind) {
      case Arg::kUnknown:
        return "";  // LibTorch refuses what it does not know
      case Arg::kNone:
        if (op == '.') return "";  // STOP
        break;
      case Arg::kFixed:
        if (size - i < static_cast<size_t>(arg.bytes)) return "a pickle ends inside an argument";
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

}  // namespace

std::string archive_length_problem(const char* data, size_t size) {
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
    const uint64_t name_length = little_endian(p + at + 28, 2);
    const uint64_t extra_length = little_endian(p + at + 30, 2);
    const uint64_t comment_length = little_endian(p + at + 32, 2);
    const uint64_t local = little_endian(p + at + 42, 4);
    if (at + 46 + name_length > size) return "";
    const std::string name(data + at + 46, name_length);
    at += 46 + name_length + extra_length + comment_length;
    if (!ends_with(name, ".pkl") || method != 0 || stored_size == 0xFFFFFFFF || local == 0xFFFFFFFF) continue;
    if (local + 30 > size || little_endian(p + local, 4) != 0x04034b50) return "";
    const uint64_t start = local + 30 + little_endian(p + local + 26, 2) + little_endian(p + local + 28, 2);
    if (start > size || stored_size > size - start) return name + ": the record runs past the end of the file";
    const std::string problem = pickle_length_problem(p + start, stored_size);
    if (!problem.empty()) return name + ": " + problem;
  }
  return "";
}

}  // namespace csan::checkpoint
