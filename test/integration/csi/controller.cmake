# The CSI Controller service (src/csi/controller) against the simulator fixture: the datastore
# inventory, and the conformance suite over the real gRPC socket.
if(TARGET ccm_csi_datastores AND TARGET ccm_vcsim_testing)
  add_ccm_test(NAME csi_datastore_inventory_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/datastore_inventory_test.cc
    LIBS ccm_csi_datastores ccm_vcsim_testing LABELS integration TIMEOUT 180)
  add_dependencies(csi_datastore_inventory_test vcsim)
endif()

if(TARGET ccm_csi_controller AND TARGET ccm_vcsim_testing)
  add_library(ccm_csi_controller_testing
    ${CMAKE_CURRENT_LIST_DIR}/controller_env.cc)
  target_link_libraries(ccm_csi_controller_testing PUBLIC ccm_csi_controller ccm_vcsim_testing
    ccm_kube_emulator ccm_test_support ccm_csi_test_support ccm_vcenter_metrics)
  foreach(t controller_conformance controller_multi_vc controller_publish controller_zones
      controller_placement controller_old_vcenter operation_store controller_file)
    add_ccm_test(NAME csi_${t}_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/${t}_test.cc
      LIBS ccm_csi_controller_testing LABELS integration TIMEOUT 300)
    add_dependencies(csi_${t}_test vcsim)
  endforeach()
endif()

# CSINodeTopology end to end: node side, syncer controller, VM stream and host tags (issue 44).
if(TARGET ccm_csi_datastores AND TARGET ccm_csi_syncer AND TARGET ccm_csi_node
   AND TARGET ccm_vcsim_testing AND TARGET ccm_kube_emulator)
  add_ccm_test(NAME csi_node_topology_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/node_topology_test.cc
    LIBS ccm_csi_datastores ccm_csi_syncer ccm_csi_node ccm_vcsim_testing ccm_kube_emulator
      ccm_kube_control_api
    LABELS integration TIMEOUT 120)
  target_include_directories(csi_node_topology_test PRIVATE ${PROJECT_SOURCE_DIR}/test)
  add_dependencies(csi_node_topology_test vcsim)
endif()
