# Multi-stage build of both binaries. Not built in CI: these machines have no container engine.
#   docker build -t vsphere-ccm:0.1.0 .                              (the default target)
#   docker build --target csi -t vsphere-csi-driver:0.1.0 .         (the image the CSI manifests name)
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/setup scripts/setup
RUN bash scripts/setup && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCCM_WERROR=ON \
 && cmake --build /build --target vsphere-cloud-controller-manager vsphere-csi-driver \
 && strip /build/src/app/ccm/vsphere-cloud-controller-manager /build/src/app/csi/vsphere-csi-driver

# vsphere-csi-driver: controller, syncer and node plugin. The node plugin runs privileged as root
# (the DaemonSet says so) and needs the filesystem tools; the controller and syncer containers of
# the Deployment run it as user 65532.
FROM debian:bookworm-slim AS csi
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libcurl4 libpugixml1v5 libexpat1 \
      libyaml-cpp0.7 libspdlog1.10 libfmt9 libabsl20220623 libssl3 zlib1g libbrotli1 libsimdjson14 \
      libgrpc++1.51 libprotobuf32 e2fsprogs xfsprogs util-linux mount \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/src/app/csi/vsphere-csi-driver /bin/vsphere-csi-driver
ENTRYPOINT ["/bin/vsphere-csi-driver"]

FROM debian:bookworm-slim AS ccm
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libcurl4 libpugixml1v5 libexpat1 \
      libyaml-cpp0.7 libspdlog1.10 libfmt9 libabsl20220623 libssl3 zlib1g libbrotli1 libsimdjson14 \
      libtcmalloc-minimal4 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/src/app/ccm/vsphere-cloud-controller-manager /bin/vsphere-cloud-controller-manager
USER 65532:65532
ENTRYPOINT ["/bin/vsphere-cloud-controller-manager"]
