# The real vsphere-csi-driver binary: node mode on a temp socket (Probe, GetPluginInfo over gRPC,
# SIGTERM), controller mode's /metrics, and the start-up errors (bad X_CSI_MODE, no endpoint,
# unreadable config). No fixture: the controller's vCenter is unreachable (Probe not ready).
if(TARGET vsphere-csi-driver AND TARGET ccm_csi_server)
  add_ccm_test(NAME csi_identity_binary_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/identity_test.cc
            ${PROJECT_SOURCE_DIR}/test/integration/child_process.cc
    LIBS ccm_csi_server ccm_csi_test_support PkgConfig::HTTPLIB
    LABELS integration TIMEOUT 120)
  target_include_directories(csi_identity_binary_test PRIVATE ${PROJECT_SOURCE_DIR}/test)
  target_compile_definitions(csi_identity_binary_test PRIVATE
    CSI_DRIVER_BINARY="$<TARGET_FILE:vsphere-csi-driver>")
  add_dependencies(csi_identity_binary_test vsphere-csi-driver)
endif()
