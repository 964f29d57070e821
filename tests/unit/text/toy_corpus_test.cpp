// The toy corpus: its lexicon is unambiguous, its mapping does what toy_corpus.h says
// (word order, agreement endings, multi-word units), and the generated corpus is
// deterministic, sized as asked and free of overlap between splits.
#include "toolkit/text/toy_corpus.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <unordered_set>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/text/toy_grammar.h"
#include "toolkit/text/toy_lexicon.h"

namespace fs = std::filesystem;
using namespace csan::text;

namespace {

using Tokens = std::vector<std::string>;

size_t find_verb(const ToyLexicon& lex, ToyValency valency, bool light) {
  for (size_t v = 0; v < lex.verbs.size(); ++v) {
    bool is_idiom_base = false;
    for (const auto& p : lex.phrasal_verbs) is_idiom_base = is_idiom_base || p.verb == v;
    if (lex.verbs[v].valency == valency && lex.verbs[v].target_noun.empty() != light && !is_idiom_base) return v;
  }
  ADD_FAILURE() << "no such verb";
  return 0;
}

size_t find_noun(const ToyLexicon& lex, ToyGender gender, bool compound) {
  for (size_t n = 0; n < lex.nouns.size(); ++n)
    if (lex.nouns[n].gender == gender && lex.nouns[n].target_modifier.empty() != compound) return n;
  ADD_FAILURE() << "no such noun";
  return 0;
}

ToyClause pronoun_clause(const ToyLexicon& lex, ToyPerson person) {
  ToyClause c;
  c.pronoun = person;
  c.verb = find_verb(lex, ToyValency::intransitive, false);
  return c;
}

TEST(ToyLexicon, SameSeedSameWordsOtherSeedOtherWords) {
  ToyLexicon a = ToyLexicon::generate(7), b = ToyLexicon::generate(7), c = ToyLexicon::generate(8);
  ASSERT_EQ(a.nouns.size(), 40u);
  for (size_t n = 0; n < a.nouns.size(); ++n) {
    EXPECT_EQ(a.nouns[n].source, b.nouns[n].source);
    EXPECT_EQ(a.nouns[n].target, b.nouns[n].target);
  }
  size_t differing = 0;
  for (size_t n = 0; n < a.nouns.size(); ++n) differing += a.nouns[n].source != c.nouns[n].source;
  EXPECT_GT(differing, 30u);
}

TEST(ToyLexicon, EverySurfaceFormOfALanguageIsDistinct) {
  const ToyLexicon lex = ToyLexicon::generate(1);
  std::vector<std::string> source, target;
  for (size_t n = 0; n < lex.nouns.size(); ++n) {
    source.push_back(lex.source_noun(n, false));
    source.push_back(lex.source_noun(n, true));
    target.push_back(lex.target_noun(n, false));
    target.push_back(lex.target_noun(n, true));
    if (!lex.nouns[n].target_modifier.empty()) target.push_back(lex.nouns[n].target_modifier);
  }
  for (const auto* list : {&lex.adjectives, &lex.determiners}) {
    for (const auto& w : *list) {
      source.insert(source.end(), w.source.begin(), w.source.end());
      for (auto g : {ToyGender::masculine, ToyGender::feminine})
        for (bool plural : {false, true}) target.push_back(ToyLexicon::target_agreeing(w.target, g, plural));
    }
  }
  std::set<std::string> verb_stems;
  for (const auto& v : lex.verbs) {
    source.push_back(v.source);
    if (!v.target_noun.empty()) target.push_back(v.target_noun);
    verb_stems.insert(v.target);  // the light verb is shared by design
  }
  for (const auto& p : lex.phrasal_verbs) verb_stems.insert(p.target);
  for (const auto& stem : verb_stems)
    for (size_t p = 0; p < kToyPersons; ++p) target.push_back(ToyLexicon::target_verb_form(stem, ToyPerson(p)));
  source.insert(source.end(), lex.particles.begin(), lex.particles.end());
  for (const auto* list : {&lex.pronouns, &lex.prepositions, &lex.adverbials, &lex.conjunctions})
    for (const auto& w : *list) {
      source.insert(source.end(), w.source.begin(), w.source.end());
      target.push_back(w.target);
    }
  target.push_back(lex.question_particle);

  EXPECT_EQ(std::set<std::string>(source.begin(), source.end()).size(), source.size());
  EXPECT_EQ(std::set<std::string>(target.begin(), target.end()).size(), target.size());
  for (const auto& words : {source, target})
    for (const auto& w : words) {
      ASSERT_FALSE(w.empty());
      EXPECT_EQ(w.find_first_not_of("abcdefghijklmnopqrstuvwxyz"), std::string::npos) << w;
    }
}

// "det adj0 adj1 nouns verb det noun prep det noun adverb-idiom ." with a masculine
// plural subject, spelled out with the endings toy_corpus.h documents.
TEST(ToyGrammar, ClauseIsReorderedToSovWithAgreement) {
  const ToyLexicon lex = ToyLexicon::generate(1);
  const size_t masc = find_noun(lex, ToyGender::masculine, false);
  const size_t fem = find_noun(lex, ToyGender::feminine, false);
  const size_t verb = find_verb(lex, ToyValency::transitive, false);
  const size_t idiom = 4;  // first two-word adverbial
  ASSERT_EQ(lex.adverbials[idiom].source.size(), 2u);

  ToySentence s;
  s.first.subject = {0, {0, 1}, masc, true};
  s.first.verb = verb;
  s.first.object = ToyNounPhrase{1, {}, fem, false};
  s.first.place = ToyPrepositionalPhrase{2, {2, {3}, fem, true}};
  s.first.adverbial = idiom;

  const Tokens source = render_toy_source(lex, s);
  const Tokens expected_source = {lex.determiners[0].source[0], lex.adjectives[0].source[0],
                                  lex.adjectives[1].source[0],  lex.nouns[masc].source + "s",
                                  lex.verbs[verb].source,       lex.determiners[1].source[0],
                                  lex.nouns[fem].source,        lex.prepositions[2].source[0],
                                  lex.determiners[2].source[0], lex.adjectives[3].source[0],
                                  lex.nouns[fem].source + "s",  lex.adverbials[idiom].source[0],
                                  lex.adverbials[idiom].source[1], "."};
  EXPECT_EQ(source, expected_source);

  const Tokens target = render_toy_target(lex, s);
  const Tokens expected_target = {
      lex.adverbials[idiom].target,                                   // adverbial first
      lex.determiners[0].target + "os", lex.nouns[masc].target + "en",  // subject: masc plural,
      lex.adjectives[1].target + "os", lex.adjectives[0].target + "os",  // adjectives mirrored
      lex.determiners[1].target + "a", lex.nouns[fem].target,            // object: fem singular
      lex.determiners[2].target + "as", lex.nouns[fem].target + "ar",    // place: fem plural ...
      lex.adjectives[3].target + "as", lex.prepositions[2].target,       // ... then postposition
      lex.verbs[verb].target + "ito",                                    // verb last, 3pl
      "."};
  EXPECT_EQ(target, expected_target);
}

TEST(ToyGrammar, VerbEndingFollowsTheSubjectsPersonAndNumber) {
  const ToyLexicon lex = ToyLexicon::generate(3);
  const std::vector<std::string> endings = {"im", "is", "it", "imo", "iso", "ito"};
  for (size_t p = 0; p < kToyPersons; ++p) {
    ToySentence s;
    s.first = pronoun_clause(lex, ToyPerson(p));
    EXPECT_EQ(render_toy_source(lex, s), (Tokens{lex.pronouns[p].source[0], lex.verbs[s.first.verb].source, "."}));
    EXPECT_EQ(render_toy_target(lex, s),
              (Tokens{lex.pronouns[p].target, lex.verbs[s.first.verb].target + endings[p], "."}));
  }
  ToySentence singular;
  singular.first.subject = {0, {}, 0, false};
  singular.first.verb = find_verb(lex, ToyValency::intransitive, false);
  EXPECT_EQ(render_toy_target(lex, singular).at(render_toy_target(lex, singular).size() - 2),
            lex.verbs[singular.first.verb].target + "it");
}

TEST(ToyGrammar, EachClauseOfAConjunctionAgreesWithItsOwnSubject) {
  const ToyLexicon lex = ToyLexicon::generate(1);
  ToySentence s;
  s.first = pronoun_clause(lex, first_singular);
  s.conjunction = 1;
  s.second.subject = {0, {}, find_noun(lex, ToyGender::feminine, false), true};
  s.second.verb = s.first.verb;
  s.question = true;
  const ToyVerb& v = lex.verbs[s.first.verb];
  EXPECT_EQ(render_toy_source(lex, s),
            (Tokens{lex.pronouns[0].source[0], v.source, lex.conjunctions[1].source[0], lex.determiners[0].source[0],
                    lex.source_noun(s.second.subject.noun, true), v.source, "?"}));
  EXPECT_EQ(render_toy_target(lex, s),
            (Tokens{lex.pronouns[0].target, v.target + "im", ",", lex.conjunctions[1].target,
                    lex.determiners[0].target + "as", lex.target_noun(s.second.subject.noun, true), v.target + "ito",
                    lex.question_particle, "?"}));
}

TEST(ToyGrammar, MultiWordUnitsChangeTheTokenCount) {
  const ToyLexicon lex = ToyLexicon::generate(1);
  // One source verb -> "noun light-verb" in the target.
  ToySentence light;
  light.first = pronoun_clause(lex, second_plural);
  light.first.verb = find_verb(lex, ToyValency::intransitive, true);
  EXPECT_EQ(render_toy_source(lex, light).size(), 3u);
  EXPECT_EQ(render_toy_target(lex, light),
            (Tokens{lex.pronouns[4].target, lex.verbs[light.first.verb].target_noun, lex.light_verb + "iso", "."}));
  // Two-word source idiom "verb particle" -> one target verb.
  ToySentence phrasal;
  phrasal.first = pronoun_clause(lex, third_singular);
  const ToyPhrasalVerb& idiom = lex.phrasal_verbs[0];
  phrasal.first.phrasal = 0;
  phrasal.first.verb = idiom.verb;
  if (lex.verbs[idiom.verb].valency == ToyValency::transitive) 
    phrasal.first.object = ToyNounPhrase{0, {}, find_noun(lex, ToyGender::masculine, false), false};
  const Tokens source = render_toy_source(lex, phrasal);
  EXPECT_EQ(source.at(1), lex.verbs[idiom.verb].source);
  EXPECT_EQ(source.at(2), lex.particles[idiom.particle]);
  const Tokens target = render_toy_target(lex, phrasal);
  EXPECT_EQ(target.at(target.size() - 2), idiom.target + "it");
  EXPECT_EQ(target.size() + 1, source.size());
  // One source noun -> "modifier head" compound; adjectives agree with the head.
  ToySentence compound;
  compound.first = pronoun_clause(lex, first_plural);
  compound.first.place = ToyPrepositionalPhrase{0, {3, {5}, find_noun(lex, ToyGender::feminine, true), false}};
  const ToyNoun& noun = lex.nouns[compound.first.place->object.noun];
  EXPECT_EQ(render_toy_target(lex, compound),
            (Tokens{lex.pronouns[3].target, lex.determiners[3].target + "a", noun.target_modifier, noun.target,
                    lex.adjectives[5].target + "a", lex.prepositions[0].target,
                    lex.verbs[compound.first.verb].target + "imo", "."}));
}

TEST(ToyGrammar, RejectsSentencesOutsideTheGrammar) {
  const ToyLexicon lex = ToyLexicon::generate(1);
  ToySentence s;
  s.first = pronoun_clause(lex, first_singular);
  s.first.object = ToyNounPhrase{};
  EXPECT_THROW(render_toy_target(lex, s), csan::Error);
  s.first.object.reset();
  s.first.verb = lex.verbs.size();
  EXPECT_THROW(render_toy_source(lex, s), csan::Error);
}

// Unambiguous mapping: a source sentence never comes with two different targets, so a
// perfect model exists. Checked on raw draws (no deduplication hides collisions).
TEST(ToyGrammar, TargetIsAFunctionOfTheSourceSentence) {
  const ToyLexicon lex = ToyLexicon::generate(5);
  csan::core::SplitMix64 random(11);
  std::unordered_map<std::string, std::string> target_of;
  size_t repeats = 0;
  for (int i = 0; i < 50000; ++i) {
    ToySentence s = sample_toy_sentence(lex, random);
    std::string source = join_tokens(render_toy_source(lex, s));
    std::string target = join_tokens(render_toy_target(lex, s));
    auto [it, inserted] = target_of.emplace(source, target);
    if (!inserted) {
      ++repeats;
      ASSERT_EQ(it->second, target) << "source: " << source;
    }
  }
  EXPECT_GT(repeats, 0u);  // short sentences do recur, so the check above was exercised
}

template <typename Entries, typename Word>
size_t index_of(const Entries& entries, const std::string& word, Word source_word) {
  for (size_t i = 0; i < entries.size(); ++i)
    if (source_word(entries[i]) == word) return i;
  ADD_FAILURE() << word << " is not in the seed-1 lexicon";
  return 0;
}

// The examples in toy_corpus.h, rebuilt from their structure: they stay true, and a
// change to how words are drawn (which would change every corpus) is noticed.
TEST(ToyGrammar, HeaderExamplesAreWhatSeedOneProduces) {
  const ToyLexicon lex = ToyLexicon::generate(1);
  auto first_word = [](const ToyWordPair& w) { return w.source[0]; };
  auto noun = [&](const std::string& w) { return index_of(lex.nouns, w, [](const ToyNoun& n) { return n.source; }); };
  auto verb = [&](const std::string& w) { return index_of(lex.verbs, w, [](const ToyVerb& v) { return v.source; }); };
  auto det = [&](const std::string& w) { return index_of(lex.determiners, w, first_word); };
  auto adj = [&](const std::string& w) { return index_of(lex.adjectives, w, first_word); };

  ToySentence question;
  question.first.pronoun = ToyPerson(index_of(lex.pronouns, "ku", first_word));
  question.first.verb = verb("tesuso");
  question.first.object = ToyNounPhrase{det("du"), {adj("bugiza")}, noun("tezo"), false};
  question.first.place =
      ToyPrepositionalPhrase{index_of(lex.prepositions, "be", first_word), {det("ki"), {}, noun("fokivu"), true}};
  question.question = true;
  EXPECT_EQ(join_tokens(render_toy_source(lex, question)), "ku tesuso du bugiza tezo be ki fokivus ?");
  EXPECT_EQ(join_tokens(render_toy_target(lex, question)), "sahi sila hom sota yutas lowekar su junekimo puhi ?");
  // Checked by hand: pronoun, object "det adj noun" -> "det noun adj", the postposition
  // after its noun phrase, the verb last; the question particle "puhi" (8) is unaligned.
  EXPECT_EQ(pharaoh_line(toy_word_alignment(lex, question)), "0-0 2-1 4-2 3-3 6-4 7-5 5-6 1-7 8-9");

  ToySentence statement;
  statement.first.subject = ToyNounPhrase{det("du"), {adj("mulamo"), adj("kabu")}, noun("raza"), false};
  statement.first.verb = verb("dosa");
  statement.first.adverbial = index_of(lex.adverbials, "dufiso", first_word);
  EXPECT_EQ(join_tokens(render_toy_source(lex, statement)), "du mulamo kabu raza dosa dufiso fune .");
  EXPECT_EQ(join_tokens(render_toy_target(lex, statement)), "hurito sila nupur nera hona karolo temit .");
  // The two-word idiom to its one word, the mirrored adjectives, the light verb's two words to "dosa".
  EXPECT_EQ(pharaoh_line(toy_word_alignment(lex, statement)), "5-0 6-0 0-1 3-2 2-3 1-4 4-5 4-6 7-7");
}

ToyCorpusOptions small_options(uint64_t seed) {
  ToyCorpusOptions options;
  options.train = 3000;
  options.valid = 200;
  options.test = 300;
  options.seed = seed;
  return options;
}

size_t token_count(const std::string& line) {
  size_t n = 1;
  for (char c : line) n += c == ' ';
  return n;
}

TEST(ToyCorpus, SplitsHaveTheRequestedSizesAndWellFormedLines) {
  const ToyCorpus corpus = generate_toy_corpus(small_options(1));
  ASSERT_EQ(corpus.splits.size(), 3u);
  const std::vector<std::pair<std::string, size_t>> expected = {{"train", 3000}, {"valid", 200}, {"test", 300}};
  for (size_t i = 0; i < 3; ++i) {
    const ToySplit& split = corpus.splits[i];
    EXPECT_EQ(split.name, expected[i].first);
    ASSERT_EQ(split.source.size(), expected[i].second);
    ASSERT_EQ(split.target.size(), expected[i].second);
    for (size_t l = 0; l < split.source.size(); ++l) {
      for (const auto* line : {&split.source[l], &split.target[l]}) {
        ASSERT_FALSE(line->empty());
        EXPECT_EQ(line->find("  "), std::string::npos);
        EXPECT_NE(line->front(), ' ');
        EXPECT_EQ(line->find('\n'), std::string::npos);
      }
      EXPECT_GE(token_count(split.source[l]), 3u);
      EXPECT_LE(token_count(split.source[l]), 20u);
      EXPECT_EQ(split.source[l].back(), split.target[l].back());  // "." or "?" on both sides
    }
  }
}

TEST(ToyCorpus, SameSeedIsIdenticalOtherSeedDiffers) {
  const ToyCorpus a = generate_toy_corpus(small_options(1));
  const ToyCorpus b = generate_toy_corpus(small_options(1));
  const ToyCorpus c = generate_toy_corpus(small_options(2));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(a.splits[i].source, b.splits[i].source);
    EXPECT_EQ(a.splits[i].target, b.splits[i].target);
  }
  std::unordered_set<std::string> lines_a(a.splits[0].source.begin(), a.splits[0].source.end());
  size_t shared = 0;
  for (const auto& line : c.splits[0].source) shared += lines_a.count(line);
  EXPECT_LT(shared, 10u);  // another seed means another lexicon: next to nothing in common
}

