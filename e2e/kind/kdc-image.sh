#!/usr/bin/env bash
# Build the demo KDC's image (images/kdc: MIT Kerberos from Debian's packages) on the JRE base image
# picked by base-image.sh (Debian bookworm; apt-get reaches Debian's mirror during the build).
# Prints the image name.  KDC_IMAGE (default in lib.sh)
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
base=$("$E2E_KIND_DIR/base-image.sh")
if [ -z "${DOCKER_BUILDKIT:-}" ] && ! docker buildx version >/dev/null 2>&1; then export DOCKER_BUILDKIT=0; fi
t0=$SECONDS
docker build -q --build-arg "BASE_IMAGE=$base" -t "$KDC_IMAGE" "$REPO_ROOT/images/kdc" >&2 || die "docker build of images/kdc failed"
log "built $KDC_IMAGE on $base in $((SECONDS - t0))s"
echo "$KDC_IMAGE"
