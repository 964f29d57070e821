// A seeded synthetic treebank in CoNLL-U for the tagging tests and the quick mode of
// tools/experiments/tagger-table2.sh (tools/csan-toy-treebank; the UD treebanks in
// ../shared/data are never copied into the repository). Sentences are "PRON VERB DET [ADJ] NOUN
// [ADP DET NOUN] ." clauses; "run", "walk" and "fish" are NOUN after a determiner and
// VERB after a pronoun (ambiguous words: context decides), and rare made-up nouns
// ("...ion") and verbs ("...ed") give OOV words whose spelling tells their tag. Some
// sentences start with a multiword token and a comment, and long sentences (chained
// clauses) exceed a chunk. XPOS is a finer tag (NN/NNS, VBZ/VBD, ...).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace csan::data {

class ToyTreebank {
 public:
  explicit ToyTreebank(uint64_t seed) : state_(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}

  // `sentences` sentences of CoNLL-U; every `long_every`-th is `long_clauses` clauses long.
  std::string conllu(int sentences, int long_every = 0, int long_clauses = 12) {
    std::string out;
    for (int s = 0; s < sentences; ++s) {
      const int clauses = long_every > 0 && s % long_every == long_every - 1 ? long_clauses : 1 + int(next() % 2);
      out += sentence(s, clauses);
    }
    return out;
  }

 private:
  struct Word {
    std::string form, upos, xpos;
  };

  uint64_t next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return state_ >> 33;
  }
  template <size_t N>
  const char* pick(const char* const (&words)[N]) {
    return words[next() % N];
  }
  std::string made_up(const char* suffix) {
    static const char* const syllables[] = {"ba", "ko", "ri", "mu", "te", "sa", "lo", "ne"};
    return std::string(pick(syllables)) + pick(syllables) + suffix;
  }

  void clause(std::vector<Word>& w) {
    static const char* const pronouns[] = {"I", "you", "they", "we"};
    static const char* const verbs[] = {"sees", "likes", "takes", "finds", "wants", "makes"};
    static const char* const ambiguous[] = {"run", "walk", "fish"};
    static const char* const determiners[] = {"the", "a", "this", "every"};
    static const char* const adjectives[] = {"big", "red", "old", "quick", "small"};
    static const char* const nouns[] = {"dog", "cat", "house", "river", "tree", "car", "book", "idea"};
    static const char* const prepositions[] = {"in", "on", "near", "with"};
    w.push_back({pick(pronouns), "PRON", "PRP"});
    const uint64_t kind = next() % 6;
    if (kind == 0) w.push_back({pick(ambiguous), "VERB", "VBP"});
    else if (kind == 1) w.push_back({made_up("ed"), "VERB", "VBD"});
    else w.push_back({pick(verbs), "VERB", "VBZ"});
    auto noun_phrase = [&] {
      w.push_back({pick(determiners), "DET", "DT"});
      if (next() % 2) w.push_back({pick(adjectives), "ADJ", "JJ"});
      const uint64_t noun = next() % 6;
      if (noun == 0) w.push_back({pick(ambiguous), "NOUN", "NN"});
      else if (noun == 1) w.push_back({made_up("ion"), "NOUN", "NN"});
      else w.push_back({pick(nouns), "NOUN", next() % 3 ? "NN" : "NNS"});
    };
    noun_phrase();
    if (next() % 3 == 0) {
      w.push_back({pick(prepositions), "ADP", "IN"});
      noun_phrase();
    }
  }

  std::string sentence(int index, int clauses) {
    std::vector<Word> words;
    for (int c = 0; c < clauses; ++c) {
      if (c) words.push_back({"and", "CCONJ", "CC"});
      clause(words);
    }
    words.push_back({".", "PUNCT", "."});
    std::string out = "# sent_id = " + std::to_string(index + 1) + "\n";
    const bool contraction = index % 5 == 2;  // "I'm" = "I" + "'m" as a multiword token
    if (contraction) out += "1-2\tI'm\t_\t_\t_\t_\t_\t_\t_\t_\n";
    int id = 1;
    auto line = [&](const Word& w) {
      out += std::to_string(id++) + "\t" + w.form + "\t_\t" + w.upos + "\t" + w.xpos + "\t_\t0\tdep\t_\t_\n";
    };
    if (contraction) line({"I", "PRON", "PRP"}), line({"'m", "AUX", "VBP"});
    for (const auto& w : words) line(w);
    return out + "\n";
  }

  uint64_t state_;
};

}  // namespace csan::data
