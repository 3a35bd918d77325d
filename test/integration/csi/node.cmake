# The CSI Node service (src/csi/node) on real loop devices, filesystems and mounts, over the real
# gRPC socket. Needs root, loop devices and mount(2) (the test machines have them); the test
# process runs in a private mount namespace and leaves no loop device or mount behind.
if(TARGET ccm_csi_node AND TARGET ccm_kube_emulator)
  add_library(ccm_csi_node_testing
    ${CMAKE_CURRENT_LIST_DIR}/loop_device.cc
    ${CMAKE_CURRENT_LIST_DIR}/node_env.cc)
  target_include_directories(ccm_csi_node_testing PUBLIC ${PROJECT_SOURCE_DIR}/test)
  target_link_libraries(ccm_csi_node_testing PUBLIC ccm_csi_node ccm_test_support
    ccm_csi_test_support)

  add_ccm_test(NAME csi_node_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/node_test_main.cc
            ${CMAKE_CURRENT_LIST_DIR}/node_volume_test.cc
            ${CMAKE_CURRENT_LIST_DIR}/node_device_test.cc
            ${CMAKE_CURRENT_LIST_DIR}/node_info_test.cc
    LIBS ccm_csi_node_testing ccm_kube_emulator LABELS integration TIMEOUT 300)
endif()

# The real binary in node mode (a child process, so inside the test's mount namespace).
if(TARGET ccm_csi_node AND TARGET ccm_kube_emulator AND TARGET vsphere-csi-driver)
  add_ccm_test(NAME csi_node_binary_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/node_test_main.cc
            ${CMAKE_CURRENT_LIST_DIR}/node_binary_test.cc
            ${PROJECT_SOURCE_DIR}/test/integration/child_process.cc
    LIBS ccm_csi_node_testing ccm_kube_emulator LABELS integration TIMEOUT 180)
  target_compile_definitions(csi_node_binary_test PRIVATE
    CSI_DRIVER_BINARY="$<TARGET_FILE:vsphere-csi-driver>")
  add_dependencies(csi_node_binary_test vsphere-csi-driver)
endif()

# End to end with the Controller service on the simulator's CNS.
if(TARGET ccm_csi_node_testing AND TARGET ccm_csi_controller_testing)
  add_ccm_test(NAME csi_node_e2e_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/node_test_main.cc ${CMAKE_CURRENT_LIST_DIR}/node_e2e_test.cc
    LIBS ccm_csi_node_testing ccm_csi_controller_testing ccm_kube_emulator
    LABELS integration TIMEOUT 300)
  add_dependencies(csi_node_e2e_test vcsim)
endif()
