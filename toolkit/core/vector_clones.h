// CSAN_WITH_AVX2_CLONE before a function definition: GCC builds it twice, for plain
// x86-64 (SSE2, what the whole build targets) and for x86-64-v3 (AVX2, FMA), and picks
// one when the program loads (glibc ifunc). Hot loops written so they vectorize then
// run at full vector width on machines that have it, without making the binaries
// machine-specific. Helpers the function inlines are compiled both ways too.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__)
#define CSAN_WITH_AVX2_CLONE __attribute__((target_clones("arch=x86-64-v3", "default")))
// Also an x86-64-v4 (AVX-512) build, for functions written with 16-float vectors: the v3 and
// default builds run those as two or four registers, the v4 build as one.
#define CSAN_WITH_AVX512_AND_AVX2_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CSAN_WITH_AVX2_CLONE
#define CSAN_WITH_AVX512_AND_AVX2_CLONES
#endif
