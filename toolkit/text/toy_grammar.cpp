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

void append(std::vector<std::string>& out, const std::vector<std::string>& words) {
  out.insert(out.end(), words.begin(), words.end());
}

// Source noun phrase: determiner, adjectives, noun (+s when plural).
void source_noun_phrase(const ToyLexicon& lex, const ToyNounPhrase& np, std::vector<std::string>& out) {
  append(out, lex.determiners[np.determiner].source);
  for (size_t a : np.adjectives) append(out, lex.adjectives[a].source);
  out.push_back(lex.source_noun(np.noun, np.plural));
}

// Source clause: S V [particle] [O] [preposition NP] [adverbial].
void source_clause(const ToyLexicon& lex, const ToyClause& c, std::vector<std::string>& out) {
  if (c.pronoun)
    append(out, lex.pronouns[*c.pronoun].source);
  else
    source_noun_phrase(lex, c.subject, out);
  out.push_back(lex.verbs[c.verb].source);
  if (c.phrasal) out.push_back(lex.particles[lex.phrasal_verbs[*c.phrasal].particle]);
  if (c.object) source_noun_phrase(lex, *c.object, out);
  if (c.place) {
    append(out, lex.prepositions[c.place->preposition].source);
    source_noun_phrase(lex, c.place->object, out);
  }
  if (c.adverbial) append(out, lex.adverbials[*c.adverbial].source);
}

// Target noun phrase: determiner, [compound modifier] noun, adjectives in mirror order;
// determiner and adjectives agree with the noun's gender and number.
void target_noun_phrase(const ToyLexicon& lex, const ToyNounPhrase& np, std::vector<std::string>& out) {
  const ToyNoun& noun = lex.nouns[np.noun];
  out.push_back(ToyLexicon::target_agreeing(lex.determiners[np.determiner].target, noun.gender, np.plural));
  if (!noun.target_modifier.empty()) out.push_back(noun.target_modifier);
  out.push_back(lex.target_noun(np.noun, np.plural));
  for (auto a = np.adjectives.rbegin(); a != np.adjectives.rend(); ++a)
    out.push_back(ToyLexicon::target_agreeing(lex.adjectives[*a].target, noun.gender, np.plural));
}

// Target clause: [adverbial] S [O] [NP postposition] V, the verb agreeing with S.
void target_clause(const ToyLexicon& lex, const ToyClause& c, std::vector<std::string>& out) {
  if (c.adverbial) out.push_back(lex.adverbials[*c.adverbial].target);
  if (c.pronoun)
    out.push_back(lex.pronouns[*c.pronoun].target);
  else
    target_noun_phrase(lex, c.subject, out);
  if (c.object) target_noun_phrase(lex, *c.object, out);
  if (c.place) {
    target_noun_phrase(lex, c.place->object, out);
    out.push_back(lex.prepositions[c.place->preposition].target);
  }
  const ToyVerb& verb = lex.verbs[c.verb];
  if (c.phrasal) {
    out.push_back(ToyLexicon::target_verb_form(lex.phrasal_verbs[*c.phrasal].target, c.person()));
  } else {
    if (!verb.target_noun.empty()) out.push_back(verb.target_noun);
    out.push_back(ToyLexicon::target_verb_form(verb.target, c.person()));
  }
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

// Source sentence: clause [conjunction clause] ("." | "?").
std::vector<std::string> render_toy_source(const ToyLexicon& lexicon, const ToySentence& s) {
  check_sentence(lexicon, s);
  std::vector<std::string> out;
  source_clause(lexicon, s.first, out);
  if (s.conjunction) {
    append(out, lexicon.conjunctions[*s.conjunction].source);
    source_clause(lexicon, s.second, out);
  }
  out.push_back(s.question ? "?" : ".");
  return out;
}

// Target sentence: clause [, conjunction clause] [question particle] ("." | "?").
std::vector<std::string> render_toy_target(const ToyLexicon& lexicon, const ToySentence& s) {
  check_sentence(lexicon, s);
  std::vector<std::string> out;
  target_clause(lexicon, s.first, out);
  if (s.conjunction) {
    out.push_back(",");
    out.push_back(lexicon.conjunctions[*s.conjunction].target);
    target_clause(lexicon, s.second, out);
  }
  if (s.question) out.push_back(lexicon.question_particle);
  out.push_back(s.question ? "?" : ".");
  return out;
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
