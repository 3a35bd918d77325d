# add_ccm_test(NAME name SOURCES a.cc b.cc LIBS lib1 lib2 [LABELS l1 l2] [TIMEOUT s])
# Builds a GoogleTest binary and registers its tests with CTest (one CTest entry per binary so
# fixtures that start a simulator start it once).
function(add_ccm_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} ccm_test_support GTest::gmock GTest::gtest_main)
  # The test's own files are compiled without optimisation: GCC spends most of a test file's time
  # optimising table initialisers and gtest macros (addresses_test.cc: 38 s at -O2, 8 s at -O0).
  # The code under test lives in the libraries, which keep the build type's flags.
  target_compile_options(${T_NAME} PRIVATE -O0)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "CCM_SOURCE_DIR=${CMAKE_SOURCE_DIR};CCM_BINARY_DIR=${CMAKE_BINARY_DIR}")
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
