# The real binary in syncer mode (leader election, metrics port, SIGTERM, RBAC of its calls).
if(TARGET vsphere-csi-driver AND TARGET ccm_csi_syncer_app AND TARGET ccm_vcsim_testing
   AND TARGET ccm_kube_emulator)
  add_ccm_test(NAME csi_syncer_binary_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/syncer_env.cc ${CMAKE_CURRENT_LIST_DIR}/syncer_binary_test.cc
            ${PROJECT_SOURCE_DIR}/test/integration/child_process.cc
    LIBS ccm_csi_syncer ccm_vcsim_testing ccm_kube_emulator ccm_kube_control_api yaml-cpp PkgConfig::HTTPLIB
    LABELS integration TIMEOUT 180)
  target_include_directories(csi_syncer_binary_test PRIVATE ${PROJECT_SOURCE_DIR}/test)
  target_compile_definitions(csi_syncer_binary_test PRIVATE
    CCM_SOURCE_DIR="${PROJECT_SOURCE_DIR}" CSI_DRIVER_BINARY="$<TARGET_FILE:vsphere-csi-driver>")
  add_dependencies(csi_syncer_binary_test vsphere-csi-driver vcsim)
endif()

# The real binary in controller mode: a create killed while its CNS task runs, retried after a
# restart, makes one volume; the RBAC of its calls.
if(TARGET vsphere-csi-driver AND TARGET ccm_csi_syncer AND TARGET ccm_vcsim_testing
   AND TARGET ccm_kube_emulator)
  add_ccm_test(NAME csi_controller_binary_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/syncer_env.cc ${CMAKE_CURRENT_LIST_DIR}/controller_binary_test.cc
            ${PROJECT_SOURCE_DIR}/test/integration/child_process.cc
    LIBS ccm_csi_syncer ccm_vcsim_testing ccm_kube_emulator ccm_kube_control_api ccm_csi_test_support ccm_csi_proto
         yaml-cpp PkgConfig::HTTPLIB
    LABELS integration TIMEOUT 180)
  target_include_directories(csi_controller_binary_test PRIVATE ${PROJECT_SOURCE_DIR}/test)
  target_compile_definitions(csi_controller_binary_test PRIVATE
    CCM_SOURCE_DIR="${PROJECT_SOURCE_DIR}" CSI_DRIVER_BINARY="$<TARGET_FILE:vsphere-csi-driver>")
  add_dependencies(csi_controller_binary_test vsphere-csi-driver vcsim)
endif()

# The real binary as the validating admission webhook (TLS, the API emulator, rotation).
if(TARGET vsphere-csi-driver AND TARGET ccm_csi_syncer_app AND TARGET ccm_kube_emulator)
  add_ccm_test(NAME csi_webhook_binary_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/webhook_binary_test.cc
            ${PROJECT_SOURCE_DIR}/test/integration/child_process.cc
    LIBS ccm_app_lib ccm_kube_emulator PkgConfig::HTTPLIB yaml-cpp
    LABELS integration TIMEOUT 120)
  target_include_directories(csi_webhook_binary_test PRIVATE ${PROJECT_SOURCE_DIR}/test)
  target_compile_definitions(csi_webhook_binary_test PRIVATE
    CCM_SOURCE_DIR="${PROJECT_SOURCE_DIR}" CSI_DRIVER_BINARY="$<TARGET_FILE:vsphere-csi-driver>")
  add_dependencies(csi_webhook_binary_test vsphere-csi-driver)
endif()
