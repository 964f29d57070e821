// The rows of the Markdown tables tools/experiments writes (results.md), for the tests of
// those scripts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/support/text_files.h"

namespace csan::testing {

// System name (first cell) -> the row's cells, trimmed; the header row ("| System ...")
// and lines that are not table rows are skipped.
inline std::map<std::string, std::vector<std::string>> table_rows(const std::string& markdown) {
  std::map<std::string, std::vector<std::string>> rows;
  for (const std::string& line : split(markdown, '\n')) {
    if (line.rfind("| ", 0) != 0 || line.rfind("| System", 0) == 0) continue;
    std::vector<std::string> cells;
    for (const std::string& cell : split(line, '|')) cells.push_back(trim_spaces(cell));
    cells.erase(cells.begin());  // before the first '|'
    rows[cells[0]] = cells;
  }
  return rows;
}

}  // namespace csan::testing
