// TER's edit distance on very long lines: sacreBLEU's full (n+1) x (m+1) matrix of a
// 50k-word line is 2.5e9 cells (12 GB here before the DP kept only the beam); the beam
// is all that is ever written, so memory must stay linear in the length.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <new>
#include <vector>

#include "toolkit/scoring/ter_edits.h"

namespace csan::scoring {
namespace {

// The exit status of f() run in a child process limited to `bytes` of address space.
int run_with_memory_limit(size_t bytes, int (*f)()) {
  const pid_t child = ::fork();
  if (child == 0) {
    rlimit limit{bytes, bytes};
    ::setrlimit(RLIMIT_AS, &limit);
    try {
      ::_exit(f());
    } catch (const std::bad_alloc&) {
      ::_exit(2);
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A 50k-word reference and the same line with every 1000th word replaced: 50 edits, no
// shift can help (every word is distinct).
int fifty_thousand_words() {
  std::vector<uint32_t> ref(50000);
  for (uint32_t i = 0; i < ref.size(); ++i) ref[i] = i;
  std::vector<uint32_t> hyp = ref;
  for (size_t i = 0; i < hyp.size(); i += 1000) hyp[i] = 1000000 + static_cast<uint32_t>(i);
  return ter_edits(hyp, ref) == 50 ? 0 : 1;
}

TEST(TerMemory, FiftyThousandWordLineFitsIn512MiB) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space; RLIMIT_AS cannot apply";
#endif
  EXPECT_EQ(run_with_memory_limit(size_t{512} << 20, fifty_thousand_words), 0)
      << "2: out of memory under the limit; 1: wrong edit count";
}

}  // namespace
}  // namespace csan::scoring
