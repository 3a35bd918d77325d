# Controller machinery of src/kube (work queue, rate limiters, leader election, events), owned by
# the kube-control part. Pure: depends on ccm_common only, so it builds without the HTTP client.
add_library(ccm_kube_control
  ${CMAKE_CURRENT_LIST_DIR}/event_recorder.cc
  ${CMAKE_CURRENT_LIST_DIR}/leader_election.cc
  ${CMAKE_CURRENT_LIST_DIR}/rate_limiter.cc
  ${CMAKE_CURRENT_LIST_DIR}/work_queue.cc)
target_link_libraries(ccm_kube_control PUBLIC ccm_common
  absl::flat_hash_map absl::flat_hash_set absl::str_format absl::strings absl::synchronization absl::time absl::status absl::statusor)

add_ccm_test(NAME kube_control_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/event_recorder_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/leader_election_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/rate_limiter_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/work_queue_test.cc
  LIBS ccm_kube_control
  TIMEOUT 120)

# Adapters of LeaseLock and EventSink on the API client (needs ccm_kube, defined after this file).
add_library(ccm_kube_control_api
  ${CMAKE_CURRENT_LIST_DIR}/kube_event_sink.cc
  ${CMAKE_CURRENT_LIST_DIR}/kube_lease_lock.cc)
target_link_libraries(ccm_kube_control_api PUBLIC ccm_kube ccm_kube_control)

add_ccm_test(NAME kube_control_api_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kube_adapters_test.cc
  LIBS ccm_kube_control_api
  TIMEOUT 120)
