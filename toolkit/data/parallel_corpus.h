// Reading the text of one split: PREFIX.<lang> for each language, several prefixes
// concatenated, with every file checked for UTF-8 and equal line counts.
#pragma once

#include <string>
#include <vector>

namespace csan::data {

// lines[l] holds the lines of language langs[l]. Throws csan::Error naming both files
// and both counts when the languages of one prefix differ in length.
struct ParallelText {
  std::vector<std::vector<std::string>> lines;
  size_t size() const { return lines.empty() ? 0 : lines[0].size(); }
};

ParallelText read_parallel_text(const std::vector<std::string>& prefixes,
                                const std::vector<std::string>& langs);

}  // namespace csan::data
