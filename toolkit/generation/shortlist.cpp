#include "toolkit/generation/shortlist.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/crc32c.h"
#include "toolkit/core/error.h"
#include "toolkit/data/indexed_dataset.h"

namespace csan::generation {

namespace {

constexpr const char* kMagic = "csan-shortlist 1";

std::vector<int64_t> special_ids(const text::Dictionary& d) { return {d.bos(), d.pad(), d.eos(), d.unk()}; }

std::vector<int64_t> distinct(const std::vector<int64_t>& ids, int64_t size) {
  std::vector<int64_t> out;
  for (int64_t id : ids)
    if (id >= 0 && id < size) out.push_back(id);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Reads one line of ids "N ID..." (candidates or "frequent N ID...") from `fields`.
std::vector<int64_t> read_ids(std::istringstream& fields, int64_t limit, const std::string& where) {
  int64_t count = -1;
  if (!(fields >> count) || count < 0) throw Error(where + ": expected a count of target ids");
  std::vector<int64_t> ids(static_cast<size_t>(count));
  for (auto& id : ids)
    if (!(fields >> id) || id < 0 || id >= limit)
      throw Error(where + ": a target id is missing or outside the target dictionary (size " + std::to_string(limit) +
                  ")");
  std::string rest;
  if (fields >> rest) throw Error(where + ": more ids than its count says");
  return ids;
}

}  // namespace

Shortlist Shortlist::build(const std::vector<std::vector<int64_t>>& sources,
                           const std::vector<std::vector<int64_t>>& targets, const text::Dictionary& src_dict,
                           const text::Dictionary& tgt_dict, const ShortlistOptions& options) {
  if (sources.size() != targets.size()) throw Error("shortlist: sources and targets differ in number");
  if (options.top_k < 1 || options.frequent < 0) throw Error("shortlist: --top-k must be positive, --frequent >= 0");
  Shortlist s;
  s.source_size_ = src_dict.size();
  s.target_size_ = tgt_dict.size();
  s.source_crc_ = crc32c(src_dict.to_text());
  s.target_crc_ = crc32c(tgt_dict.to_text());
  s.specials_ = special_ids(tgt_dict);
  const int64_t nspecial = tgt_dict.nspecial();
  std::vector<int64_t> sentences_with_source(s.source_size_), sentences_with_target(s.target_size_),
      occurrences(s.target_size_);
  std::vector<std::unordered_map<int64_t, int64_t>> together(s.source_size_);
  for (size_t i = 0; i < sources.size(); ++i) {
    for (int64_t t : targets[i])
      if (t >= nspecial && t < s.target_size_) ++occurrences[t];
    const auto src = distinct(sources[i], s.source_size_);
    auto tgt = distinct(targets[i], s.target_size_);
    tgt.erase(std::remove_if(tgt.begin(), tgt.end(), [&](int64_t t) { return t < nspecial; }), tgt.end());
    for (int64_t t : tgt) ++sentences_with_target[t];
    for (int64_t w : src) {
      ++sentences_with_source[w];
      for (int64_t t : tgt) ++together[w][t];
    }
  }
  s.candidates_.resize(s.source_size_);
  for (int64_t w = 0; w < s.source_size_; ++w) {
    std::vector<std::pair<double, int64_t>> scored;
    for (const auto& [t, both] : together[w])
      scored.emplace_back(2.0 * double(both) / double(sentences_with_source[w] + sentences_with_target[t]), t);
    const size_t keep = std::min<size_t>(scored.size(), static_cast<size_t>(options.top_k));
    std::partial_sort(scored.begin(), scored.begin() + keep, scored.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (size_t i = 0; i < keep; ++i) s.candidates_[w].push_back(scored[i].second);
  }
  std::vector<int64_t> by_frequency;
  for (int64_t t = nspecial; t < s.target_size_; ++t)
    if (occurrences[t] > 0) by_frequency.push_back(t);
  std::stable_sort(by_frequency.begin(), by_frequency.end(),
                   [&](int64_t a, int64_t b) { return occurrences[a] > occurrences[b]; });
  by_frequency.resize(std::min<size_t>(by_frequency.size(), static_cast<size_t>(options.frequent)));
  s.frequent_ = by_frequency;
  return s;
}

void Shortlist::save(const std::string& path) const {
  std::ostringstream out;
  out << kMagic << "\n";
  out << "source-dictionary " << source_size_ << " " << source_crc_ << "\n";
  out << "target-dictionary " << target_size_ << " " << target_crc_ << "\n";
  auto ids = [&](const std::vector<int64_t>& v) {
    out << v.size();
    for (int64_t id : v) out << " " << id;
    out << "\n";
  };
  out << "frequent ";
  ids(frequent_);
  for (const auto& c : candidates_) ids(c);
  write_file_atomically(path, out.str());
}

Shortlist Shortlist::load(const std::string& path, const text::Dictionary& src_dict, const text::Dictionary& tgt_dict) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open shortlist");
  std::string line;
  int64_t number = 0;
  auto next = [&](const std::string& what) -> std::istringstream {
    ++number;
    if (!std::getline(in, line)) throw Error(path + ":" + std::to_string(number) + ": ends before " + what);
    return std::istringstream(line);
  };
  auto where = [&] { return path + ":" + std::to_string(number); };
  next("the header");
  if (line != kMagic) throw Error(where() + ": not a csan shortlist (expected '" + std::string(kMagic) + "')");
  Shortlist s;
  auto dictionary = [&](const char* name, const text::Dictionary& expected, int64_t& size, uint32_t& crc) {
    auto fields = next(std::string(name) + " line");
    std::string key;
    if (!(fields >> key >> size >> crc) || key != name) throw Error(where() + ": expected '" + name + " SIZE CRC'");
    if (size != expected.size() || crc != crc32c(expected.to_text()))
      throw Error(path + ": built for another " + std::string(name) + " (" + std::to_string(size) +
                  " entries) than the model's (" + std::to_string(expected.size()) + " entries)");
  };
  dictionary("source-dictionary", src_dict, s.source_size_, s.source_crc_);
  dictionary("target-dictionary", tgt_dict, s.target_size_, s.target_crc_);
  {
    auto fields = next("the frequent line");
    std::string key;
    if (!(fields >> key) || key != "frequent") throw Error(where() + ": expected 'frequent N ID...'");
    s.frequent_ = read_ids(fields, s.target_size_, where());
  }
  s.candidates_.resize(s.source_size_);
  for (int64_t w = 0; w < s.source_size_; ++w) {
    auto fields = next("the candidates of source id " + std::to_string(w));
    s.candidates_[w] = read_ids(fields, s.target_size_, where());
  }
  if (std::getline(in, line)) throw Error(path + ":" + std::to_string(number + 1) + ": more lines than source ids");
  s.specials_ = special_ids(tgt_dict);
  return s;
}

torch::Tensor Shortlist::vocabulary_for(const torch::Tensor& src_tokens, const std::vector<int64_t>& extra) const {
  std::vector<char> kept(static_cast<size_t>(target_size_), 0);
  auto keep = [&](int64_t t) {
    if (t >= 0 && t < target_size_) kept[t] = 1;
  };
  for (int64_t t : specials_) keep(t);
  for (int64_t t : frequent_) keep(t);
  for (int64_t t : extra) keep(t);
  const torch::Tensor flat = src_tokens.to(torch::kLong).contiguous().view(-1);
  const int64_t* p = flat.data_ptr<int64_t>();
  for (int64_t i = 0; i < flat.numel(); ++i)
    if (p[i] >= 0 && p[i] < source_size_)
      for (int64_t t : candidates_[p[i]]) keep(t);
  std::vector<int64_t> ids;
  for (int64_t t = 0; t < target_size_; ++t)
    if (kept[t]) ids.push_back(t);
  return torch::tensor(ids, torch::kLong);
}

Shortlist build_shortlist(const std::string& data_dir, const std::string& split, const std::string& src_lang,
                          const std::string& tgt_lang, const ShortlistOptions& options) {
  const std::string prefix = data_dir + "/" + split + "." + src_lang + "-" + tgt_lang + ".";
  for (const auto& lang : {src_lang, tgt_lang})
    if (!std::filesystem::exists(prefix + lang + ".idx"))
      throw Error(prefix + lang + ".idx: not found (binarize the data with csan-preprocess)");
  const auto src_dict = text::Dictionary::load(data_dir + "/dict." + src_lang + ".txt");
  const auto tgt_dict = text::Dictionary::load(data_dir + "/dict." + tgt_lang + ".txt");
  data::MMapIndexedDataset src(prefix + src_lang), tgt(prefix + tgt_lang);
  if (src.size() != tgt.size())
    throw Error(prefix + "{" + src_lang + "," + tgt_lang + "}: different numbers of sentences");
  std::vector<std::vector<int64_t>> sources(src.size()), targets(tgt.size());
  for (size_t i = 0; i < src.size(); ++i) {
    sources[i] = src.get(i);
    targets[i] = tgt.get(i);
  }
  return Shortlist::build(sources, targets, src_dict, tgt_dict, options);
}

}  // namespace csan::generation
