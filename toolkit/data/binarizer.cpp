#include "toolkit/data/binarizer.h"

#include <algorithm>
#include <unordered_map>

#include "toolkit/data/indexed_dataset_writer.h"
#include "toolkit/data/parallel_chunks.h"

namespace csan::data {

void BinarizedSplit::append(const BinarizedSplit& other) {
  ids.insert(ids.end(), other.ids.begin(), other.ids.end());
  sizes.insert(sizes.end(), other.sizes.begin(), other.sizes.end());
  unknown += other.unknown;
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

namespace {

// Progress is published every this many lines so workers do not contend on the counter.
constexpr size_t kProgressStride = 4096;

void report(ProgressCounter* progress, size_t lines) {
  if (progress) progress->fetch_add(static_cast<int64_t>(lines), std::memory_order_relaxed);
}

// SentencePiece id -> dictionary id, and whether that is a replacement by <unk> (a
// piece missing from the dictionary; the literal "<unk>" piece is not one).
class PieceMapper {
 public:
  PieceMapper(const text::SentencePieceModel& model, const text::Dictionary& dict) : dict_(dict) {
    to_dict_.resize(static_cast<size_t>(model.vocab_size()));
    replaced_.resize(to_dict_.size());
    for (int id = 0; id < model.vocab_size(); ++id) {
      const std::string& piece = model.piece(id);
      to_dict_[id] = dict.index(piece);
      replaced_[id] = to_dict_[id] == dict.unk() && piece != dict.symbol(dict.unk());
    }
  }

  int32_t map(int32_t id, int64_t& unknown) const {
    unknown += replaced_[id];
    return to_dict_[id];
  }
  int32_t map_surface(const std::string& surface, int64_t& unknown) const {
    int32_t id = dict_.index(surface);
    unknown += id == dict_.unk() && surface != dict_.symbol(dict_.unk());
    return id;
  }

 private:
  const text::Dictionary& dict_;
  std::vector<int32_t> to_dict_;
  std::vector<uint8_t> replaced_;
};

// Encodes one line, storing unknown-character pieces as surfaces (encode() is only
// called for the rare lines that have one).
class LineEncoder {
 public:
  explicit LineEncoder(const text::SentencePieceModel& model) : model_(model), unk_(model.unk_id()) {}

  // Calls on_id(id) for a known piece and on_surface(text) for an unknown one.
  template <typename OnId, typename OnSurface>
  void encode(const std::string& line, OnId&& on_id, OnSurface&& on_surface) {
    model_.encode_ids(line, ids_);
    if (std::find(ids_.begin(), ids_.end(), unk_) == ids_.end()) {
      for (int id : ids_) on_id(id);
      return;
    }
    model_.encode(line, pieces_);  // the same segmentation, with surface text
    for (size_t k = 0; k < ids_.size(); ++k) {
      if (ids_[k] == unk_) {
        on_surface(pieces_[k]);
      } else {
        on_id(ids_[k]);
      }
    }
  }

 private:
  const text::SentencePieceModel& model_;
  const int unk_;
  std::vector<int> ids_;
  std::vector<std::string> pieces_;
};

template <typename PerLine>
void for_lines(size_t begin, size_t end, ProgressCounter* progress, PerLine&& per_line) {
  for (size_t i = begin; i < end; ++i) {
    per_line(i);
    if ((i - begin + 1) % kProgressStride == 0) report(progress, kProgressStride);
  }
  report(progress, (end - begin) % kProgressStride);
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

PieceCorpus encode_corpus(const text::SentencePieceModel& model, const std::vector<std::string>& lines,
                          int workers, ProgressCounter* progress) {
  std::vector<PieceCorpus> parts(chunk_count(lines.size(), workers));
  parallel_chunks(lines.size(), workers, [&](size_t chunk, size_t begin, size_t end) {
    PieceCorpus& part = parts[chunk];
    LineEncoder encoder(model);
    for_lines(begin, end, progress, [&](size_t i) {
      encoder.encode(
          lines[i], [&](int id) { part.tokens.push_back(id); },
          [&](const std::string& surface) {
            part.tokens.push_back(-1 - static_cast<int32_t>(part.surfaces.size()));
            part.surfaces.push_back(surface);
          });
      part.offsets.push_back(part.tokens.size());
    });
  });

  PieceCorpus all;
  all.model = &model;
  for (const auto& part : parts) {
    const size_t base = all.tokens.size();
    const int32_t surface_base = static_cast<int32_t>(all.surfaces.size());
    for (int32_t token : part.tokens) all.tokens.push_back(token >= 0 ? token : token - surface_base);
    for (size_t k = 1; k < part.offsets.size(); ++k) all.offsets.push_back(base + part.offsets[k]);
    all.surfaces.insert(all.surfaces.end(), part.surfaces.begin(), part.surfaces.end());
  }
  return all;
}

text::Dictionary build_dictionary(const std::vector<const PieceCorpus*>& corpora, const std::vector<bool>& keep,
                                  int64_t threshold, int64_t nwords, int padding_factor) {
  text::Dictionary dict;
  for (const PieceCorpus* corpus : corpora) {
    std::vector<int64_t> counts(static_cast<size_t>(corpus->model->vocab_size()), 0);
    std::unordered_map<std::string, int64_t> surface_counts;
    for (size_t i = 0; i < corpus->lines(); ++i) {
      if (!keep.empty() && !keep[i]) continue;
      for (size_t t = corpus->offsets[i]; t < corpus->offsets[i + 1]; ++t) {
        int32_t token = corpus->tokens[t];
        if (token >= 0) {
          ++counts[token];
        } else {
          ++surface_counts[corpus->surfaces[-1 - token]];
        }
      }
    }
    // Insertion order does not matter: finalize() orders by count, then symbol.
    for (size_t id = 0; id < counts.size(); ++id)
      if (counts[id] > 0) dict.add_symbol(corpus->model->piece(static_cast<int>(id)), counts[id]);
    for (const auto& [surface, count] : surface_counts) dict.add_symbol(surface, count);
  }
  dict.finalize(threshold, nwords, padding_factor);
  return dict;
}

BinarizedSplit binarize_corpus(const text::Dictionary& dict, const PieceCorpus& corpus,
                               const std::vector<bool>& keep, int workers, ProgressCounter* progress) {
  const PieceMapper mapper(*corpus.model, dict);
  std::vector<BinarizedSplit> parts(chunk_count(corpus.lines(), workers));
  parallel_chunks(corpus.lines(), workers, [&](size_t chunk, size_t begin, size_t end) {
    BinarizedSplit& part = parts[chunk];
    for_lines(begin, end, progress, [&](size_t i) {
      if (!keep.empty() && !keep[i]) return;
      for (size_t t = corpus.offsets[i]; t < corpus.offsets[i + 1]; ++t) {
        int32_t token = corpus.tokens[t];
        part.ids.push_back(token >= 0 ? mapper.map(token, part.unknown)
                                      : mapper.map_surface(corpus.surfaces[-1 - token], part.unknown));
      }
      part.ids.push_back(dict.eos());
      part.sizes.push_back(static_cast<int32_t>(corpus.length(i) + 1));
    });
  });
  return concatenate(parts);
}

BinarizedSplit encode_and_binarize(const text::SentencePieceModel& model, const text::Dictionary& dict,
                                   const std::vector<std::string>& lines, int workers,
                                   ProgressCounter* progress) {
  const PieceMapper mapper(model, dict);
  std::vector<BinarizedSplit> parts(chunk_count(lines.size(), workers));
  parallel_chunks(lines.size(), workers, [&](size_t chunk, size_t begin, size_t end) {
    BinarizedSplit& part = parts[chunk];
    LineEncoder encoder(model);
    for_lines(begin, end, progress, [&](size_t i) {
      const size_t before = part.ids.size();
      encoder.encode(
          lines[i], [&](int id) { part.ids.push_back(mapper.map(id, part.unknown)); },
          [&](const std::string& surface) { part.ids.push_back(mapper.map_surface(surface, part.unknown)); });
      part.ids.push_back(dict.eos());
      part.sizes.push_back(static_cast<int32_t>(part.ids.size() - before));
    });
  });
  return concatenate(parts);
}

}  // namespace csan::data
