// The toy corpus: a seeded synthetic parallel corpus, the toolkit's built-in default
// data for demos and end-to-end tests. Two made-up languages, both plain lowercase ASCII
// words plus the punctuation tokens "." "?" ",", one sentence per line, tokens separated
// by single spaces. The translation is a deterministic function of the source sentence,
// so a tiny Transformer can reach a high BLEU, yet it needs more than word substitution:
//
// Lexicon (toy_lexicon.h; stems drawn from the seed, all forms of a language distinct):
//   40 nouns (each with a target gender, masculine or feminine; 4 translate as a
//   two-word compound "modifier head"), 24 adjectives, 4 determiners, 24 transitive and
//   12 intransitive verbs (5 translate as a light-verb construction "noun do-ENDING"),
//   4 phrasal verbs (source "verb particle", two words, -> one unrelated target verb),
//   6 pronouns, 8 prepositions (-> postpositions), 8 adverbials (4 of them two-word
//   source idioms -> one target word), 3 conjunctions, 1 target question particle.
//   About 180 source and 450 target word types.
//
// Source grammar (SVO, adjectives before the noun, nothing inflects but noun number):
//   sentence := clause [conjunction clause] ("." | "?")
//   clause   := subject verb [particle] [object] [preposition np] [adverbial]
//   subject  := pronoun | np          object := np (exactly when the verb is transitive)
//   np       := determiner [adjective [adjective]] noun      plural noun: stem + "s"
//
// Target grammar (SOV, postpositions, adjectives after the noun, agreement):
//   sentence := clause ["," conjunction clause] [question-particle] ("." | "?")
//   clause   := [adverbial] subject [object] [np postposition] verb
//   np       := determiner-AGR [modifier] noun(-PLURAL) adjective-AGR...
//     adjectives come in mirror order ("det a1 a2 n" -> "det n a2 a1");
//     AGR is the noun's gender and number: masc -o / -os, fem -a / -as (sg / pl);
//     PLURAL depends on gender: masc -en, fem -ar; the singular is the bare stem.
//   verb := stem-PERSON, or "noun light-verb-PERSON" for light-verb constructions;
//     PERSON is the subject's person and number: 1sg -im, 2sg -is, 3sg -it, 1pl -imo,
//     2pl -iso, 3pl -ito (a noun-phrase subject is third person, singular or plural
//     by its noun). In a two-clause sentence each verb agrees with its own subject.
//
// Examples (seed 1; the words come from the seed, the structure does not):
//   ku tesuso du bugiza tezo be ki fokivus ?
//   sahi sila hom sota yutas lowekar su junekimo puhi ?
// "we" + transitive verb + object "det adj noun" (feminine singular) + preposition with
// "det noun-s" becomes: pronoun, object "det-a noun adj-a", postpositional phrase
// "det-as noun-ar postposition", verb with the 1pl ending -imo, question particle.
//   du mulamo kabu raza dosa dufiso fune .
//   hurito sila nupur nera hona karolo temit .
// Subject "det adj1 adj2 noun", a verb rendered as the light-verb construction
// "karolo tem-it", and the two-word adverbial idiom "dufiso fune", which becomes the
// single word "hurito" at the start of the clause; adjectives come out mirrored.
//
// Sentences are 3 to max_words source tokens (about 10 on average). Every sentence
// pair occurs once in the whole corpus: no test or valid sentence is in train. The
// test split is drawn first, then valid, then train, so changing the train size leaves
// valid and test unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace csan::text {

struct ToyCorpusOptions {
  size_t train = 20000;
  size_t valid = 500;
  size_t test = 500;
  uint64_t seed = 1;
  size_t max_words = 20;  // longest source sentence, in tokens (punctuation included)
  // Non-zero: also a second target language, the same source sentences rendered with the
  // target words of the lexicon of this seed (the multilingual toy: source -> target,
  // target -> source, source -> second target). The sentences are those without it.
  uint64_t second_target_seed = 0;
};

struct ToySplit {
  std::string name;  // "train", "valid" or "test"
  std::vector<std::string> source;
  std::vector<std::string> target;
  std::vector<std::string> second_target;  // with second_target_seed
  std::vector<std::string> alignment;      // the true word alignment of each pair (pharaoh_line, toy_grammar.h)
};

struct ToyCorpus {
  std::vector<ToySplit> splits;  // train, valid, test (in that order)
  size_t source_types = 0;       // distinct tokens over all splits
  size_t target_types = 0;
  double source_mean_length = 0;  // tokens per sentence
  double target_mean_length = 0;
};

// Throws csan::Error if the options cannot be met (max_words < 3, or fewer distinct
// sentences of at most max_words tokens exist than requested).
ToyCorpus generate_toy_corpus(const ToyCorpusOptions& options);

// Writes DIR/{train,valid,test}.{source_lang,target_lang} (and with `alignments`
// DIR/{train,valid,test}.align, the true word alignments), each file atomically; creates
// DIR if needed. Throws csan::Error naming the path on failure.
void write_toy_corpus(const ToyCorpus& corpus, const std::string& dir, const std::string& source_lang,
                      const std::string& target_lang, bool alignments = false);

// The multilingual toy: DIR/SPLIT.SRC-TGT.{SRC,TGT} and DIR/SPLIT.SRC-TGT2.{SRC,TGT2}
// (csan-preprocess --task multilingual_translation's layout; TGT-SRC reads the first
// pair's files). Needs a corpus generated with second_target_seed.
void write_multilingual_toy_corpus(const ToyCorpus& corpus, const std::string& dir, const std::string& source_lang,
                                   const std::string& target_lang, const std::string& second_target_lang);

// One line for the log: sizes, vocabulary, mean lengths and the split overlap.
std::string describe_toy_corpus(const ToyCorpus& corpus, const ToyCorpusOptions& options);

}  // namespace csan::text
