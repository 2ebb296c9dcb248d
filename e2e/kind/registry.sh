#!/usr/bin/env bash
# A real OCI registry for this machine (which reaches no public one): the CNCF distribution
# registry ($REGISTRY_VERSION, built from Go modules by tools.sh) in a FROM-scratch image, run as
# the container $REGISTRY_NAME on kind's Docker network, published on 127.0.0.1:$REGISTRY_PORT.
# The host pushes to localhost:$REGISTRY_PORT; kind nodes pull through $REGISTRY_NAME:5000 (the
# mirror publish-check.sh writes into containerd's hosts.toml), the recipe of kind's own docs.
# Usage: e2e/kind/registry.sh up|down      (up prints the host address, e.g. localhost:5000)
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
REGISTRY_NAME=${REGISTRY_NAME:-hbase-cache-registry}
REGISTRY_PORT=${REGISTRY_PORT:-5000}
image=hbase-cache/registry:$REGISTRY_VERSION

up() {
  "$E2E_KIND_DIR/tools.sh" registry >/dev/null
  "$E2E_KIND_DIR/docker.sh"
  if ! docker image inspect "$image" >/dev/null 2>&1; then
    local d; d=$(mktemp -d)
    cp "$BIN_DIR/registry" "$d/registry"
    cat >"$d/config.yml" <<'EOF'
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: /var/lib/registry
  delete:
    enabled: true
http:
  addr: :5000
EOF
    # scratch needs no pull; the binary is static (CGO off)
    printf 'FROM scratch\nCOPY registry /bin/registry\nCOPY config.yml /etc/distribution/config.yml\nENTRYPOINT ["/bin/registry"]\nCMD ["serve", "/etc/distribution/config.yml"]\nEXPOSE 5000\n' >"$d/Dockerfile"
    if [ -z "${DOCKER_BUILDKIT:-}" ] && ! docker buildx version >/dev/null 2>&1; then export DOCKER_BUILDKIT=0; fi
    docker build -q -t "$image" "$d" >/dev/null || die "docker build of $image failed"
    rm -rf "$d"
    log "built $image (FROM scratch, the registry binary from $BIN_DIR)"
  fi
  docker network inspect kind >/dev/null 2>&1 || docker network create kind >/dev/null
  if [ "$(docker inspect -f '{{.State.Running}}' "$REGISTRY_NAME" 2>/dev/null)" != true ]; then
    docker rm -f "$REGISTRY_NAME" >/dev/null 2>&1 || true
    docker run -d --restart=always --name "$REGISTRY_NAME" --network kind \
      -p "127.0.0.1:$REGISTRY_PORT:5000" "$image" >/dev/null || die "docker run $image failed"
  fi
  for _ in $(seq 50); do
    curl -fsS "http://localhost:$REGISTRY_PORT/v2/" >/dev/null 2>&1 && break
    sleep 0.2
  done
  curl -fsS "http://localhost:$REGISTRY_PORT/v2/" >/dev/null || die "registry on localhost:$REGISTRY_PORT does not answer /v2/"
  log "registry $REGISTRY_NAME ($REGISTRY_VERSION) on localhost:$REGISTRY_PORT, $REGISTRY_NAME:5000 on the kind network"
  echo "localhost:$REGISTRY_PORT"
}

down() {
  docker rm -f "$REGISTRY_NAME" >/dev/null 2>&1 || true
  log "registry $REGISTRY_NAME removed"
}

case ${1:-} in
  up) up ;;
  down) down ;;
  *) die "usage: $0 up|down" ;;
esac
