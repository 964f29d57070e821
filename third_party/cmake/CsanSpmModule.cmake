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
