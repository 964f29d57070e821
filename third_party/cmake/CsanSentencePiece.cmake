# csan::sentencepiece: the static, position-independent SentencePiece that
# tools/build-sentencepiece.sh (run by tools/install-deps.sh) builds into
# ${CSAN_DEPS_DIR}/sentencepiece from Debian's source package. Against the system protobuf it
# links libprotobuf.so.32, the one Debian's LibTorch links, so a process holds one protobuf;
# built with --builtin-protobuf it carries its own protobuf-lite, hidden, and links none.
# Included by the main build and by the fuzz build (tests/fuzz), after find_package(Threads).
set(CSAN_DEPS_DIR "${CMAKE_CURRENT_LIST_DIR}/../../.deps" CACHE PATH
    "Where tools/build-sentencepiece.sh builds SentencePiece (its CSAN_DEPS_DIR)")
get_filename_component(_csan_spm "${CSAN_DEPS_DIR}/sentencepiece" ABSOLUTE)
foreach(_file stamp lib/libsentencepiece.a lib/libsentencepiece_train.a include/sentencepiece_processor.h)
  if(NOT EXISTS "${_csan_spm}/${_file}")
    message(FATAL_ERROR "SentencePiece is not built in ${_csan_spm} (no ${_file}): run tools/install-deps.sh")
  endif()
endforeach()
file(STRINGS "${_csan_spm}/stamp" _csan_spm_protobuf REGEX "^protobuf=")
# Rebuilding it (another protobuf, new flags) relinks everything that uses it.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_csan_spm}/stamp")

add_library(csan::sentencepiece INTERFACE IMPORTED)
# Before /usr/include, which may hold Debian's libsentencepiece-dev headers.
target_include_directories(csan::sentencepiece SYSTEM INTERFACE "${_csan_spm}/include")
target_link_libraries(csan::sentencepiece INTERFACE
                      "${_csan_spm}/lib/libsentencepiece_train.a" "${_csan_spm}/lib/libsentencepiece.a" Threads::Threads)
# Nothing of it is exported from what links it, whatever its objects' visibility (the bundled
# protobuf-lite defines a few templates with default visibility).
target_link_options(csan::sentencepiece INTERFACE "LINKER:--exclude-libs,libsentencepiece.a:libsentencepiece_train.a")
if(_csan_spm_protobuf STREQUAL "protobuf=system")
  # The full libprotobuf rather than -lite: the generated code needs only the lite part,
  # which libprotobuf contains, and LibTorch loads libprotobuf; both would be two copies.
  find_package(Protobuf REQUIRED)
  target_link_libraries(csan::sentencepiece INTERFACE protobuf::libprotobuf)
endif()
message(STATUS "csan: SentencePiece from ${_csan_spm} (${_csan_spm_protobuf})")
