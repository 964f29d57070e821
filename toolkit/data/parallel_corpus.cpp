#include "toolkit/data/parallel_corpus.h"

#include <iterator>

#include "toolkit/core/error.h"
#include "toolkit/core/text_file.h"

namespace csan::data {

ParallelText read_parallel_text(const std::vector<std::string>& prefixes,
                                const std::vector<std::string>& langs) {
  ParallelText text;
  text.lines.resize(langs.size());
  for (const auto& prefix : prefixes) {
    std::vector<std::vector<std::string>> per_lang;
    for (const auto& lang : langs) per_lang.push_back(read_lines(prefix + "." + lang));
    for (size_t l = 1; l < langs.size(); ++l) {
      if (per_lang[l].size() != per_lang[0].size())
        throw Error("line counts differ: " + prefix + "." + langs[0] + " has " +
                    std::to_string(per_lang[0].size()) + " lines, " + prefix + "." + langs[l] +
                    " has " + std::to_string(per_lang[l].size()));
    }
    for (size_t l = 0; l < langs.size(); ++l) {
      auto& all = text.lines[l];
      if (all.empty()) {
        all = std::move(per_lang[l]);
      } else {
        all.insert(all.end(), std::make_move_iterator(per_lang[l].begin()),
                   std::make_move_iterator(per_lang[l].end()));
      }
    }
  }
  return text;
}

}  // namespace csan::data
