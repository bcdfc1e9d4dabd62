#!/usr/bin/env bash
# Builds the fluss-iggy container image from the repository's Dockerfile with podman and runs it, on a
# machine with no container registry and no Docker engine: the Dockerfile's base images are made
# locally and passed as build arguments.
#
#   scripts/container-test.sh setup          install podman and runc when missing; write containers.conf
#   scripts/container-test.sh base-images    import the builder and runtime base images (when outdated)
#   scripts/container-test.sh build          setup + base-images + podman build -> $IMAGE
#   scripts/container-test.sh run ARGS...    run $IMAGE with ARGS (host network, runc, cgroupfs)
#   scripts/container-test.sh podman ARGS... any podman command, with the settings this machine needs
#   scripts/container-test.sh check          build, then `--version` and `lint` on the shipped configs
#   scripts/container-test.sh clean          remove the images this script made
#
# The builder base is the host's Go toolchain (go env GOROOT), a /bin/sh, and the host's module cache
# as a file GOPROXY, so the build needs no network. The runtime base is a minimal root filesystem with
# the host's CA certificates and an /etc/passwd holding the non-root user 65532 ("nonroot"), like the
# distroless image the Dockerfile defaults to. Go's build cache for the builder persists in
# $STATE_DIR/gocache, so only the first build compiles everything.
#
# Environment: IMAGE (default localhost/fluss-iggy:test), STATE_DIR (default /var/tmp/fluss-iggy-container).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
IMAGE=${IMAGE:-localhost/fluss-iggy:test}
STATE_DIR=${STATE_DIR:-/var/tmp/fluss-iggy-container}
BUILDER_IMAGE=localhost/fluss-iggy-builder
RUNTIME_IMAGE=localhost/fluss-iggy-runtime:latest

log() { echo "[container-test] $*" >&2; }
die() { echo "[container-test] error: $*" >&2; exit 1; }

export CONTAINERS_CONF="$STATE_DIR/containers.conf"
pm() { podman --runtime runc --cgroup-manager=cgroupfs "$@"; }

cmd_setup() {
  if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
    [ "$(id -u)" = 0 ] || die "podman and runc are missing; install them (apt-get install podman runc) as root"
    log "installing podman and runc"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends podman runc >/dev/null
  fi
  mkdir -p "$STATE_DIR/gocache"
  # The sandbox refuses setrlimit, so containers get no default ulimits.
  printf '[containers]\ndefault_ulimits = []\n' >"$CONTAINERS_CONF"
}

# image_label IMAGE KEY prints a label of a local image, or nothing.
image_label() {
  pm image inspect --format "{{ index .Labels \"$2\" }}" "$1" 2>/dev/null || true
}

cmd_base_images() {
  local goroot gover modcache fp tag
  goroot=$(go env GOROOT)
  gover=$(go env GOVERSION)
  modcache=$(go env GOMODCACHE)
  [ -d "$modcache/cache/download" ] || die "no module cache at $modcache/cache/download (run go mod download first)"

  # --- builder: Go toolchain + module cache as a file proxy + /bin/sh ---------------------------
  # Rebuilt when the toolchain or go.sum changes (new modules must reach the proxy copy).
  fp="builder-2-$gover-$(sha256sum "$repo/go.sum" | cut -c1-16)"
  tag="$BUILDER_IMAGE:$gover"
  if [ "$(image_label "$tag" fluss-iggy.fingerprint)" != "$fp" ]; then
    log "making $tag from $goroot and $modcache/cache/download"
    local skel
    skel=$(mktemp -d)
    mkdir -p "$skel/bin" "$skel/tmp" "$skel/root" "$skel/go" "$skel/etc" "$skel/src"
    chmod 1777 "$skel/tmp"
    # A shell and the basic tools a Dockerfile's RUN steps use, with their shared libraries at the
    # paths the loader expects.
    local tool
    for tool in sh mkdir cp rm ls cat env chmod; do
      cp -L "$(command -v "$tool")" "$skel/bin/$tool"
      ldd "$(command -v "$tool")" | awk '/=>/ {print $3} !/=>/ && $1 ~ /^\// {print $1}'
    done | sort -u | while read -r lib; do
      mkdir -p "$skel$(dirname "$lib")"
      cp -L "$lib" "$skel$lib"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\n' >"$skel/etc/passwd"
    printf 'root:x:0:\n' >"$skel/etc/group"
    tar -C "$skel" -c . \
        -C "$(dirname "$goroot")" --transform "s,^$(basename "$goroot")\(/\|\$\),usr/local/go\1," "$(basename "$goroot")" \
        -C "$modcache/cache" --transform 's,^download\(/\|$\),goproxy\1,' download \
      | pm import -q \
          --change "ENV PATH=/usr/local/go/bin:/go/bin:/bin" \
          --change "ENV GOROOT=/usr/local/go" \
          --change "ENV GOPATH=/go" \
          --change "ENV HOME=/root" \
          --change "ENV GOTOOLCHAIN=local" \
          --change "LABEL fluss-iggy.fingerprint=$fp" \
          - "$tag" >/dev/null
    rm -rf "$skel"
  fi

  # --- runtime: CA certificates, passwd/group with nonroot (65532), /tmp --------------------------
  fp="runtime-1-$(sha256sum /etc/ssl/certs/ca-certificates.crt | cut -c1-16)"
  if [ "$(image_label "$RUNTIME_IMAGE" fluss-iggy.fingerprint)" != "$fp" ]; then
    log "making $RUNTIME_IMAGE"
    local rt
    rt=$(mktemp -d)
    mkdir -p "$rt/etc/ssl/certs" "$rt/tmp" "$rt/home/nonroot"
    chmod 1777 "$rt/tmp"
    cp -L /etc/ssl/certs/ca-certificates.crt "$rt/etc/ssl/certs/ca-certificates.crt"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$rt/etc/passwd"
    printf 'root:x:0:\nnonroot:x:65532:\n' >"$rt/etc/group"
    tar -C "$rt" --owner=0 --group=0 -c . | pm import -q \
        --change "ENV PATH=/usr/local/bin:/usr/bin:/bin" \
        --change "ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt" \
        --change "LABEL fluss-iggy.fingerprint=$fp" \
        - "$RUNTIME_IMAGE" >/dev/null
    rm -rf "$rt"
  fi
}

