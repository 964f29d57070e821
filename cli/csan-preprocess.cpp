// csan-preprocess: not implemented yet.
#include <cstdio>

int main() {
  std::fprintf(stderr, "csan-preprocess: not implemented yet\n");
  return 2;
}
