# csan_use_fast_allocator(target): links Debian's tcmalloc (libtcmalloc-minimal4) into a
# LibTorch executable, ahead of glibc's malloc: faster training and a lower peak than glibc's,
# and jemalloc was slower (measured in docs/csan-train.md, "Memory"). Off under the
# sanitizers (they bring their own allocator) and where the library is absent (GPU hosts):
# glibc's malloc, tuned by core/allocator_tuning, then serves.
option(CSAN_TCMALLOC "Link csan-train and csan-generate with tcmalloc_minimal when it is installed" ON)
if(CSAN_TCMALLOC AND NOT CSAN_SANITIZE)
  find_library(CSAN_TCMALLOC_LIBRARY NAMES tcmalloc_minimal libtcmalloc_minimal.so.4)
endif()
if(CSAN_TCMALLOC_LIBRARY AND CSAN_TCMALLOC AND NOT CSAN_SANITIZE)
  message(STATUS "csan: csan-train and csan-generate allocate with ${CSAN_TCMALLOC_LIBRARY}")
else()
  message(STATUS "csan: glibc malloc (tcmalloc_minimal not found, or CSAN_TCMALLOC off, or a sanitized build)")
endif()

function(csan_use_fast_allocator target)
  if(CSAN_TCMALLOC_LIBRARY AND CSAN_TCMALLOC AND NOT CSAN_SANITIZE)
    # No symbol of it is named by our code: --no-as-needed keeps it in the executable's
    # needed list, where it comes before the C library and so serves malloc and new.
    target_link_libraries(${target} PRIVATE -Wl,--push-state,--no-as-needed ${CSAN_TCMALLOC_LIBRARY}
                                            -Wl,--pop-state)
  endif()
endfunction()
