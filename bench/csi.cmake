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
