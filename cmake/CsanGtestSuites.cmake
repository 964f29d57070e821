# Registers a GoogleTest binary with ctest as one test per test suite (`Suite` runs
# `--gtest_filter=Suite.*`) instead of one per test.
#
# Why: every process that loads Debian's LibTorch spends about 0.7 s in the dynamic loader
# and LibTorch's static initialisers (it pulls in ~290 libraries) before main(). The
# torch-linked unit binaries hold ~370 tests that take about 35 s together in one process
# each binary, but ~5 minutes as one process per test. One process per suite keeps the
# parallel scheduling and `ctest -R Suite` while paying the start-up ~110 times.
#
# Like gtest_discover_tests(... DISCOVERY_MODE PRE_TEST), the suites are listed by the
# binary itself when ctest starts (so none can be missed), and again whenever it is rebuilt.
#
#   csan_add_gtest_suites(TARGET [PROPERTIES prop value ...])   (at configure time)

set(_CSAN_GTEST_SUITES_LIST "${CMAKE_CURRENT_LIST_DIR}/CsanGtestSuitesList.cmake")

function(csan_add_gtest_suites target)
  cmake_parse_arguments(ARG "" "" "PROPERTIES" ${ARGN})
  set(base "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites")
  # Properties as "name [==[value]==]" pairs for set_tests_properties at ctest time.
  set(properties "")
  list(LENGTH ARG_PROPERTIES count)
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(i RANGE 0 ${last} 2)
      math(EXPR j "${i} + 1")
      list(GET ARG_PROPERTIES ${i} name)
      list(GET ARG_PROPERTIES ${j} value)
      string(APPEND properties "${name} [===[${value}]===] ")
    endforeach()
  endif()
  string(CONCAT include_content
    "set(executable [==[$<TARGET_FILE:${target}>]==])\n"
    "if(EXISTS \"\${executable}\")\n"
    "  if(NOT EXISTS \"${base}_tests.cmake\" OR NOT \"${base}_tests.cmake\" IS_NEWER_THAN \"\${executable}\" OR\n"
    "     NOT \"${base}_tests.cmake\" IS_NEWER_THAN \"\${CMAKE_CURRENT_LIST_FILE}\")\n"
    "    include([==[${_CSAN_GTEST_SUITES_LIST}]==])\n"
    "    _csan_list_gtest_suites(\"\${executable}\" [==[${base}_tests.cmake]==] [====[${properties}]====])\n"
    "  endif()\n"
    "  include([==[${base}_tests.cmake]==])\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  file(GENERATE OUTPUT "${base}_include.cmake" CONTENT "${include_content}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${base}_include.cmake")
endfunction()
