# kube_informer_bench: informer list + watch throughput and memory per cached Node (not a ctest).
if(TARGET ccm_kube AND EXISTS ${CMAKE_SOURCE_DIR}/test/fixtures/kube_emulator/CMakeLists.txt)
  add_executable(kube_informer_bench ${CMAKE_CURRENT_LIST_DIR}/kube_informer_bench.cc)
  target_link_libraries(kube_informer_bench PRIVATE ccm_kube ccm_kube_emulator)
endif()
