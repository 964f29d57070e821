#include "toolkit/foreign/fairseq_import.h"

#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/foreign/fairseq_mapping.h"
#include "toolkit/foreign/fairseq_settings.h"
#include "toolkit/foreign/imported_checkpoint.h"
#include "toolkit/foreign/pickle_reader.h"

namespace fs = std::filesystem;

namespace csan::foreign {

namespace {

std::string read_named(const std::string& path, const std::string& what) {
  if (!fs::is_regular_file(path)) throw Error(path + ": no such file (" + what + ")", ErrorKind::missing_file);
  return read_file(path);
}

}  // namespace

void import_fairseq(const FairseqImportOptions& o, const std::string& output) {
  const PicklePtr root = read_torch_save(o.checkpoint);
  const FairseqSettings settings = read_fairseq_settings(*root, o.checkpoint);
  ImportedTranslationModel m;
  m.origin = o.checkpoint;
  m.recipe = settings.recipe;
  m.src_lang = o.source_lang.empty() ? settings.source_lang : o.source_lang;
  m.tgt_lang = o.target_lang.empty() ? settings.target_lang : o.target_lang;
  if (m.src_lang.empty() || m.tgt_lang.empty())
    throw Error(o.checkpoint +
                    ": task.source_lang/target_lang: not in the checkpoint; give --source-lang and "
                    "--target-lang",
                ErrorKind::bad_option);
  const std::string dir = o.dict_dir.empty() ? fs::path(o.checkpoint).parent_path().string() : o.dict_dir;
  m.src_dict_path = (fs::path(dir.empty() ? "." : dir) / ("dict." + m.src_lang + ".txt")).string();
  m.tgt_dict_path = (fs::path(dir.empty() ? "." : dir) / ("dict." + m.tgt_lang + ".txt")).string();
  m.src_dict = read_named(m.src_dict_path, "the source dictionary");
  m.tgt_dict = read_named(m.tgt_dict_path, "the target dictionary");
  if (!o.source_spm.empty()) m.spm_model = read_named(o.source_spm, "the source SentencePiece model");
  if (!o.target_spm.empty()) {
    if (o.source_spm.empty())
      throw Error("--target-spm: needs --spm (the source side's model) too", ErrorKind::bad_option);
    m.tgt_spm_model = read_named(o.target_spm, "the target SentencePiece model");
  }
  const PickleValue* model = root->find("model");
  if (!model) throw Error(o.checkpoint + ": model: missing (no weights in the checkpoint)", ErrorKind::bad_input);
  const FairseqTying tying{settings.recipe.at("model.share_all_embeddings") == "true",
                           settings.recipe.at("model.share_decoder_input_output_embed") == "true"};
  m.weights = fairseq_to_csan_names(*model, tying, o.checkpoint, m.origin_names);
  write_imported_checkpoint(m, output);
}

}  // namespace csan::foreign
