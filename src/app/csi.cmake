# vsphere-csi-driver: the vSphere CSI driver binary (csi.vsphere.vmware.com), included from
# src/app/CMakeLists.txt.

# src/csi/CMakeLists.txt adds proto/ core/ controller/ node/ syncer/; the gRPC server folder
# (src/csi/server) is added here when it has not been added there.
if(NOT TARGET ccm_csi_server AND EXISTS ${PROJECT_SOURCE_DIR}/src/csi/server/CMakeLists.txt)
  add_subdirectory(${PROJECT_SOURCE_DIR}/src/csi/server ${PROJECT_BINARY_DIR}/src/csi/server)
endif()
