#!/usr/bin/env bash
# Print the JRE base image for our Dockerfiles (build argument BASE_IMAGE) and for the operator
# image that Jib builds for kind (operator-image.sh):
#   1. $JRE_IMAGE when set;
#   2. else, when ../shared/kind-offline exists next to the repo (no registry on this machine):
#      $JRE_IMAGE_OFFLINE, built by its build-jre-image.sh when missing (about 40 s warm);
#   3. else $JRE_IMAGE_PUBLIC (pulled by docker build). Both defaults are in lib.sh.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if [ -n "$JRE_IMAGE" ]; then echo "$JRE_IMAGE"; exit 0; fi
if offline_kit && [ -x "$KIND_OFFLINE_DIR/build-jre-image.sh" ]; then
  if ! docker image inspect "$JRE_IMAGE_OFFLINE" >/dev/null 2>&1; then
    offline_lock "the JRE image"
    if ! docker image inspect "$JRE_IMAGE_OFFLINE" >/dev/null 2>&1; then
      log "building $JRE_IMAGE_OFFLINE with $KIND_OFFLINE_DIR/build-jre-image.sh"
      KO_IMAGE_JRE=$JRE_IMAGE_OFFLINE "$KIND_OFFLINE_DIR/build-jre-image.sh" >&2 || die "build-jre-image.sh failed"
    fi
    offline_unlock
  fi
  echo "$JRE_IMAGE_OFFLINE"; exit 0
fi
echo "$JRE_IMAGE_PUBLIC"