TEST(ToyCorpus, NoSentenceIsInTwoSplits) {
  const ToyCorpus corpus = generate_toy_corpus(small_options(4));
  std::unordered_set<std::string> seen;
  size_t lines = 0;
  for (const auto& split : corpus.splits) {
    seen.insert(split.source.begin(), split.source.end());
    lines += split.source.size();
  }
  EXPECT_EQ(seen.size(), lines);
  EXPECT_NE(describe_toy_corpus(corpus, small_options(4)).find("0 valid and 0 test sentences also in train"),
            std::string::npos);
}

TEST(ToyCorpus, TestSplitDoesNotDependOnTrainSize) {
  ToyCorpusOptions small = small_options(3), large = small_options(3);
  large.train = 6000;
  const ToyCorpus a = generate_toy_corpus(small), b = generate_toy_corpus(large);
  EXPECT_EQ(a.splits[2].source, b.splits[2].source);
  EXPECT_EQ(a.splits[1].target, b.splits[1].target);
  EXPECT_EQ(b.splits[0].source.size(), 6000u);
}

TEST(ToyCorpus, DefaultSizeVocabularyAndLengthsAreSmall) {
  const ToyCorpus corpus = generate_toy_corpus(ToyCorpusOptions{});
  EXPECT_EQ(corpus.splits[0].source.size(), 20000u);
  // Every lexicon entry is frequent at this size, so the counts are near the lexicon's.
  EXPECT_GE(corpus.source_types, 150u);
  EXPECT_LE(corpus.source_types, 200u);
  EXPECT_GE(corpus.target_types, 350u);
  EXPECT_LE(corpus.target_types, 500u);
  EXPECT_GT(corpus.source_mean_length, 7.0);
  EXPECT_LT(corpus.source_mean_length, 12.0);
  EXPECT_GT(corpus.target_mean_length, corpus.source_mean_length);  // compounds, commas, particles
}

