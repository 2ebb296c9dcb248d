#!/usr/bin/env bash
# Build the HBase image: the server classpath with Maven on the host (images/hbase/pom.xml ->
# target/lib, target/hbase-webapps), then `docker build` of images/hbase/Dockerfile on the JRE base
# image picked by base-image.sh. Prints the image name.
#   HBASE_IMAGE (default in lib.sh)  MVN (default mvn)  SKIP_MVN=1 to reuse target/
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ctx=$REPO_ROOT/images/hbase
if [ "${SKIP_MVN:-0}" != 1 ] || ! compgen -G "$ctx/target/lib/hbase-server-*.jar" >/dev/null; then
  t0=$SECONDS
  ${MVN:-mvn} -B -ntp -q -Dstyle.color=never -f "$ctx/pom.xml" package >&2 || die "maven build of $ctx/pom.xml failed"
  log "HBase classpath built in $((SECONDS - t0))s ($(ls "$ctx/target/lib" | wc -l) jars)"
fi
base=$("$E2E_KIND_DIR/base-image.sh")
# the docker CLI falls back to the legacy builder without buildx; say so explicitly to keep it quiet
if [ -z "${DOCKER_BUILDKIT:-}" ] && ! docker buildx version >/dev/null 2>&1; then export DOCKER_BUILDKIT=0; fi
t0=$SECONDS
docker build -q --build-arg "BASE_IMAGE=$base" -t "$HBASE_IMAGE" "$ctx" >&2 || die "docker build failed"
log "built $HBASE_IMAGE on $base in $((SECONDS - t0))s ($(docker image inspect -f '{{.Size}}' "$HBASE_IMAGE" | awk '{printf "%d MB", $1/1e6}'))"
echo "$HBASE_IMAGE"
