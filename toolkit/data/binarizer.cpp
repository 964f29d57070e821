#include "toolkit/data/binarizer.h"

#include "toolkit/data/indexed_dataset_writer.h"
#include "toolkit/data/parallel_chunks.h"

namespace csan::data {

namespace {

// Progress is published every this many lines so workers do not contend on the counter.
constexpr size_t kProgressStride = 4096;

void report(ProgressCounter* progress, size_t done_in_batch) {
  if (progress) progress->fetch_add(static_cast<int64_t>(done_in_batch), std::memory_order_relaxed);
}

BinarizedSplit concatenate(std::vector<BinarizedSplit>& parts) {
  if (parts.size() == 1) return std::move(parts[0]);
  BinarizedSplit all;
  size_t ids = 0, sizes = 0;
  for (const auto& p : parts) ids += p.ids.size(), sizes += p.sizes.size();
  all.ids.reserve(ids);
  all.sizes.reserve(sizes);
  for (const auto& p : parts) all.append(p);
  return all;
}

}  // namespace

void BinarizedSplit::append(const BinarizedSplit& other) {
  ids.insert(ids.end(), other.ids.begin(), other.ids.end());
  sizes.insert(sizes.end(), other.sizes.begin(), other.sizes.end());
  unknown += other.unknown;
}

std::vector<std::string> encode_to_pieces(const text::SentencePieceModel& model,
                                          const std::vector<std::string>& lines, int workers,
                                          ProgressCounter* progress) {
  std::vector<std::string> out(lines.size());
  parallel_chunks(lines.size(), workers, [&](size_t, size_t begin, size_t end) {
    std::vector<std::string> pieces;
    for (size_t i = begin; i < end; ++i) {
      model.encode(lines[i], pieces);
      std::string& joined = out[i];
      for (const auto& piece : pieces) {
        if (!joined.empty()) joined += ' ';
        joined += piece;
      }
      if ((i - begin + 1) % kProgressStride == 0) report(progress, kProgressStride);
    }
    report(progress, (end - begin) % kProgressStride);
  });
  return out;
}

BinarizedSplit binarize_pieces(const text::Dictionary& dict, const std::vector<std::string>& piece_lines,
                               const std::vector<bool>& keep, int workers, ProgressCounter* progress) {
  std::vector<BinarizedSplit> parts(chunk_count(piece_lines.size(), workers));
  parallel_chunks(piece_lines.size(), workers, [&](size_t chunk, size_t begin, size_t end) {
    BinarizedSplit& part = parts[chunk];
    for (size_t i = begin; i < end; ++i) {
      if (!keep.empty() && !keep[i]) continue;
      auto ids = dict.encode_line(piece_lines[i], true, &part.unknown);
      part.ids.insert(part.ids.end(), ids.begin(), ids.end());
      part.sizes.push_back(static_cast<int32_t>(ids.size()));
      if ((i - begin + 1) % kProgressStride == 0) report(progress, kProgressStride);
    }
    report(progress, (end - begin) % kProgressStride);
  });
  return concatenate(parts);
}

BinarizedSplit encode_and_binarize(const text::SentencePieceModel& model, const text::Dictionary& dict,
                                   const std::vector<std::string>& lines, int workers,
                                   ProgressCounter* progress) {
  std::vector<BinarizedSplit> parts(chunk_count(lines.size(), workers));
  parallel_chunks(lines.size(), workers, [&](size_t chunk, size_t begin, size_t end) {
    BinarizedSplit& part = parts[chunk];
    std::vector<std::string> pieces;
    for (size_t i = begin; i < end; ++i) {
      model.encode(lines[i], pieces);
      auto ids = dict.encode(pieces, true, &part.unknown);
      part.ids.insert(part.ids.end(), ids.begin(), ids.end());
      part.sizes.push_back(static_cast<int32_t>(ids.size()));
      if ((i - begin + 1) % kProgressStride == 0) report(progress, kProgressStride);
    }
    report(progress, (end - begin) % kProgressStride);
  });
  return concatenate(parts);
}

void write_dataset(const std::string& prefix, const BinarizedSplit& split, size_t vocab_size) {
  IndexedDatasetWriter writer(prefix, dtype_for_vocab_size(vocab_size));
  const int32_t* next = split.ids.data();
  for (int32_t size : split.sizes) {
    writer.add_item(next, static_cast<size_t>(size));
    next += size;
  }
  writer.finish();
}

}  // namespace csan::data
