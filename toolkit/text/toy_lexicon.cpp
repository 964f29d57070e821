#include "toolkit/text/toy_lexicon.h"

#include <functional>
#include <set>

#include "toolkit/core/error.h"
#include "toolkit/core/splitmix64.h"

namespace csan::text {

namespace {

// Lexicon sizes: small enough that a tiny model sees every word often, large enough
// that it must learn a real translation table rather than a handful of rules.
constexpr size_t kNouns = 40, kCompoundNouns = 4;
constexpr size_t kAdjectives = 24, kDeterminers = 4;
constexpr size_t kTransitiveVerbs = 24, kIntransitiveVerbs = 12;
constexpr size_t kLightTransitive = 3, kLightIntransitive = 2;
constexpr size_t kPrepositions = 8, kConjunctions = 3;
constexpr size_t kOneWordAdverbials = 4, kIdiomAdverbials = 4;

// Spelling of each language: different consonants make the two look foreign to each
// other; source words end in a vowel, target stems in a consonant so endings attach.
constexpr const char* kSourceConsonants = "bdfgklmnprstvz";
constexpr const char* kTargetConsonants = "hjklmnprstwy";
constexpr const char* kVowels = "aeiou";
constexpr const char* kTargetClosers = "klmnrt";

char pick(core::SplitMix64& random, const std::string& letters) { return letters[random.below(letters.size())]; }

std::string syllables(core::SplitMix64& random, const char* consonants, size_t min_count, size_t max_count) {
  std::string word;
  size_t count = min_count + random.below(max_count - min_count + 1);
  for (size_t i = 0; i < count; ++i) {
    word += pick(random, consonants);
    word += pick(random, kVowels);
  }
  return word;
}

// Draws words until one whose every surface form is unused in its language, then
// reserves those forms. This is what makes every sentence unambiguous.
class WordMaker {
 public:
  explicit WordMaker(core::SplitMix64& random) : random_(random) {}

  std::string make(const std::function<std::string(core::SplitMix64&)>& candidate,
                   const std::function<std::vector<std::string>(const std::string&)>& forms) {
    for (int attempt = 0; attempt < 100000; ++attempt) {
      std::string word = candidate(random_);
      std::vector<std::string> all = forms(word);
      bool clash = false;
      for (const auto& form : all) clash = clash || used_.count(form) > 0;
      if (clash) continue;
      used_.insert(all.begin(), all.end());
      return word;
    }
    throw Error("toy corpus: ran out of distinct made-up words");
  }

  std::string make_plain(const std::function<std::string(core::SplitMix64&)>& candidate) {
    return make(candidate, [](const std::string& w) { return std::vector<std::string>{w}; });
  }

