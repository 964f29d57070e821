// The TensorBoard messages csan writes (tensorboard/compat/proto event.proto and
// summary.proto: Event, Summary, Summary.Value, and SessionLog for restarts), encoded by
// hand in protobuf's wire format.
//
// Why not protoc-generated code over libprotobuf: for 4 small messages (9 fields), which
// take ~60 lines to encode, it would add a code-generation step to the build and tie core
// (linked by every executable) to the system libprotobuf, which a build whose SentencePiece
// carries its own protobuf (tools/build-sentencepiece.sh --builtin-protobuf) does not link.
// The encoder's output was compared once with libprotobuf 3.21.12 serializing the same
// messages from a .proto with TensorBoard's field numbers and oneofs: byte-identical.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace csan {

struct TensorboardScalar {
  std::string tag;
  double value;  // stored as Summary.Value.simple_value, a float
};

// The first event of every file: file_version "brain.Event:2".
std::string encode_file_version_event(double wall_time);
// An Event whose Summary holds one simple_value per scalar.
std::string encode_scalars_event(double wall_time, int64_t step, const std::vector<TensorboardScalar>& scalars);
// SessionLog START at `step`: TensorBoard's Python reader then drops every event it has
// already loaded for the run with a step >= `step` (how it learns of a restart).
std::string encode_session_start_event(double wall_time, int64_t step);

// What a resuming writer needs to know of an Event it may not have written itself.
struct EventOutline {
  int64_t step = 0;
  bool has_summary = false;
};
// nullopt when `bytes` is not a well-formed protobuf message.
std::optional<EventOutline> outline_event(std::string_view bytes);

}  // namespace csan
