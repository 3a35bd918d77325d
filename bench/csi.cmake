# The CSI controller benchmark (prints, asserts nothing; not a ctest): 1,000 volumes through the
# real socket against the simulator's CNS.
if(TARGET ccm_csi_controller_testing)
  add_executable(csi_controller_bench csi_controller_bench.cc)
  target_include_directories(csi_controller_bench PRIVATE ${PROJECT_SOURCE_DIR}/test/integration/csi)
  target_link_libraries(csi_controller_bench PRIVATE ccm_csi_controller_testing)
  add_dependencies(csi_controller_bench vcsim)
endif()

# Placement (issue 19): 1,000 hosts and 100 datastores, placement time and vCenter requests per
# CreateVolume with a storage policy.
if(TARGET ccm_csi_controller_testing)
  add_executable(csi_placement_bench csi_placement_bench.cc)
  target_include_directories(csi_placement_bench PRIVATE ${PROJECT_SOURCE_DIR}/test/integration/csi)
  target_link_libraries(csi_placement_bench PRIVATE ccm_csi_controller_testing)
  add_dependencies(csi_placement_bench vcsim)
endif()

# Scale (issue 25): the real binary with 1,000 / 10,000 volumes: ListVolumes requests, time and
# memory; the syncer's start with everything in sync.
if(TARGET vsphere-csi-driver AND TARGET ccm_csi_syncer AND TARGET ccm_vcsim_testing
   AND TARGET ccm_kube_emulator)
  add_executable(csi_scale_bench csi_scale_bench.cc
    ${PROJECT_SOURCE_DIR}/test/integration/csi/syncer_env.cc
    ${PROJECT_SOURCE_DIR}/test/integration/child_process.cc)
  target_include_directories(csi_scale_bench PRIVATE ${PROJECT_SOURCE_DIR}/test)
  target_link_libraries(csi_scale_bench PRIVATE ccm_csi_syncer ccm_vcsim_testing ccm_kube_emulator
    ccm_kube_control_api
    ccm_csi_test_support ccm_test_support ccm_csi_proto yaml-cpp PkgConfig::HTTPLIB)
  target_compile_definitions(csi_scale_bench PRIVATE
    CCM_SOURCE_DIR="${PROJECT_SOURCE_DIR}" CSI_DRIVER_BINARY="$<TARGET_FILE:vsphere-csi-driver>")
  add_dependencies(csi_scale_bench vsphere-csi-driver vcsim)
endif()

# CSINodeTopology (issue 44): N node VMs answered by the syncer's controller; vCenter requests.
if(TARGET ccm_csi_datastores AND TARGET ccm_csi_syncer AND TARGET ccm_vcsim_testing
   AND TARGET ccm_kube_emulator)
  add_executable(csi_node_topology_bench csi_node_topology_bench.cc)
  target_include_directories(csi_node_topology_bench PRIVATE ${PROJECT_SOURCE_DIR}/test)
  target_link_libraries(csi_node_topology_bench PRIVATE ccm_csi_datastores ccm_csi_syncer
    ccm_vcsim_testing ccm_kube_emulator ccm_test_support)
  add_dependencies(csi_node_topology_bench vcsim)
endif()

# CSI at scale with the real sidecars and kube-controller-manager (issue 55): needs the peers
# (../shared/peers) at run time, says so and exits 0 without them.
if(TARGET ccm_peers_csi_testing)
  add_executable(csi_peers_scale_bench csi_peers_scale_bench.cc)
  target_link_libraries(csi_peers_scale_bench PRIVATE ccm_peers_csi_testing)
  target_compile_definitions(csi_peers_scale_bench PRIVATE
    CCM_SOURCE_DIR="${PROJECT_SOURCE_DIR}" CCM_BINARY_DIR="${PROJECT_BINARY_DIR}")
  add_dependencies(csi_peers_scale_bench vsphere-csi-driver vcsim)
endif()
