// The word lists of the toy corpus's two made-up languages, drawn from a seed. Every
// source lexeme has one fixed translation; see toy_corpus.h for the grammar that
// combines them and for the exact correspondences a model must learn.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace csan::text {

enum class ToyGender { masculine = 0, feminine = 1 };
enum class ToyValency { intransitive, transitive };

// Person and number of a subject, which the target verb agrees with.
enum ToyPerson : size_t { first_singular, second_singular, third_singular, first_plural, second_plural, third_plural };
constexpr size_t kToyPersons = 6;

// Fixed affixes (the stems are random, the morphology is not, so it can be documented).
inline constexpr const char* kToySourcePlural = "s";  // source noun plural: stem + "s"
// Target verb ending by subject person/number, in ToyPerson order.
inline constexpr std::array<const char*, kToyPersons> kToyVerbEndings = {"im", "is", "it", "imo", "iso", "ito"};
// Target noun plural ending by gender (singular is the bare stem).
inline constexpr std::array<const char*, 2> kToyNounPluralEndings = {"en", "ar"};
// Target adjective and determiner ending by [gender][plural].
inline constexpr std::array<std::array<const char*, 2>, 2> kToyAgreementEndings = {{{"o", "os"}, {"a", "as"}}};

struct ToyNoun {
  std::string source;           // singular form; plural adds kToySourcePlural
  std::string target_modifier;  // non-empty: the target is a two-word compound "modifier head"
  std::string target;           // target head stem (the singular form)
  ToyGender gender = ToyGender::masculine;
};

struct ToyVerb {
  std::string source;       // invariable
  std::string target_noun;  // non-empty: light-verb construction, target "noun <light verb>"
  std::string target;       // stem taking the agreement ending (the light verb's, if target_noun)
  ToyValency valency = ToyValency::transitive;
};

// A two-word source idiom "verb particle" translated by one unrelated target verb.
struct ToyPhrasalVerb {
  size_t verb = 0;      // index into ToyLexicon::verbs; the idiom keeps its valency
  size_t particle = 0;  // index into ToyLexicon::particles
  std::string target;   // stem taking the agreement ending
};

struct ToyWordPair {
  std::vector<std::string> source;  // one word, or two for idioms
  std::string target;               // always one word
};

struct ToyLexicon {
  std::vector<ToyNoun> nouns;
  std::vector<ToyWordPair> adjectives;   // target: stem taking an agreement ending
  std::vector<ToyWordPair> determiners;  // target: stem taking an agreement ending
  std::vector<ToyVerb> verbs;
  std::vector<std::string> particles;  // source-only words that occur only in phrasal verbs
  std::vector<ToyPhrasalVerb> phrasal_verbs;
  std::vector<ToyWordPair> pronouns;      // in ToyPerson order
  std::vector<ToyWordPair> prepositions;  // target: postpositions
  std::vector<ToyWordPair> adverbials;    // some source entries are two-word idioms
  std::vector<ToyWordPair> conjunctions;
  std::string light_verb;         // target stem of the light verb ("do"/"make")
  std::string question_particle;  // target only

  // Draws every stem from `seed`; all surface forms of a language are distinct, so a
  // source sentence has exactly one reading.
  static ToyLexicon generate(uint64_t seed);
  // This lexicon's source side with the target side of `other` (same entry counts): the
  // toy corpus's second target language (another seed's target words, genders and
  // light-verb constructions for the same source sentences).
  ToyLexicon with_targets_of(const ToyLexicon& other) const;

  // Inflected target forms.
  std::string target_noun(size_t noun, bool plural) const;
  static std::string target_agreeing(const std::string& stem, ToyGender gender, bool plural);
  static std::string target_verb_form(const std::string& stem, ToyPerson person);
  std::string source_noun(size_t noun, bool plural) const;
};

}  // namespace csan::text
