#include "toolkit/text/toy_grammar.h"

#include "toolkit/core/error.h"

namespace csan::text {

namespace {

// How often each optional part appears. Chosen so that sentences average about ten
// source tokens and every construction is frequent enough to be learnt from 20k pairs.
constexpr double kQuestion = 0.15;
constexpr double kConjoined = 0.3;
constexpr double kPronounSubject = 0.35;
constexpr double kPlural = 0.4;
constexpr double kPhrasalVerb = 0.1;
constexpr double kTransitive = 0.65;
constexpr double kPlace = 0.3;
constexpr double kAdverbial = 0.25;
const std::vector<double> kAdjectiveCountWeights = {0.55, 0.35, 0.10};  // 0, 1 or 2

ToyNounPhrase sample_noun_phrase(const ToyLexicon& lex, core::SplitMix64& random) {
  ToyNounPhrase np;
  np.determiner = random.below(lex.determiners.size());
  const size_t adjectives = random.weighted(kAdjectiveCountWeights);
  while (np.adjectives.size() < adjectives) {
    size_t a = random.below(lex.adjectives.size());
    if (np.adjectives.empty() || np.adjectives.front() != a) np.adjectives.push_back(a);
  }
  np.noun = random.below(lex.nouns.size());
  np.plural = random.chance(kPlural);
  return np;
}

size_t sample_verb(const ToyLexicon& lex, core::SplitMix64& random, ToyValency valency) {
  std::vector<size_t> candidates;
  for (size_t v = 0; v < lex.verbs.size(); ++v)
    if (lex.verbs[v].valency == valency) candidates.push_back(v);
  return candidates[random.below(candidates.size())];
}

ToyClause sample_clause(const ToyLexicon& lex, core::SplitMix64& random) {
  ToyClause clause;
  if (random.chance(kPronounSubject))
    clause.pronoun = ToyPerson(random.below(kToyPersons));
  else
    clause.subject = sample_noun_phrase(lex, random);
  ToyValency valency;
  if (random.chance(kPhrasalVerb)) {
    clause.phrasal = random.below(lex.phrasal_verbs.size());
    clause.verb = lex.phrasal_verbs[*clause.phrasal].verb;
    valency = lex.verbs[clause.verb].valency;
  } else {
    valency = random.chance(kTransitive) ? ToyValency::transitive : ToyValency::intransitive;
    clause.verb = sample_verb(lex, random, valency);
  }
  if (valency == ToyValency::transitive) clause.object = sample_noun_phrase(lex, random);
  if (random.chance(kPlace))
    clause.place = ToyPrepositionalPhrase{random.below(lex.prepositions.size()), sample_noun_phrase(lex, random)};
  if (random.chance(kAdverbial)) clause.adverbial = random.below(lex.adverbials.size());
  return clause;
}

void check_index(size_t index, size_t size, const char* what) {
  if (index >= size)
    throw Error("toy sentence: " + std::string(what) + " " + std::to_string(index) + " out of range (" +
                std::to_string(size) + ")");
}

void check_noun_phrase(const ToyLexicon& lex, const ToyNounPhrase& np) {
  check_index(np.determiner, lex.determiners.size(), "determiner");
  check_index(np.noun, lex.nouns.size(), "noun");
  for (size_t a : np.adjectives) check_index(a, lex.adjectives.size(), "adjective");
}

void check_clause(const ToyLexicon& lex, const ToyClause& clause) {
  if (clause.pronoun)
    check_index(*clause.pronoun, kToyPersons, "pronoun");
  else
    check_noun_phrase(lex, clause.subject);
  check_index(clause.verb, lex.verbs.size(), "verb");
  if (clause.phrasal) {
    check_index(*clause.phrasal, lex.phrasal_verbs.size(), "phrasal verb");
    if (lex.phrasal_verbs[*clause.phrasal].verb != clause.verb)
      throw Error("toy sentence: phrasal verb " + std::to_string(*clause.phrasal) + " is not built on verb " +
                  std::to_string(clause.verb));
  }
  const bool transitive = lex.verbs[clause.verb].valency == ToyValency::transitive;
  if (transitive != clause.object.has_value())
    throw Error(std::string("toy sentence: ") +
                (transitive ? "transitive verb without an object" : "intransitive verb with an object"));
  if (clause.object) check_noun_phrase(lex, *clause.object);
  if (clause.place) {
    check_index(clause.place->preposition, lex.prepositions.size(), "preposition");
    check_noun_phrase(lex, clause.place->object);
  }
  if (clause.adverbial) check_index(*clause.adverbial, lex.adverbials.size(), "adverbial");
}

void check_sentence(const ToyLexicon& lex, const ToySentence& s) {
  check_clause(lex, s.first);
  if (s.conjunction) {
    check_index(*s.conjunction, lex.conjunctions.size(), "conjunction");
    check_clause(lex, s.second);
  }
}

// Rendered tokens, each with the id of the source-structure element it expresses: the
// tokens of the two languages that share an id are the sentence's true word alignment.
struct Rendered {
  std::vector<std::string> words;
  std::vector<int> links;  // -1: expresses nothing of the other side (target "," and question particle)
  void add(const std::string& word, int link) {
    words.push_back(word);
    links.push_back(link);
  }
  void add(const std::vector<std::string>& more, int link) {
    for (const auto& w : more) add(w, link);
  }
};

// Link ids: one block per clause; in it one block per noun phrase (subject, object,
// place) with the determiner, each adjective (by source position) and the noun, then the
// clause's single words. Sentence-level elements come after both clauses.
constexpr int kClauseBlock = 100, kPhraseBlock = 20, kNounSlot = 10;
enum ClausePart { kSubjectPhrase = 0, kObjectPhrase = 1, kPlacePhrase = 2 };
enum ClauseWord { kPronounWord = 60, kVerbWord = 61, kPrepositionWord = 62, kAdverbialWord = 63 };
constexpr int kConjunctionLink = 2 * kClauseBlock, kFinalPunctuationLink = 2 * kClauseBlock + 1;

int phrase_link(int clause, int phrase, int slot) { return clause * kClauseBlock + phrase * kPhraseBlock + slot; }
int clause_link(int clause, int slot) { return clause * kClauseBlock + slot; }

// Source noun phrase: determiner, adjectives, noun (+s when plural).
void source_noun_phrase(const ToyLexicon& lex, const ToyNounPhrase& np, int clause, int phrase, Rendered& out) {
  out.add(lex.determiners[np.determiner].source, phrase_link(clause, phrase, 0));
  for (size_t i = 0; i < np.adjectives.size(); ++i)
    out.add(lex.adjectives[np.adjectives[i]].source, phrase_link(clause, phrase, 1 + static_cast<int>(i)));
  out.add(lex.source_noun(np.noun, np.plural), phrase_link(clause, phrase, kNounSlot));
}

// Source clause: S V [particle] [O] [preposition NP] [adverbial].
void source_clause(const ToyLexicon& lex, const ToyClause& c, int clause, Rendered& out) {
  if (c.pronoun)
    out.add(lex.pronouns[*c.pronoun].source, clause_link(clause, kPronounWord));
  else
    source_noun_phrase(lex, c.subject, clause, kSubjectPhrase, out);
  out.add(lex.verbs[c.verb].source, clause_link(clause, kVerbWord));
  if (c.phrasal) out.add(lex.particles[lex.phrasal_verbs[*c.phrasal].particle], clause_link(clause, kVerbWord));
  if (c.object) source_noun_phrase(lex, *c.object, clause, kObjectPhrase, out);
  if (c.place) {
    out.add(lex.prepositions[c.place->preposition].source, clause_link(clause, kPrepositionWord));
    source_noun_phrase(lex, c.place->object, clause, kPlacePhrase, out);
  }
  if (c.adverbial) out.add(lex.adverbials[*c.adverbial].source, clause_link(clause, kAdverbialWord));
}

// Target noun phrase: determiner, [compound modifier] noun, adjectives in mirror order;
// determiner and adjectives agree with the noun's gender and number.
void target_noun_phrase(const ToyLexicon& lex, const ToyNounPhrase& np, int clause, int phrase, Rendered& out) {
  const ToyNoun& noun = lex.nouns[np.noun];
  out.add(ToyLexicon::target_agreeing(lex.determiners[np.determiner].target, noun.gender, np.plural),
          phrase_link(clause, phrase, 0));
  if (!noun.target_modifier.empty()) out.add(noun.target_modifier, phrase_link(clause, phrase, kNounSlot));
  out.add(lex.target_noun(np.noun, np.plural), phrase_link(clause, phrase, kNounSlot));
  for (size_t i = np.adjectives.size(); i-- > 0;)
    out.add(ToyLexicon::target_agreeing(lex.adjectives[np.adjectives[i]].target, noun.gender, np.plural),
            phrase_link(clause, phrase, 1 + static_cast<int>(i)));
}

// Target clause: [adverbial] S [O] [NP postposition] V, the verb agreeing with S.
void target_clause(const ToyLexicon& lex, const ToyClause& c, int clause, Rendered& out) {
  if (c.adverbial) out.add(lex.adverbials[*c.adverbial].target, clause_link(clause, kAdverbialWord));
  if (c.pronoun)
    out.add(lex.pronouns[*c.pronoun].target, clause_link(clause, kPronounWord));
  else
    target_noun_phrase(lex, c.subject, clause, kSubjectPhrase, out);
  if (c.object) target_noun_phrase(lex, *c.object, clause, kObjectPhrase, out);
  if (c.place) {
    target_noun_phrase(lex, c.place->object, clause, kPlacePhrase, out);
    out.add(lex.prepositions[c.place->preposition].target, clause_link(clause, kPrepositionWord));
  }
  const ToyVerb& verb = lex.verbs[c.verb];
  if (c.phrasal) {
    out.add(ToyLexicon::target_verb_form(lex.phrasal_verbs[*c.phrasal].target, c.person()), clause_link(clause, kVerbWord));
  } else {
    if (!verb.target_noun.empty()) out.add(verb.target_noun, clause_link(clause, kVerbWord));
    out.add(ToyLexicon::target_verb_form(verb.target, c.person()), clause_link(clause, kVerbWord));
  }
}

// Source sentence: clause [conjunction clause] ("." | "?").
Rendered source_sentence(const ToyLexicon& lexicon, const ToySentence& s) {
  check_sentence(lexicon, s);
  Rendered out;
  source_clause(lexicon, s.first, 0, out);
  if (s.conjunction) {
    out.add(lexicon.conjunctions[*s.conjunction].source, kConjunctionLink);
    source_clause(lexicon, s.second, 1, out);
  }
  out.add(s.question ? "?" : ".", kFinalPunctuationLink);
  return out;
}

// Target sentence: clause [, conjunction clause] [question particle] ("." | "?").
Rendered target_sentence(const ToyLexicon& lexicon, const ToySentence& s) {
  check_sentence(lexicon, s);
  Rendered out;
  target_clause(lexicon, s.first, 0, out);
  if (s.conjunction) {
    out.add(",", -1);
    out.add(lexicon.conjunctions[*s.conjunction].target, kConjunctionLink);
    target_clause(lexicon, s.second, 1, out);
  }
  if (s.question) out.add(lexicon.question_particle, -1);
  out.add(s.question ? "?" : ".", kFinalPunctuationLink);
  return out;
}

}  // namespace

ToyPerson ToyClause::person() const {
  if (pronoun) return *pronoun;
  return subject.plural ? third_plural : third_singular;
}

ToySentence sample_toy_sentence(const ToyLexicon& lexicon, core::SplitMix64& random) {
  ToySentence s;
  s.first = sample_clause(lexicon, random);
  if (random.chance(kConjoined)) {
    s.conjunction = random.below(lexicon.conjunctions.size());
    s.second = sample_clause(lexicon, random);
  }
  s.question = random.chance(kQuestion);
  return s;
}

std::vector<std::string> render_toy_source(const ToyLexicon& lexicon, const ToySentence& s) {
  return source_sentence(lexicon, s).words;
}

std::vector<std::string> render_toy_target(const ToyLexicon& lexicon, const ToySentence& s) {
  return target_sentence(lexicon, s).words;
}

std::vector<std::pair<size_t, size_t>> toy_word_alignment(const ToyLexicon& lexicon, const ToySentence& s) {
  const Rendered source = source_sentence(lexicon, s), target = target_sentence(lexicon, s);
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t j = 0; j < target.links.size(); ++j)
    for (size_t i = 0; i < source.links.size(); ++i)
      if (target.links[j] >= 0 && source.links[i] == target.links[j]) pairs.emplace_back(i, j);
  return pairs;
}

std::string pharaoh_line(const std::vector<std::pair<size_t, size_t>>& pairs) {
  std::string line;
  for (const auto& [i, j] : pairs) line += (line.empty() ? "" : " ") + std::to_string(i) + "-" + std::to_string(j);
  return line;
}

std::string join_tokens(const std::vector<std::string>& tokens) {
  std::string line;
  for (const auto& t : tokens) {
    if (!line.empty()) line += ' ';
    line += t;
  }
  return line;
}

}  // namespace csan::text
