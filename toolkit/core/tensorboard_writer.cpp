#include "toolkit/core/tensorboard_writer.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/tfrecord.h"

namespace fs = std::filesystem;

namespace csan {

namespace {
double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool is_events_file(const fs::directory_entry& entry) {
  return entry.is_regular_file() && entry.path().filename().string().find("tfevents") != std::string::npos &&
         entry.path().filename().string().find(".tmp.") == std::string::npos;  // AtomicFile's temporaries
}

// TensorBoard reads a run's files in name order and never returns to an earlier one, so a
// new file must sort after every existing one, even if the clock went back or another
// host wrote the same second.
std::string new_events_file_name(const fs::path& split_dir) {
  std::string last;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(split_dir, ec))
    if (is_events_file(entry)) last = std::max(last, entry.path().filename().string());
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  static int counter = 0;
  const int n = counter++;
  for (long long seconds = static_cast<long long>(now_seconds());; ++seconds) {
    char name[400];
    std::snprintf(name, sizeof name, "events.out.tfevents.%010lld.%s.%d.%d", seconds, host,
                  static_cast<int>(::getpid()), n);
    if (name > last) return name;
  }
}

void check_split_name(const std::string& split) {
  if (split.empty() || split == "." || split == ".." || split.find('/') != std::string::npos)
    throw Error("TensorBoard split name '" + split + "': must be a plain folder name (train, valid, ...)");
}
}  // namespace

TensorboardWriter::TensorboardWriter(std::string log_dir, std::optional<int64_t> resume_step)
    : log_dir_(std::move(log_dir)), resume_step_(resume_step) {
  std::error_code ec;
  fs::create_directories(log_dir_, ec);
  if (ec || !fs::is_directory(log_dir_))
    throw Error(log_dir_ + ": cannot create TensorBoard log directory: " +
                (ec ? ec.message() : std::string("not a directory")));
  // Fail now, not at the first log line an hour into training (access() says yes to root
  // even on a read-only file system, so try it).
  const std::string probe = (fs::path(log_dir_) / (".csan-write-test." + std::to_string(::getpid()))).string();
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (!f) throw Error(log_dir_ + ": TensorBoard log directory is not writable: " + std::strerror(errno));
  std::fclose(f);
  std::remove(probe.c_str());
  if (resume_step_) truncate_tensorboard_events(log_dir_, *resume_step_);
}

TensorboardWriter::~TensorboardWriter() {
  for (auto& [split, file] : files_) std::fclose(file);
}

std::FILE* TensorboardWriter::file_for(const std::string& split) {
  if (auto it = files_.find(split); it != files_.end()) return it->second;
  check_split_name(split);
  const fs::path dir = fs::path(log_dir_) / split;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot create TensorBoard run directory: " + ec.message());
  const std::string path = (dir / new_events_file_name(dir)).string();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) throw Error(path + ": cannot write: " + std::strerror(errno));
  files_[split] = file;
  paths_[split] = path;
  const double wall = now_seconds();
  append(split, file, encode_file_version_event(wall));
  if (resume_step_) append(split, file, encode_session_start_event(wall, *resume_step_ + 1));
  return file;
}

void TensorboardWriter::append(const std::string& split, std::FILE* file, const std::string& event) {
  const std::string record = frame_tfrecord(event);
  if (std::fwrite(record.data(), 1, record.size(), file) != record.size() || std::fflush(file) != 0)
    throw Error(paths_[split] + ": write failed: " + std::strerror(errno));
}

void TensorboardWriter::add_scalars(const std::string& split, int64_t step,
                                    const std::vector<TensorboardScalar>& scalars) {
  std::FILE* file = file_for(split);
  append(split, file, encode_scalars_event(now_seconds(), step, scalars));
}

size_t truncate_tensorboard_events(const std::string& log_dir, int64_t last_kept_step) {
  size_t removed = 0;
  std::error_code ec;
  for (const auto& split : fs::directory_iterator(log_dir, ec)) {
    if (!split.is_directory()) continue;
    for (const auto& entry : fs::directory_iterator(split.path())) {
      if (!is_events_file(entry)) continue;
      const std::string path = entry.path().string();
      const std::string bytes = read_file(path);
      const TfRecordScan scan = scan_tfrecords(bytes, path);
      std::string kept;
      size_t removed_here = 0;
      for (const TfRecord& record : scan.records) {
        const auto outline = outline_event(record.data);
        if (!outline)
          throw Error(path + ": byte " + std::to_string(record.offset) + ": record is not a TensorBoard Event");
        if (outline->step > last_kept_step) {
          ++removed_here;
          continue;
        }
        kept.append(bytes, record.offset, record.size);
      }
      if (removed_here > 0 || scan.complete_bytes != bytes.size()) write_file_atomically(path, kept);
      removed += removed_here;
    }
  }
  if (ec) throw Error(log_dir + ": cannot list TensorBoard log directory: " + ec.message());
  return removed;
}

}  // namespace csan
