# The CSI Controller service (src/csi/controller) against the simulator fixture: the datastore
# inventory, and the conformance suite over the real gRPC socket.
if(TARGET ccm_csi_datastores AND TARGET ccm_vcsim_testing)
  add_ccm_test(NAME csi_datastore_inventory_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/datastore_inventory_test.cc
    LIBS ccm_csi_datastores ccm_vcsim_testing LABELS integration TIMEOUT 180)
  add_dependencies(csi_datastore_inventory_test vcsim)
endif()
