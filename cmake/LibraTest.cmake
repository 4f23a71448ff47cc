include(GoogleTest)

# libra_unit_test(NAME SOURCES a.cpp b.cpp LIBS lib1 lib2)
# An in-process GoogleTest executable, labelled "unit" (these also run under
# ASan/UBSan in scripts/test.sh).
function(libra_unit_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${name} PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
endfunction()

# libra_multiprocess_test(NAME SOURCES a.cpp LIBS ... ) : a GoogleTest
# executable whose tests start real processes on loopback; labelled
# "multiprocess". LIBRA_BIN is defined to the `libra` tool's path.
function(libra_multiprocess_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE LIBRA_BIN="$<TARGET_FILE:libra>")
  add_dependencies(${name} libra)
  gtest_discover_tests(${name} PROPERTIES LABELS multiprocess DISCOVERY_TIMEOUT 60)
endfunction()
