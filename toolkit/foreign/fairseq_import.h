// fairseq checkpoint.pt + dict.<src>.txt + dict.<tgt>.txt (+ SentencePiece models) ->
// a csan checkpoint (csan-import's fairseq mode).
#pragma once

#include <string>

namespace csan::foreign {

struct FairseqImportOptions {
  std::string checkpoint;                // fairseq's checkpoint.pt
  std::string dict_dir;                  // where dict.<lang>.txt are ("": the checkpoint's folder)
  std::string source_lang, target_lang;  // "": the checkpoint's task settings
  std::string source_spm, target_spm;    // SentencePiece models ("" : none; target "" = source's)
};

// Throws csan::Error naming the file and field for anything it cannot import; `output`
// is written only when everything was read.
void import_fairseq(const FairseqImportOptions& options, const std::string& output);

}  // namespace csan::foreign