TEST(ToyCorpus, MaxWordsBoundsSentenceLength) {
  ToyCorpusOptions options = small_options(1);
  options.max_words = 6;
  const ToyCorpus corpus = generate_toy_corpus(options);
  size_t longest = 0;
  for (const auto& line : corpus.splits[0].source) longest = std::max(longest, token_count(line));
  EXPECT_EQ(longest, 6u);
}

TEST(ToyCorpus, ImpossibleRequestsFailClearly) {
  ToyCorpusOptions options = small_options(1);
  options.max_words = 2;
  EXPECT_THROW(generate_toy_corpus(options), csan::Error);
  options.max_words = 3;  // only pronoun + intransitive verb + "." fits: a few hundred sentences
  try {
    generate_toy_corpus(options);
    FAIL() << "expected an error";
  } catch (const csan::Error& e) {
    EXPECT_NE(std::string(e.what()).find("distinct sentences of at most 3 tokens"), std::string::npos) << e.what();
  }
}

TEST(ToyCorpus, WritesOneFilePerSplitAndLanguage) {
  fs::path dir = fs::temp_directory_path() / ("csan_toy_corpus_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const ToyCorpus corpus = generate_toy_corpus(small_options(1));
  write_toy_corpus(corpus, (dir / "out").string(), "de", "en");
  for (const auto& split : corpus.splits) {
    std::string expected;
    for (const auto& line : split.target) expected += line + "\n";
    EXPECT_EQ(csan::read_file((dir / "out" / (split.name + ".en")).string()), expected);
    EXPECT_TRUE(fs::exists(dir / "out" / (split.name + ".de")));
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "out"), fs::directory_iterator{}), 6);
  write_toy_corpus(corpus, (dir / "aligned").string(), "de", "en", /*alignments=*/true);
  const ToySplit& test = corpus.splits.at(2);
  std::string alignments;
  for (const auto& line : test.alignment) alignments += line + "\n";
  EXPECT_EQ(csan::read_file((dir / "aligned" / "test.align").string()), alignments);
  fs::remove_all(dir);
}

}  // namespace
