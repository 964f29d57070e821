// data::parse_conllu on a CoNLL-U file. What parses must render back (with its own tags)
// to text that parses to the same words, as csan-generate writes its predictions.
#include "toolkit/data/conllu.h"

#include "../fuzz_targets.h"
#include "toolkit/core/error.h"

namespace csan::fuzz {

void conllu(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  data::ConllCorpus corpus;
  try {
    corpus = data::parse_conllu(text, "fuzz.conllu");
  } catch (const Error&) {
    return;
  }
  expect(!corpus.sentences.empty(), "a corpus without sentences parsed");
  for (const auto column : {data::TagColumn::kUpos, data::TagColumn::kXpos}) {
    std::string rendered;
    for (const auto& sentence : corpus.sentences) {
      expect(!sentence.words.empty(), "a sentence without words parsed");
      std::vector<std::string> tags;
      for (const auto& word : sentence.words) tags.push_back(word.tag(column));
      rendered += data::render_with_tags(sentence, column, tags);
    }
    data::ConllCorpus again;
    try {
      again = data::parse_conllu(rendered, "rendered.conllu");
    } catch (const Error& e) {
      throw InvariantBroken(std::string("the rendered corpus does not parse: ") + e.what());
    }
    expect(again.sentences.size() == corpus.sentences.size(), "rendering changed the sentence count");
    for (size_t s = 0; s < corpus.sentences.size(); ++s) {
      const auto& a = corpus.sentences[s].words;
      const auto& b = again.sentences[s].words;
      expect(a.size() == b.size(), "rendering changed a sentence's length");
      for (size_t w = 0; w < a.size(); ++w)
        expect(a[w].form == b[w].form && a[w].upos == b[w].upos && a[w].xpos == b[w].xpos, "rendering changed a word");
    }
  }
}

}  // namespace csan::fuzz
