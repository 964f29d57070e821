#include "toolkit/core/tensorboard_event.h"

#include <cstring>

namespace csan {

namespace {
// Field numbers from TensorBoard's event.proto / summary.proto.
enum : uint32_t {
  kEventWallTime = 1,     // double
  kEventStep = 2,         // int64
  kEventFileVersion = 3,  // string
  kEventSummary = 5,      // Summary
  kEventSessionLog = 7,   // SessionLog
  kSummaryValue = 1,      // repeated Summary.Value
  kValueTag = 1,          // string
  kValueSimpleValue = 2,  // float
  kSessionLogStatus = 1,  // enum SessionStatus
  kSessionStart = 1,
};
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_tag(std::string& out, uint32_t field, WireType type) { put_varint(out, (uint64_t{field} << 3) | type); }
void put_fixed(std::string& out, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}
void put_bytes(std::string& out, uint32_t field, std::string_view bytes) {
  put_tag(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out.append(bytes);
}
// wall_time and step; proto3 leaves zero-valued fields out, and so do we.
std::string event_head(double wall_time, int64_t step) {
  std::string out;
  uint64_t bits;
  std::memcpy(&bits, &wall_time, 8);
  put_tag(out, kEventWallTime, kFixed64);
  put_fixed(out, bits, 8);
  if (step != 0) {
    put_tag(out, kEventStep, kVarint);
    put_varint(out, static_cast<uint64_t>(step));  // negative int64s take 10 bytes, as in protobuf
  }
  return out;
}

bool get_varint(std::string_view bytes, size_t& at, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && at < bytes.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(bytes[at++]);
    value |= uint64_t(byte & 0x7F) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}
}  // namespace

std::string encode_file_version_event(double wall_time) {
  std::string out = event_head(wall_time, 0);
  put_bytes(out, kEventFileVersion, "brain.Event:2");
  return out;
}

std::string encode_scalars_event(double wall_time, int64_t step, const std::vector<TensorboardScalar>& scalars) {
  std::string summary;
  for (const auto& scalar : scalars) {
    std::string value;
    put_bytes(value, kValueTag, scalar.tag);
    // simple_value is a member of Summary.Value's oneof, so it is written even when 0
    // (a reader tells a scalar from an image or histogram by which member is present).
    const float simple = static_cast<float>(scalar.value);
    uint32_t bits;
    std::memcpy(&bits, &simple, 4);
    put_tag(value, kValueSimpleValue, kFixed32);
    put_fixed(value, bits, 4);
    put_bytes(summary, kSummaryValue, value);
  }
  std::string out = event_head(wall_time, step);
  put_bytes(out, kEventSummary, summary);
  return out;
}

std::string encode_session_start_event(double wall_time, int64_t step) {
  std::string session_log;
  put_tag(session_log, kSessionLogStatus, kVarint);
  put_varint(session_log, kSessionStart);
  std::string out = event_head(wall_time, step);
  put_bytes(out, kEventSessionLog, session_log);
  return out;
}

std::optional<EventOutline> outline_event(std::string_view bytes) {
  EventOutline outline;
  size_t at = 0;
  while (at < bytes.size()) {
    uint64_t tag, value;
    if (!get_varint(bytes, at, tag)) return std::nullopt;
    const uint64_t field = tag >> 3;
    switch (tag & 7) {
      case kVarint:
        if (!get_varint(bytes, at, value)) return std::nullopt;
        if (field == kEventStep) outline.step = static_cast<int64_t>(value);
        break;
      case kFixed64:
        if (bytes.size() - at < 8) return std::nullopt;
        at += 8;
        break;
      case kFixed32:
        if (bytes.size() - at < 4) return std::nullopt;
        at += 4;
        break;
      case kLengthDelimited:
        if (!get_varint(bytes, at, value) || value > bytes.size() - at) return std::nullopt;
        at += value;
        if (field == kEventSummary) outline.has_summary = true;
        break;
      default:  // groups (3, 4) are not used by these messages; 6 and 7 do not exist
        return std::nullopt;
    }
  }
  return outline;
}

}  // namespace csan
