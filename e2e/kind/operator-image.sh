#!/usr/bin/env bash
# Build the operator image every kind test runs (make demo, make e2e, make e2e-secured, make
# kind-operator): the image a release publishes, from the same build. Jib (operator/core/pom.xml,
# profile jib) makes it as e2e/kind/publish.sh does for a release, but writes it into the local
# Docker daemon (jib:dockerBuild) instead of pushing it, from where operator-up.sh loads it into kind.
# The only difference is the JRE base: a release's is the public eclipse-temurin:17-jre from its
# registry; here it is the one base-image.sh picks (JRE_IMAGE, else kind-offline/jre:17 built
# offline), which Jib reads from the Docker daemon (docker://) when the daemon has it. Prints the
# image name.
#   OPERATOR_IMAGE (default in lib.sh)  MVN (default mvn)
#   SKIP_MVN=1: reuse $OPERATOR_IMAGE when Docker already has it (no Maven run)
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if [ "${SKIP_MVN:-0}" = 1 ] && docker image inspect "$OPERATOR_IMAGE" >/dev/null 2>&1; then
  log "SKIP_MVN=1: reusing $OPERATOR_IMAGE"
  echo "$OPERATOR_IMAGE"
  exit 0
fi
base=$("$E2E_KIND_DIR/base-image.sh")
# a base only the local daemon has (no registry here) is read through docker://; else Jib pulls it
if docker image inspect "$base" >/dev/null 2>&1; then from=docker://$base; else from=$base; fi
t0=$SECONDS
(cd "$REPO_ROOT/operator" && ${MVN:-mvn} -B -ntp -q -Dstyle.color=never -DskipTests -pl core -am package \
  -Pjib -Djib.goal=dockerBuild -Djib.from.image="$from" -Djib.to.image="$OPERATOR_IMAGE" -Djib.disableUpdateChecks=true) >&2 \
  || die "Jib build of $OPERATOR_IMAGE (operator/core/pom.xml, profile jib) failed"
docker image inspect "$OPERATOR_IMAGE" >/dev/null 2>&1 || die "Jib wrote no image $OPERATOR_IMAGE into the Docker daemon"
log "built $OPERATOR_IMAGE with Jib (the release's build) on $from in $((SECONDS - t0))s"
echo "$OPERATOR_IMAGE"