 private:
  core::SplitMix64& random_;
  std::set<std::string> used_;
};

std::string source_function_word(core::SplitMix64& r) { return syllables(r, kSourceConsonants, 1, 1); }
std::string source_content_word(core::SplitMix64& r) { return syllables(r, kSourceConsonants, 2, 3); }
std::string target_stem(core::SplitMix64& r) { return syllables(r, kTargetConsonants, 1, 2) + pick(r, kTargetClosers); }
std::string target_short_stem(core::SplitMix64& r) {
  return syllables(r, kTargetConsonants, 1, 1) + pick(r, kTargetClosers);
}
std::string target_open_word(core::SplitMix64& r) { return syllables(r, kTargetConsonants, 1, 2); }
std::string target_long_word(core::SplitMix64& r) { return syllables(r, kTargetConsonants, 2, 3); }

std::vector<std::string> agreeing_forms(const std::string& stem) {
  std::vector<std::string> forms;
  for (auto gender : {ToyGender::masculine, ToyGender::feminine})
    for (bool plural : {false, true}) forms.push_back(ToyLexicon::target_agreeing(stem, gender, plural));
  return forms;
}

std::vector<std::string> verb_forms(const std::string& stem) {
  std::vector<std::string> forms;
  for (size_t p = 0; p < kToyPersons; ++p) forms.push_back(ToyLexicon::target_verb_form(stem, ToyPerson(p)));
  return forms;
}

}  // namespace

ToyLexicon ToyLexicon::generate(uint64_t seed) {
  core::SplitMix64 random(seed ^ 0x746f792d6c657869ULL);  // "toy-lexi": lexicon stream
  core::SplitMix64 source_random = random.fork(1), target_random = random.fork(2), choice = random.fork(3);
  WordMaker source(source_random), target(target_random);
  ToyLexicon lex;

  auto source_plain = [&](auto candidate) { return source.make_plain(candidate); };
  auto target_plain = [&](auto candidate) { return target.make_plain(candidate); };

  lex.light_verb = target.make(target_short_stem, verb_forms);
  for (size_t i = 0; i < kNouns; ++i) {
    ToyNoun noun;
    noun.gender = choice.chance(0.5) ? ToyGender::feminine : ToyGender::masculine;
    noun.source = source.make(source_content_word, [](const std::string& w) {
      return std::vector<std::string>{w, w + kToySourcePlural};
    });
    const size_t g = static_cast<size_t>(noun.gender);
    noun.target = target.make(target_stem, [g](const std::string& w) {
      return std::vector<std::string>{w, w + kToyNounPluralEndings[g]};
    });
    if (i < kCompoundNouns) noun.target_modifier = target_plain(target_stem);
    lex.nouns.push_back(noun);
  }
  for (size_t i = 0; i < kAdjectives; ++i)
    lex.adjectives.push_back({{source_plain(source_content_word)}, target.make(target_stem, agreeing_forms)});
  for (size_t i = 0; i < kDeterminers; ++i)
    lex.determiners.push_back({{source_plain(source_function_word)}, target.make(target_short_stem, agreeing_forms)});
  for (size_t i = 0; i < kTransitiveVerbs + kIntransitiveVerbs; ++i) {
    ToyVerb verb;
    const bool transitive = i < kTransitiveVerbs;
    const size_t rank = transitive ? i : i - kTransitiveVerbs;
    verb.valency = transitive ? ToyValency::transitive : ToyValency::intransitive;
    verb.source = source_plain(source_content_word);
    if (rank < (transitive ? kLightTransitive : kLightIntransitive)) {
      verb.target_noun = target_plain(target_long_word);
      verb.target = lex.light_verb;
    } else {
      verb.target = target.make(target_stem, verb_forms);
    }
    lex.verbs.push_back(verb);
  }
  for (size_t i = 0; i < 2; ++i) lex.particles.push_back(source_plain(source_function_word));
  // Idioms are built on ordinary (not light) verbs: three transitive, one intransitive.
  const size_t idiom_verbs[] = {kLightTransitive, kLightTransitive + 1, kLightTransitive + 2,
                                kTransitiveVerbs + kLightIntransitive};
  for (size_t i = 0; i < 4; ++i)
    lex.phrasal_verbs.push_back({idiom_verbs[i], i % 2, target.make(target_stem, verb_forms)});
  for (size_t i = 0; i < kToyPersons; ++i)
    lex.pronouns.push_back({{source_plain(source_function_word)}, target_plain(target_open_word)});
  for (size_t i = 0; i < kPrepositions; ++i)
    lex.prepositions.push_back({{source_plain(source_function_word)}, target_plain(target_open_word)});
  for (size_t i = 0; i < kOneWordAdverbials + kIdiomAdverbials; ++i) {
    ToyWordPair adverbial;
    adverbial.source.push_back(source_plain(source_content_word));
    if (i >= kOneWordAdverbials) adverbial.source.push_back(source_plain(source_content_word));
    adverbial.target = target_plain(target_long_word);
    lex.adverbials.push_back(adverbial);
  }
  for (size_t i = 0; i < kConjunctions; ++i)
    lex.conjunctions.push_back({{source_plain(source_function_word)}, target_plain(target_short_stem)});
  lex.question_particle = target_plain(target_open_word);
  return lex;
}

std::string ToyLexicon::source_noun(size_t noun, bool plural) const {
  return plural ? nouns.at(noun).source + kToySourcePlural : nouns.at(noun).source;
}

ToyLexicon ToyLexicon::with_targets_of(const ToyLexicon& other) const {
  ToyLexicon out = *this;
  for (size_t i = 0; i < out.nouns.size(); ++i) {
    out.nouns[i].target_modifier = other.nouns[i].target_modifier;
    out.nouns[i].target = other.nouns[i].target;
    out.nouns[i].gender = other.nouns[i].gender;
  }
  for (size_t i = 0; i < out.verbs.size(); ++i) {
    out.verbs[i].target_noun = other.verbs[i].target_noun;
    out.verbs[i].target = other.verbs[i].target;
  }
  for (size_t i = 0; i < out.phrasal_verbs.size(); ++i) out.phrasal_verbs[i].target = other.phrasal_verbs[i].target;
  auto copy_targets = [](std::vector<ToyWordPair>& to, const std::vector<ToyWordPair>& from) {
    for (size_t i = 0; i < to.size(); ++i) to[i].target = from[i].target;
  };
  copy_targets(out.adjectives, other.adjectives);
  copy_targets(out.determiners, other.determiners);
  copy_targets(out.pronouns, other.pronouns);
  copy_targets(out.prepositions, other.prepositions);
  copy_targets(out.adverbials, other.adverbials);
  copy_targets(out.conjunctions, other.conjunctions);
  out.light_verb = other.light_verb;
  out.question_particle = other.question_particle;
  return out;
}

std::string ToyLexicon::target_noun(size_t noun, bool plural) const {
  const ToyNoun& n = nouns.at(noun);
  return plural ? n.target + kToyNounPluralEndings[static_cast<size_t>(n.gender)] : n.target;
}

std::string ToyLexicon::target_agreeing(const std::string& stem, ToyGender gender, bool plural) {
  return stem + kToyAgreementEndings[static_cast<size_t>(gender)][plural ? 1 : 0];
}

std::string ToyLexicon::target_verb_form(const std::string& stem, ToyPerson person) {
  return stem + kToyVerbEndings[person];
}

}  // namespace csan::text
