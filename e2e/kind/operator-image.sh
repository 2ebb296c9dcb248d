#!/usr/bin/env bash
# Build the operator image: the shaded jar with Maven on the host (operator/, -DskipTests), then
# `docker build -f operator/Dockerfile operator/target` on the JRE base image picked by
# base-image.sh. Prints the image name.
#   OPERATOR_IMAGE (default in lib.sh)  MVN (default mvn)  SKIP_MVN=1 to reuse the jar
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
jar=$REPO_ROOT/operator/target/hbase-cache-operator.jar
if [ "${SKIP_MVN:-0}" != 1 ] || [ ! -f "$jar" ]; then
  t0=$SECONDS
  (cd "$REPO_ROOT/operator" && ${MVN:-mvn} -B -ntp -q -Dstyle.color=never -DskipTests package) >&2 || die "maven build of operator/ failed"
  log "operator jar built in $((SECONDS - t0))s"
fi
[ -f "$jar" ] || die "$jar not found"
base=$("$E2E_KIND_DIR/base-image.sh")
if [ -z "${DOCKER_BUILDKIT:-}" ] && ! docker buildx version >/dev/null 2>&1; then export DOCKER_BUILDKIT=0; fi
t0=$SECONDS
docker build -q --build-arg "BASE_IMAGE=$base" -f "$REPO_ROOT/operator/Dockerfile" -t "$OPERATOR_IMAGE" \
  "$REPO_ROOT/operator/target" >&2 || die "docker build failed"
log "built $OPERATOR_IMAGE on $base in $((SECONDS - t0))s"
echo "$OPERATOR_IMAGE"
