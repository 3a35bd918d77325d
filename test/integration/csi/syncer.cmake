# The CNS metadata syncer (src/csi/syncer) end to end: the API emulator's PVs, PVCs and Pods,
# the simulator's CNS, faults on both sides, a FakeClock for the full-sync period and backoff.
if(TARGET ccm_csi_syncer AND TARGET ccm_vcsim_testing AND TARGET ccm_kube_emulator)
  add_ccm_test(NAME csi_syncer_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/syncer_env.cc ${CMAKE_CURRENT_LIST_DIR}/syncer_test.cc
            ${CMAKE_CURRENT_LIST_DIR}/syncer_faults_test.cc ${CMAKE_CURRENT_LIST_DIR}/syncer_intree_test.cc
    LIBS ccm_csi_syncer ccm_vcsim_testing ccm_kube_emulator ccm_kube_control_api yaml-cpp
    LABELS integration TIMEOUT 300)
  target_compile_definitions(csi_syncer_test PRIVATE CCM_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_dependencies(csi_syncer_test vcsim)
endif()


# The TriggerCsiFullSync controller against the API emulator (no vCenter: the sync is a fake).
if(TARGET ccm_csi_syncer AND TARGET ccm_kube_emulator)
  add_ccm_test(NAME csi_trigger_full_sync_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/trigger_full_sync_test.cc
    LIBS ccm_csi_syncer ccm_kube_emulator ccm_kube_control_api LABELS integration TIMEOUT 60)
  target_include_directories(csi_trigger_full_sync_test PRIVATE ${PROJECT_SOURCE_DIR}/test)
endif()
