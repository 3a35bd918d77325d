# The CNS client (src/vsphere/cns) against the simulator fixture's CNS service.
if(TARGET ccm_vsphere_cns AND TARGET ccm_vcsim_testing)
  add_ccm_test(NAME cns_client_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/cns_client_test.cc
    LIBS ccm_vsphere_cns ccm_vcsim_testing LABELS integration TIMEOUT 180)
  add_dependencies(cns_client_test vcsim)
endif()

# The CNS client against govmomi's own cns/simulator: an independent CNS implementation.
if(TARGET ccm_vsphere_cns AND TARGET ccm_vcsim_testing)
  add_ccm_test(NAME cns_govmomi_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/cns_govmomi_test.cc
    LIBS ccm_vsphere_cns ccm_vcsim_testing LABELS integration TIMEOUT 120)
  add_dependencies(cns_govmomi_test vcsim-govmomi-cns)
endif()
