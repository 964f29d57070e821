// csan-score: not implemented yet (see the issue tracker).
#include <cstdio>

int main() {
  std::fprintf(stderr, "csan-score: not implemented yet\n");
  return 2;
}
