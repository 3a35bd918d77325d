# Multi-stage build of vsphere-cloud-controller-manager. Not built in CI: these machines have no
# container engine. Build with: docker build -t vsphere-ccm:0.1.0 .
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/setup scripts/setup
RUN bash scripts/setup && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCCM_WERROR=ON \
 && cmake --build /build --target vsphere-cloud-controller-manager \
 && strip /build/src/app/vsphere-cloud-controller-manager

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libcurl4 libpugixml1v5 \
      libyaml-cpp0.7 libspdlog1.10 libfmt9 libabsl20220623 libssl3 zlib1g \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/src/app/vsphere-cloud-controller-manager /bin/vsphere-cloud-controller-manager
USER 65532:65532
ENTRYPOINT ["/bin/vsphere-cloud-controller-manager"]
