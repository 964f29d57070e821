// The TensorBoard messages csan writes (tensorboard/compat/proto event.proto and
// summary.proto: Event, Summary, Summary.Value, and SessionLog for restarts), encoded by
// hand in protobuf's wire format.
//
// Why not Debian's libprotobuf (measured with protobuf 3.21.12, LibTorch 1.13, Debian 12):
// - LibTorch + libprotobuf + protoc-generated Event/Summary in one program works, because
//   Debian's libtorch_cpu.so itself links libprotobuf.so.32 (no second copy).
// - libsentencepiece + libprotobuf crashes before main(): libsentencepiece exports its own
//   bundled protobuf (1,165 google::protobuf symbols), which interposes on libprotobuf's,
//   and libprotobuf's static initializer segfaults registering descriptor.proto.
//   csan-preprocess and csan-score link libsentencepiece, and this writer belongs with
//   the torch-free logging in core, which every executable links.
// - Generated code would also make protoc (protobuf-compiler, not installed by default)
//   a build dependency, for 4 small messages (9 fields) that take ~60 lines to encode.
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
