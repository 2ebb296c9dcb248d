#!/usr/bin/env bash
# Print the JRE base image for our Dockerfiles (build argument BASE_IMAGE):
#   1. $JRE_IMAGE when set;
#   2. else, when ../shared/kind-offline exists next to the repo (no registry on this machine):
#      kind-offline/jre:17, built by its build-jre-image.sh when missing (about 40 s warm);
#   3. else the public eclipse-temurin:17-jre (pulled by docker build).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if [ -n "${JRE_IMAGE:-}" ]; then echo "$JRE_IMAGE"; exit 0; fi
if offline_kit && [ -x "$KIND_OFFLINE_DIR/build-jre-image.sh" ]; then
  img=${KO_IMAGE_JRE:-kind-offline/jre:17}
  if ! docker image inspect "$img" >/dev/null 2>&1; then
    log "building $img with $KIND_OFFLINE_DIR/build-jre-image.sh"
    "$KIND_OFFLINE_DIR/build-jre-image.sh" >&2 || die "build-jre-image.sh failed"
  fi
  echo "$img"; exit 0
fi
echo "eclipse-temurin:17-jre"
