#include "toolkit/commands/checkpoint_vocabulary.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "toolkit/checkpoint/format3_names.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/remove_tree.h"
#include "toolkit/safetensors/reader.h"

namespace fs = std::filesystem;

namespace csan::commands {

namespace {

bool is_zip_archive(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[2] = {0, 0};
  in.read(magic, 2);
  return in && magic[0] == 'P' && magic[1] == 'K';
}

}  // namespace

CheckpointVocabulary read_checkpoint_vocabulary(const std::string& path) {
  if (!fs::exists(path)) throw Error(path + ": no such checkpoint", ErrorKind::missing_file);
  if (is_zip_archive(path))
    throw Error(path + ": a format 1/2 checkpoint; convert it to format 3 first (tools/convert-checkpoint)");
  const safetensors::Reader reader(path, safetensors::ChecksumPolicy::kRequire);
  const auto& meta = reader.metadata();
  auto text = [&](const std::string& key) {
    const auto it = meta.find(key);
    return it == meta.end() ? std::string() : it->second;
  };
  if (text(checkpoint::format3::kFormat).empty())
    throw Error(path + ": not a csan checkpoint (no " + checkpoint::format3::kFormat + ")");
  if (text(checkpoint::format3::kTask) != "translation")
    throw Error(path + ": a " + text(checkpoint::format3::kTask) + " checkpoint, not a translation one");
  CheckpointVocabulary v;
  const std::string data = checkpoint::format3::kDataPrefix;
  v.src_lang = text(data + "src_lang");
  v.tgt_lang = text(data + "tgt_lang");
  v.src_dict = text(data + "src_dict");
  v.tgt_dict = text(data + "tgt_dict");
  v.spm_model = text(data + "spm_model");
  if (const auto* binary = reader.find(std::string(checkpoint::format3::kBinaryDataPrefix) + "spm_model"))
    v.spm_model.assign(binary->data, binary->size);
  if (v.src_lang.empty() || v.tgt_lang.empty() || v.src_dict.empty() || v.tgt_dict.empty())
    throw Error(path + ": has no languages and dictionaries of its data");
  return v;
}

void write_checkpoint_vocabulary(const CheckpointVocabulary& v, const std::string& dir) {
  if (!v.spm_model.empty()) write_file_atomically(dir + "/spm.model", v.spm_model);
  write_file_atomically(dir + "/dict." + v.src_lang + ".txt", v.src_dict);
  write_file_atomically(dir + "/dict." + v.tgt_lang + ".txt", v.tgt_dict);
}

CheckpointVocabularyFiles::CheckpointVocabularyFiles(data::PreprocessOptions& p)
    : CheckpointVocabularyFiles(p, read_checkpoint_vocabulary(p.from_checkpoint)) {}

CheckpointVocabularyFiles::CheckpointVocabularyFiles(data::PreprocessOptions& p, const CheckpointVocabulary& v) {
  const std::pair<const char*, bool> excluded[] = {
      {"spm-model", !p.spm_model.empty()},      {"srcdict", !p.srcdict.empty()},
      {"tgtdict", !p.tgtdict.empty()},          {"joined-dictionary", p.joined_dictionary},
      {"spm-per-language", p.spm_per_language}, {"only-source", p.only_source}};
  for (const auto& [option, given] : excluded)
    if (given)
      throw Error::for_key("from-checkpoint", std::string("cannot be combined with --") + option +
                                                  " (the checkpoint gives the model and dictionaries)");
  auto check_lang = [&](std::string& given, const std::string& saved, const char* option) {
    if (given.empty()) given = saved;
    if (given != saved)
      throw Error::for_key(
          option, "'" + given + "' but " + p.from_checkpoint + " translates " + v.src_lang + " -> " + v.tgt_lang);
  };
  check_lang(p.source_lang, v.src_lang, "source-lang");
  check_lang(p.target_lang, v.tgt_lang, "target-lang");
  // Unique per process and object (csan.preprocess may run on several threads).
  static std::atomic<int> counter{0};
  dir_ = (fs::temp_directory_path() /
          ("csan-from-checkpoint-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
             .string();
  fs::create_directories(dir_);
  write_checkpoint_vocabulary(v, dir_);
  if (!v.spm_model.empty()) p.spm_model = dir_ + "/spm.model";
  p.srcdict = dir_ + "/dict." + v.src_lang + ".txt";
  if (v.src_dict == v.tgt_dict)
    p.joined_dictionary = true;
  else
    p.tgtdict = dir_ + "/dict." + v.tgt_lang + ".txt";
}

CheckpointVocabularyFiles::~CheckpointVocabularyFiles() {
  if (!dir_.empty()) remove_tree(dir_);
}

}  // namespace csan::commands
