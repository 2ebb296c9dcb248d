#!/usr/bin/env bash
# Publish a release: the operator image, built by Jib from Maven (no Docker), and the operator chart
# as an OCI artifact, both to one registry. The release workflow (.github/workflows/release.yml)
# runs this against ghcr.io; publish-check.sh runs it against a local distribution registry and
# installs the result on kind the way a user would.
#   REGISTRY      registry and namespace, e.g. ghcr.io/acme or localhost:5000 (required)
#   VERSION       image tag and chart version (default: the chart's appVersion)
#   BASE_IMAGE    the JRE base Jib pulls from its registry (default eclipse-temurin:17-jre)
#   IMAGE_REPO    default $REGISTRY/hbase-cache-operator
#   CHART_REPO    default oci://$REGISTRY/charts (the chart is then $CHART_REPO/hbase-cache-operator)
#   PLAIN_HTTP=1  the registry speaks HTTP (a local one): helm --plain-http, Jib allowInsecureRegistries
#   REGISTRY_USER, REGISTRY_PASSWORD   credentials for both pushes (else Docker's config and
#                 helm's registry login are used as they are)
#   LABELS        extra image labels, key=value[,key=value] (the workflow adds the source repository)
# Writes target/publish.env (IMAGE_REF=<repo>@<digest>, CHART_REF, CHART_VERSION, CHART_DIGEST)
# and prints it.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[ -n "${REGISTRY:-}" ] || die "REGISTRY is not set (e.g. REGISTRY=localhost:5000 or ghcr.io/<owner>)"
CHART_DIR=$REPO_ROOT/charts/hbase-cache-operator
VERSION=${VERSION:-$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$CHART_DIR/Chart.yaml")}
BASE_IMAGE=${BASE_IMAGE:-eclipse-temurin:17-jre}
IMAGE_REPO=${IMAGE_REPO:-$REGISTRY/hbase-cache-operator}
CHART_REPO=${CHART_REPO:-oci://$REGISTRY/charts}
out=$REPO_ROOT/target
mkdir -p "$out"
"$E2E_KIND_DIR/tools.sh" helm >/dev/null

# 1. the image: Jib pushes layers (dependency jars, then the operator's classes) straight to the
#    registry; its digest is in operator/core/target/jib-image.digest
jib=(-Pjib -Djib.from.image="$BASE_IMAGE" -Djib.to.image="$IMAGE_REPO:$VERSION" -Djib.disableUpdateChecks=true)
[ "${PLAIN_HTTP:-0}" = 1 ] && jib+=(-Djib.allowInsecureRegistries=true)
if [ -n "${REGISTRY_USER:-}" ]; then
  jib+=(-Djib.to.auth.username="$REGISTRY_USER" -Djib.to.auth.password="$REGISTRY_PASSWORD")
fi
[ -n "${LABELS:-}" ] && jib+=(-Djib.container.labels="$LABELS")
t0=$SECONDS
(cd "$REPO_ROOT/operator" && ${MVN:-mvn} -B -ntp -q -Dstyle.color=never -DskipTests -pl core -am package "${jib[@]}") >&2 \
  || die "Jib build of $IMAGE_REPO:$VERSION failed"
digest=$(cat "$REPO_ROOT/operator/core/target/jib-image.digest")
case $digest in sha256:*) ;; *) die "no image digest from Jib (operator/core/target/jib-image.digest: '$digest')" ;; esac
log "image $IMAGE_REPO:$VERSION ($digest) pushed by Jib on $BASE_IMAGE in $((SECONDS - t0))s"

# 2. the chart: packaged with the image it installs by default, by digest (values image.repository
#    and image.digest: the pod runs exactly the image pushed above), pushed as an OCI artifact
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -r "$CHART_DIR" "$stage/hbase-cache-operator"
sed -i "0,/^  repository: .*/s##  repository: $IMAGE_REPO#" "$stage/hbase-cache-operator/values.yaml"
sed -i "0,/^  digest: .*/s##  digest: \"$digest\"#" "$stage/hbase-cache-operator/values.yaml"
grep -q "^  repository: $IMAGE_REPO\$" "$stage/hbase-cache-operator/values.yaml" || die "could not set image.repository in the packaged values.yaml"
grep -q "^  digest: \"$digest\"\$" "$stage/hbase-cache-operator/values.yaml" || die "could not set image.digest in the packaged values.yaml"
helm package "$stage/hbase-cache-operator" --version "$VERSION" --app-version "$VERSION" -d "$stage" >&2 \
  || die "helm package failed"
if [ -n "${REGISTRY_USER:-}" ]; then
  host=${REGISTRY%%/*}
  plain=(); [ "${PLAIN_HTTP:-0}" = 1 ] && plain=(--plain-http)
  printf '%s' "$REGISTRY_PASSWORD" | helm registry login "$host" -u "$REGISTRY_USER" --password-stdin "${plain[@]}" >&2
fi
push=(push "$stage/hbase-cache-operator-$VERSION.tgz" "$CHART_REPO")
[ "${PLAIN_HTTP:-0}" = 1 ] && push+=(--plain-http)
pushed=$(helm "${push[@]}" 2>&1) || { echo "$pushed" >&2; die "helm push to $CHART_REPO failed"; }
echo "$pushed" >&2
chart_digest=$(echo "$pushed" | sed -n 's/^Digest: *//p')
log "chart $CHART_REPO/hbase-cache-operator $VERSION ($chart_digest) pushed"

cat >"$out/publish.env" <<EOF
IMAGE_REF=$IMAGE_REPO@$digest
IMAGE_TAG=$IMAGE_REPO:$VERSION
CHART_REF=$CHART_REPO/hbase-cache-operator
CHART_VERSION=$VERSION
CHART_DIGEST=$chart_digest
EOF
cat "$out/publish.env"
