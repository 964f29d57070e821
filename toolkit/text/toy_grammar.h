// Sentences of the toy corpus as structures, drawn at random and rendered into both
// made-up languages. The grammar and the source -> target mapping are documented in
// toy_corpus.h.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "toolkit/core/splitmix64.h"
#include "toolkit/text/toy_lexicon.h"

namespace csan::text {

struct ToyNounPhrase {
  size_t determiner = 0;
  std::vector<size_t> adjectives;  // in source order (before the noun)
  size_t noun = 0;
  bool plural = false;
};

struct ToyPrepositionalPhrase {
  size_t preposition = 0;
  ToyNounPhrase object;
};

struct ToyClause {
  std::optional<ToyPerson> pronoun;     // the subject is a pronoun ...
  ToyNounPhrase subject;                // ... or else this noun phrase (third person)
  size_t verb = 0;                      // index into ToyLexicon::verbs, unless phrasal is set
  std::optional<size_t> phrasal;        // index into ToyLexicon::phrasal_verbs
  std::optional<ToyNounPhrase> object;  // present exactly when the verb is transitive
  std::optional<ToyPrepositionalPhrase> place;
  std::optional<size_t> adverbial;  // index into ToyLexicon::adverbials

  ToyPerson person() const;  // what the target verb agrees with
};

struct ToySentence {
  ToyClause first;
  std::optional<size_t> conjunction;  // index into ToyLexicon::conjunctions; joins `second`
  ToyClause second;
  bool question = false;
};

// One draw from the grammar (not length-limited; the corpus rejects long ones).
ToySentence sample_toy_sentence(const ToyLexicon& lexicon, core::SplitMix64& random);

// Renderings as tokens (words and punctuation). Both throw csan::Error if the sentence
// breaks the grammar (an index out of range, an object on an intransitive verb...).
std::vector<std::string> render_toy_source(const ToyLexicon& lexicon, const ToySentence& sentence);
std::vector<std::string> render_toy_target(const ToyLexicon& lexicon, const ToySentence& sentence);

// The true word alignment of the two renderings: (source index, target index) pairs, by
// target then source index, linking the tokens that express the same element (a compound
// noun's two words to the noun, a light-verb construction's to the verb, a two-word idiom
// to its one target word, the agreement endings with their words). The target "," before a
// conjunction and the question particle express nothing of the source: unaligned.
std::vector<std::pair<size_t, size_t>> toy_word_alignment(const ToyLexicon& lexicon, const ToySentence& sentence);
// Pairs as one line "i-j i-j ..." (Pharaoh format, 0-based, as fast_align and fairseq's A- lines).
std::string pharaoh_line(const std::vector<std::pair<size_t, size_t>>& pairs);

// Tokens joined by single spaces: one corpus line.
std::string join_tokens(const std::vector<std::string>& tokens);

}  // namespace csan::text
