# ccm_test_pch(): with GCC and CCM_PCH, the target ccm_test_pch, whose precompiled header every
# test's own files use (add_ccm_test): the standard library, abseil, nlohmann-json, gtest and
# gmock, parsed once per build instead of once per test file. A test file spends about half its
# compile time (-O0) parsing headers; these take 16% off each (measured on a CSI integration test
# file: 9.3 s to 7.8 s). Its flags are the tests' (-O0, gtest's definitions, and -pthread, which
# add_ccm_test gives every test, not only those that link gRPC): GCC ignores a precompiled header
# built with other flags, and -Winvalid-pch with -Werror makes that an error.
# Not with clang (the sanitizer and fuzz builds), whose precompiled headers refuse any difference
# in definitions between the test targets.
function(ccm_test_pch)
  if(NOT CCM_PCH OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()
  endif()
  add_library(ccm_test_pch OBJECT ${CMAKE_SOURCE_DIR}/cmake/pch_anchor.cc)
  target_link_libraries(ccm_test_pch PRIVATE GTest::gmock nlohmann_json::nlohmann_json
    absl::status absl::statusor absl::strings absl::str_format absl::synchronization absl::time
    absl::flat_hash_map Threads::Threads)
  target_compile_options(ccm_test_pch PRIVATE -O0 -pthread)
  target_precompile_headers(ccm_test_pch PRIVATE
    <algorithm> <chrono> <functional> <map> <memory> <optional> <set> <string> <string_view>
    <thread> <utility> <vector>
    <absl/container/flat_hash_map.h> <absl/status/statusor.h> <absl/strings/str_cat.h>
    <absl/strings/str_format.h> <absl/synchronization/mutex.h> <absl/time/time.h>
    <nlohmann/json.hpp> <gtest/gtest.h> <gmock/gmock.h>)
endfunction()

# add_ccm_test(NAME name SOURCES a.cc b.cc LIBS lib1 lib2 [LABELS l1 l2] [TIMEOUT s])
# Builds a GoogleTest binary and registers its tests with CTest (one CTest entry per binary so
# fixtures that start a simulator start it once).
# The slow tests' run times (s, this 2-core machine, the GCC build): CTest starts the costliest
# first (its COST property). A clean clone has no timings of its own yet, and a long test that
# starts last runs alone at the end of its phase; the ThreadSanitizer phase, where nothing runs
# beside the tests, pays that in full.
set(CCM_TEST_COSTS
  vcenter_faults_test=66 node_e2e_test=41 peers_csi_test=41 peers_sanity_test=40
  kube_emulator_test=35 kube_faults_test=34 controllers_emulator_test=33 csi_syncer_test=32
  csi_controller_binary_test=29 csi_controller_multi_vc_test=26 ccm_diagnose_test=25
  ccm_leader_election_test=24 peers_cpi_test=20 peers_api_corpus_test=17 cns_client_test=17
  csi_syncer_binary_test=15 nsxt_controllers_test=13 ccm_endpoints_test=13
  csi_controller_conformance_test=12 csi_controller_zones_test=12)

# ccm_test_cost(NAME): the COST of NAME from CCM_TEST_COSTS, when it has one.
function(ccm_test_cost name)
  foreach(entry IN LISTS CCM_TEST_COSTS)
    if(entry MATCHES "^${name}=([0-9]+)$")
      set_tests_properties(${name} PROPERTIES COST ${CMAKE_MATCH_1})
    endif()
  endforeach()
endfunction()

function(add_ccm_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} ccm_test_support GTest::gmock GTest::gtest_main)
  # The test's own files are compiled without optimisation: GCC spends most of a test file's time
  # optimising table initialisers and gtest macros (addresses_test.cc: 38 s at -O2, 8 s at -O0).
  # The code under test lives in the libraries, which keep the build type's flags.
  target_compile_options(${T_NAME} PRIVATE -O0 -pthread)
  if(TARGET ccm_test_pch)
    target_precompile_headers(${T_NAME} REUSE_FROM ccm_test_pch)
  endif()
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "CCM_SOURCE_DIR=${CMAKE_SOURCE_DIR};CCM_BINARY_DIR=${CMAKE_BINARY_DIR}")
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
  ccm_test_cost(${T_NAME})
endfunction()
