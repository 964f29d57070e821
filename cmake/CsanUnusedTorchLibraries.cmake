# The interface target csan_unused_torch_libraries: every executable that links LibTorch
# through a csan component also links an empty stand-in for each library LibTorch names but
# nothing loaded uses (cmake/find-unused-torch-libraries.sh says which and why), so that the
# loader never maps them. Debian's LibTorch 1.13 names OpenCV, FFmpeg, LevelDB, LMDB and
# ZeroMQ, which bring ~220 more libraries: with the stand-ins a csan program starts with
# ~75 MiB less resident memory and ~0.13 s sooner (docs/development.md, "Libraries LibTorch
# names but does not use"). A LibTorch built with --as-needed (pip's, CUDA builds) gets none.
# Shared libraries (the Python module) are left as they are: they load into processes that
# may load LibTorch for their own use.
option(CSAN_SKIP_UNUSED_TORCH_LIBRARIES
       "Link empty stand-ins for the libraries LibTorch names but does not use (less memory, faster start)" ON)

add_library(csan_unused_torch_libraries INTERFACE)
set(_stand_ins "")
if(CSAN_SKIP_UNUSED_TORCH_LIBRARIES AND NOT APPLE AND TARGET torch_cpu)
  get_target_property(_torch_cpu torch_cpu LOCATION)
  if(_torch_cpu AND EXISTS "${_torch_cpu}")
    set(_dir ${CMAKE_BINARY_DIR}/unused-torch-libraries)
    file(TIMESTAMP "${_torch_cpu}" _stamp)
    set(_key "${_torch_cpu} ${_stamp} ${CMAKE_CXX_COMPILER}")
    # The search runs the loader ~5 times (seconds): once per LibTorch, not per configure.
    set(_cached_ok TRUE)
    foreach(_file ${CSAN_UNUSED_TORCH_STAND_INS})
      if(NOT EXISTS "${_file}")
        set(_cached_ok FALSE)
      endif()
    endforeach()
    if(NOT "${_key}" STREQUAL "${CSAN_UNUSED_TORCH_KEY}" OR NOT _cached_ok)
      execute_process(COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/find-unused-torch-libraries.sh
                              ${_torch_cpu} ${CMAKE_CXX_COMPILER} ${_dir}
                      OUTPUT_VARIABLE _found OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
      if(NOT _rc EQUAL 0)
        set(_found "")
      endif()
      string(REPLACE "\n" ";" _found "${_found}")
      set(CSAN_UNUSED_TORCH_STAND_INS "${_found}" CACHE INTERNAL "stand-ins for unused LibTorch libraries")
      set(CSAN_UNUSED_TORCH_KEY "${_key}" CACHE INTERNAL "the LibTorch the stand-ins were found for")
    endif()
    set(_stand_ins ${CSAN_UNUSED_TORCH_STAND_INS})
  endif()
endif()
if(_stand_ins)
  list(LENGTH _stand_ins _count)
  message(STATUS "csan: ${_count} libraries LibTorch names but does not use get empty stand-ins in csan's programs")
  # No symbol of theirs is used: --no-as-needed keeps them in the program's needed list, which the
  # loader reads before LibTorch's; the rpath makes the program find them where the build left them.
  set(_exe "$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>")
  # One linker argument, so that CMake cannot reorder the files out of the --no-as-needed span.
  string(REPLACE ";" "," _files "${_stand_ins}")
  target_link_libraries(csan_unused_torch_libraries INTERFACE
                        "$<${_exe}:-Wl,--push-state,--no-as-needed,${_files},--pop-state>")
  target_link_options(csan_unused_torch_libraries INTERFACE "$<${_exe}:LINKER:-rpath,${CMAKE_BINARY_DIR}/unused-torch-libraries>")
else()
  message(STATUS "csan: LibTorch's libraries are loaded as it names them")
endif()
