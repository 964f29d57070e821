# At ctest time, from the file csan_add_gtest_suites() generates (cmake/CsanGtestSuites.cmake):
# lists the binary's suites and writes one add_test per suite into CTEST_FILE.
function(_csan_list_gtest_suites executable ctest_file properties)
  execute_process(COMMAND "${executable}" --gtest_list_tests OUTPUT_VARIABLE listing
                  RESULT_VARIABLE result TIMEOUT 60)
  if(NOT result EQUAL 0)
    # A failing test that says why, rather than silently no tests.
    file(WRITE "${ctest_file}" "add_test([==[${executable}_LIST_FAILED]==] [==[${executable}]==] --gtest_list_tests)\n")
    return()
  endif()
  set(content "")
  string(REPLACE "\n" ";" lines "${listing}")
  foreach(line IN LISTS lines)
    # A suite line is the name and a dot at column 0 (typed suites add "  # TypeParam = ...");
    # test lines are indented, and gtest_main's "Running main() from ..." has no final dot.
    if(line MATCHES "^([A-Za-z_][A-Za-z0-9_/]*)\\.( +#.*)?$")
      set(suite "${CMAKE_MATCH_1}")
      string(APPEND content
             "add_test([==[${suite}]==] [==[${executable}]==] [==[--gtest_filter=${suite}.*]==])\n"
             "set_tests_properties([==[${suite}]==] PROPERTIES ${properties}"
             # A suite whose every test skipped itself (GTEST_SKIP) shows as skipped: gtest then
             # reports 0 passed and, on the next line, the skipped ones. "0 passed" alone also
             # ends a suite whose tests all failed, which must stay a failure.
             " SKIP_REGULAR_EXPRESSION [==[\\[  PASSED  \\] 0 tests\\.\n\\[  SKIPPED \\]]==])\n")
    endif()
  endforeach()
  file(WRITE "${ctest_file}" "${content}")
endfunction()
