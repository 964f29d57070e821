# csan_spm_isolated: a MODULE library wrapping libsentencepiece behind a C ABI, loaded by
# csan-generate with dlmopen() into a separate link namespace, so that the protobuf
# bundled with libsentencepiece never meets LibTorch's (linking both aborts a process).
# It is written next to the executables, where csan-generate looks for it
# (CSAN_SPM_MODULE in the environment overrides the path).
add_library(csan_spm_isolated MODULE ${PROJECT_SOURCE_DIR}/toolkit/generation/spm_module/csan_spm_isolated.cc)
target_link_libraries(csan_spm_isolated PRIVATE csan::sentencepiece)
set_target_properties(csan_spm_isolated PROPERTIES
  CXX_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/cli)
add_dependencies(csan_generation csan_spm_isolated)
target_link_libraries(csan_generation PRIVATE ${CMAKE_DL_LIBS})
# Under -DCSAN_SANITIZE the module stays uninstrumented: an instrumented one brings the
# ASan runtime into the dlmopen() namespace, where it is not the first library and
# aborts the process ("ASan runtime does not come first"); it only forwards to
# SentencePiece, which is uninstrumented anyway.
if(CSAN_SANITIZE)
  target_compile_options(csan_spm_isolated PRIVATE -fno-sanitize=all)
  target_link_options(csan_spm_isolated PRIVATE -fno-sanitize=all)
endif()
