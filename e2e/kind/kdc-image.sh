#!/usr/bin/env bash
# Build the demo KDC's image (images/kdc: MIT Kerberos from Debian's packages; apt-get reaches
# Debian's mirror during the build) on KDC_BASE_IMAGE when set; else, with ../shared/kind-offline
# (no registry), on the JRE base image base-image.sh builds there (Debian bookworm); else on
# debian:bookworm-slim. Prints the image name.  KDC_IMAGE (default in lib.sh)
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if [ -n "${KDC_BASE_IMAGE:-}" ]; then base=$KDC_BASE_IMAGE
elif offline_kit; then base=$("$E2E_KIND_DIR/base-image.sh")
else base=debian:bookworm-slim; fi
if [ -z "${DOCKER_BUILDKIT:-}" ] && ! docker buildx version >/dev/null 2>&1; then export DOCKER_BUILDKIT=0; fi
t0=$SECONDS
docker build -q --build-arg "BASE_IMAGE=$base" -t "$KDC_IMAGE" "$REPO_ROOT/images/kdc" >&2 || die "docker build of images/kdc failed"
log "built $KDC_IMAGE on $base in $((SECONDS - t0))s"
echo "$KDC_IMAGE"
