# vsphere-csi-driver: the vSphere CSI driver binary (csi.vsphere.vmware.com), included from
# src/app/CMakeLists.txt.

# Options, wiring and main of the driver. Links only what the driver uses: no CCM controllers;
# the Kubernetes client only for the node plugin's own Node object (csi_node.cc).
if(TARGET ccm_csi_server AND TARGET ccm_csi_node AND TARGET ccm_csi_controller)
  add_library(ccm_csi_app csi_options.cc csi_driver.cc csi_node.cc csi_cluster_id.cc)
  target_compile_definitions(ccm_csi_app PUBLIC CCM_VERSION="${PROJECT_VERSION}")
  target_link_libraries(ccm_csi_app PUBLIC ccm_csi_server ccm_csi_core ccm_csi_node
    ccm_csi_controller ccm_config ccm_app_lib ccm_vcenter_metrics absl::random_random)

  add_executable(vsphere-csi-driver csi_main.cc)
  target_link_libraries(vsphere-csi-driver PRIVATE ccm_csi_app)

  add_ccm_test(NAME csi_options_test SOURCES csi_options_test.cc LIBS ccm_csi_app)
endif()
