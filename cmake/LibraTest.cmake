include(GoogleTest)

# Every test has a timeout: a unit test 60 s, a multi-process test 120 s, a
# slow one 600 s (each test of the executable, not the executable as a whole).

# libra_unit_test(NAME SOURCES a.cpp b.cpp LIBS lib1 lib2)
# An in-process GoogleTest executable, labelled "unit" (these also run under
# ASan/UBSan in scripts/test.sh).
function(libra_unit_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${name} PROPERTIES LABELS unit TIMEOUT 60 DISCOVERY_TIMEOUT 60)
endfunction()

# libra_multiprocess_test(NAME [SLOW] SOURCES a.cpp LIBS ... ) : a GoogleTest
# executable whose tests start real processes on loopback; labelled
# "multiprocess", or "slow" instead with SLOW (its tests take seconds each:
# whole training jobs, switch failures, emulated clusters; `ctest -LE slow`
# leaves them out). One label each: gtest_discover_tests cannot pass a list.
# LIBRA_BIN is defined to the `libra` tool's path.
function(libra_multiprocess_test name)
  cmake_parse_arguments(T "SLOW" "" "SOURCES;LIBS" ${ARGN})
  set(labels multiprocess)
  set(timeout 120)
  if(T_SLOW)
    set(labels slow)
    set(timeout 600)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE LIBRA_BIN="$<TARGET_FILE:libra>")
  add_dependencies(${name} libra)
  gtest_discover_tests(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout} DISCOVERY_TIMEOUT 60)
endfunction()