cmd_build() {
  cmd_setup
  cmd_base_images
  local gover
  gover=$(go env GOVERSION)
  log "building $IMAGE"
  pm build --network=host \
    --volume "$STATE_DIR/gocache:/root/.cache/go-build" \
    --build-arg GO_IMAGE="$BUILDER_IMAGE:$gover" \
    --build-arg RUNTIME_IMAGE="$RUNTIME_IMAGE" \
    --build-arg GOPROXY=file:///goproxy \
    --build-arg GOSUMDB=off \
    --build-arg VERSION="${VERSION:-container-test}" \
    --build-arg DATE_BUILT="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    -t "$IMAGE" -f "$repo/Dockerfile" "$repo"
  # Drop the untagged images of earlier builds (the Go build cache is kept in $STATE_DIR instead).
  pm image prune -f >/dev/null
}

cmd_run() {
  pm run --rm --network=host "$IMAGE" "$@"
}

# resources_of FILE prints the resources file a shipped config names in its usage comment
# ("fluss-iggy run -r config/resources/X.yaml ..."), as a path inside the image, or nothing.
resources_of() {
  grep -o -- '-r config/resources/[^ ]*\.yaml' "$1" | head -n 1 | sed 's,^-r config/,/etc/fluss-iggy/,' || true
}

cmd_check() {
  cmd_build
  log "fluss-iggy --version"
  cmd_run --version
  local f res n=0
  if [ -d "$repo/config/resources" ]; then
    log "fluss-iggy lint /etc/fluss-iggy/resources/*.yaml"
    cmd_run lint '/etc/fluss-iggy/resources/*.yaml'
  fi
  for f in "$repo"/config/*.yaml; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    res=$(resources_of "$f")
    log "fluss-iggy lint ${res:+-r $res }/etc/fluss-iggy/$(basename "$f")"
    cmd_run lint ${res:+-r "$res"} "/etc/fluss-iggy/$(basename "$f")"
    if grep -q '^tests:' "$f"; then
      log "fluss-iggy test ${res:+-r $res }/etc/fluss-iggy/$(basename "$f")"
      cmd_run test ${res:+-r "$res"} "/etc/fluss-iggy/$(basename "$f")"
    fi
  done
  [ "$n" -gt 0 ] || die "config/ holds no pipeline configs to lint"
  log "ok"
}

cmd_clean() {
  pm rmi -f "$IMAGE" "$RUNTIME_IMAGE" "$BUILDER_IMAGE:$(go env GOVERSION)" >/dev/null 2>&1 || true
}

case "${1:-}" in
  setup) cmd_setup ;;
  base-images) cmd_setup; cmd_base_images ;;
  build) cmd_build ;;
  run) shift; cmd_run "$@" ;;
  podman) shift; pm "$@" ;;
  check) cmd_check ;;
  clean) cmd_clean ;;
  *) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
