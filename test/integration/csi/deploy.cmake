# The CSI driver's deployment files: `kubectl apply --dry-run=client` of the rendered manifest,
# every overlay and the example StorageClasses against the API emulator, and the RBAC of the
# node plugin (reads Nodes, nothing else).
if(TARGET ccm_kube_emulator AND TARGET ccm_csi_core)
  add_ccm_test(NAME csi_deploy_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/deploy_test.cc
    LIBS ccm_kube_emulator ccm_config ccm_csi_core yaml-cpp absl::strings
    LABELS integration TIMEOUT 120)
  target_compile_definitions(csi_deploy_test PRIVATE CCM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
