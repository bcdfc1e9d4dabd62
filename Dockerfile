# fluss-iggy container image: a static binary on a minimal base.
#
#   docker build -t fluss-iggy .            (or: podman build -t fluss-iggy .)
#   docker run --rm -p 4195:4195 -e FLUSS_BOOTSTRAP=fluss:9123 -e IGGY_TCP_ADDRESS=iggy:8090 fluss-iggy
#
# The shipped configs are under /etc/fluss-iggy (config/ in the repository). The default command runs
# /etc/fluss-iggy/fluss_to_iggy.yaml with the bbolt checkpoint store of /etc/fluss-iggy/resources/bbolt.yaml;
# pass other arguments (`run -r /etc/fluss-iggy/resources/redis.yaml /etc/fluss-iggy/sharded.yaml`, `lint ...`,
# `list`, a config of your own mounted into the container, ...) to do something else. Port 4195 serves
# /ready, /ping and /metrics (Prometheus text format when the config uses the `prometheus` metrics exporter).
# Checkpoints of the bbolt store go to $FLUSS_IGGY_STATE_DIR = /var/lib/fluss-iggy (the working directory,
# owned by the image's non-root user): mount a volume there to keep them across container restarts.
#
# Both base images are build arguments, so the image can be built from a mirror or from locally made
# bases (scripts/container-test.sh does that on machines without a registry). The runtime base must
# provide CA certificates and a non-root user with uid/gid 65532, as the distroless "nonroot" images do.

ARG GO_IMAGE=docker.io/library/golang:1.26-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${GO_IMAGE} AS build
ARG GOPROXY
ARG GOSUMDB
ARG VERSION=dev
ARG DATE_BUILT=unknown
ENV CGO_ENABLED=0 \
    GOFLAGS=-buildvcs=false \
    GOTOOLCHAIN=local \
    GOPROXY=${GOPROXY} \
    GOSUMDB=${GOSUMDB}
WORKDIR /src
# Modules first, so that a change to the sources does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -trimpath -ldflags "-s -w -X main.Version=${VERSION} -X main.DateBuilt=${DATE_BUILT}" \
      -o /out/fluss-iggy ./cmd/fluss-iggy \
 && mkdir -p /out/state

FROM ${RUNTIME_IMAGE}
ARG VERSION=dev
LABEL org.opencontainers.image.title="fluss-iggy" \
      org.opencontainers.image.description="Moves data from Apache Fluss into Apache Iggy (a Benthos distribution)" \
      org.opencontainers.image.version="${VERSION}"
# GOGC=200: the json pipelines allocate per row; collecting half as often
# gave 1.2-1.3x the rows/s for about 1.4x the peak memory (bench/results.md,
# "GC settings"). No GOMEMLIMIT by default: set it (docker run -e
# GOMEMLIMIT=...) to about 80 % of the container's memory limit, never near
# the live heap (a limit below it makes the GC run continuously).
ENV PATH=/usr/local/bin:/usr/bin:/bin \
    FLUSS_IGGY_STATE_DIR=/var/lib/fluss-iggy \
    GOGC=200
COPY --from=build /out/fluss-iggy /usr/local/bin/fluss-iggy
COPY config/ /etc/fluss-iggy/
COPY --from=build --chown=65532:65532 /out/state /var/lib/fluss-iggy
USER 65532:65532
WORKDIR /var/lib/fluss-iggy
VOLUME ["/var/lib/fluss-iggy"]
EXPOSE 4195
ENTRYPOINT ["fluss-iggy"]
CMD ["run", "-r", "/etc/fluss-iggy/resources/bbolt.yaml", "/etc/fluss-iggy/fluss_to_iggy.yaml"]
