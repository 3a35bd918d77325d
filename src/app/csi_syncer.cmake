# vsphere-csi-driver's syncer mode (X_CSI_MODE=syncer): options and wiring of the CNS metadata
# syncer. Linked into the driver binary by csi.cmake; no CSI Controller or Node service.
if(TARGET ccm_csi_syncer)
  add_library(ccm_csi_syncer_app
    ${CMAKE_CURRENT_LIST_DIR}/csi_syncer_options.cc ${CMAKE_CURRENT_LIST_DIR}/csi_syncer.cc)
  target_compile_definitions(ccm_csi_syncer_app PRIVATE CCM_VERSION="${PROJECT_VERSION}")
  target_link_libraries(ccm_csi_syncer_app PUBLIC
    ccm_csi_syncer ccm_csi_app ccm_app_lib ccm_config ccm_credentials ccm_cloud_vsphere ccm_kube
    ccm_kube_control_api)
  add_ccm_test(NAME csi_syncer_options_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/csi_syncer_options_test.cc LIBS ccm_csi_syncer_app)
endif()

# The driver binary serves the syncer mode too (csi_main.cc hands X_CSI_MODE=syncer over).
if(TARGET vsphere-csi-driver AND TARGET ccm_csi_syncer_app)
  target_link_libraries(vsphere-csi-driver PRIVATE ccm_csi_syncer_app)
  target_compile_definitions(vsphere-csi-driver PRIVATE CCM_CSI_SYNCER=1)
endif()
