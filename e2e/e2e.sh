#!/usr/bin/env bash
# make e2e: the end-to-end suite on a real kind cluster with real RegionServer pods.
#
#   1. kind cluster $KIND_CLUSTER (default hbase-cache-e2e, see kind/lib.sh; an existing one is
#      deleted first, unless REUSE_CLUSTER=1: then its hbase/operator installs are removed and reinstalled)
#   2. images: HBase and operator (SKIP_MVN=1 reuses the Maven outputs; SKIP_IMAGES=1 builds
#      nothing and uses what docker has)
#   3. charts/hbase into namespace $HBASE_NAMESPACE (kind/hbase-up.sh loads the image), all pods Ready;
#   4. meanwhile, the workload client (e2e/workload), the operator API jar and the suite compiled
#   5. mvn -f e2e/pom.xml test: the scenario classes on one cluster, in one JVM, in the order of
#      KindSuite.SCENARIOS (e2e/src/test/java/dev/hbase/cache/e2e/: KindSuite sets up the fixture once;
#      SetupScenarios installs the operator with kind/operator-up.sh, the same install as make demo; then
#      RollScenarios, DrainScenarios, DisruptionScenarios, WarmStopScenarios, PolicyRefusalScenarios,
#      PolicyLifecycleScenarios, ObservabilityScenarios, NamespaceInstallScenario, AdviceScenarios;
#      ScenarioOrderTest, ScenarioIsolationTest and the other checks without a cluster first). Each class
#      checks what it needs at its start and establishes what does not hold (kind/README.md, "The
#      suite"); a failed step skips the rest of its own class only, and the report's table says each
#      class's result. It reads the names and images from kind/lib.sh with this script's environment
#   6. the cluster is deleted at the end unless KEEP_CLUSTER=1
#
# The numbers the suite saw are in e2e/target/e2e-report.md (with this script's phase times);
# the reader's log, the operator's log and the policy's events are beside it.
# Measured here (2 vCPU / 24 GiB VM): kind cluster 20-55 s (or ~80 s to reset a reused one),
# images 30 s-2 min build + load, charts/hbase to Ready 40-100 s (the workload, the API jar and
# the suite compiled meanwhile, ~30 s), the suite ~21-25 min (about a dozen rolls of 3 RegionServers
# at 40-70 s each, and the steps between them; its report's last table gives each step's time),
# cold Maven caches and the offline node image excepted. Knobs: KIND_CLUSTER, KEEP_CLUSTER=1, REUSE_CLUSTER=1, SKIP_MVN=1, SKIP_IMAGES=1,
# E2E_TAGS (a JUnit tag expression: the classes to run, e.g. E2E_TAGS=stops for WarmStopScenarios
# alone, which then makes the operator, policy, table and reader itself; 'setup|fault'; each class's
# own tag and the groups are in kind/README.md), E2E_MVN_ARGS (e.g. -Dtest=SetupScenarios,RollScenarios,
# or -Dgroups=... as E2E_TAGS), E2E_BREAK_PRECONDITION=CLASS (that scenario class gets a precondition
# that cannot be established: it runs no step, the next class runs, the run is red; to see the
# isolation on a cluster, never in .ci/run).
#
# .ci/run runs this beside make test and make test-hbase (phases 1-3 niced, the suite at normal
# priority as soon as they are done), with these knobs:
#   E2E_SUITE_GATE=FILE  after phase 3, write FILE.prepared (the seconds phases 1-3 took) and wait
#                        until FILE exists: "go" runs the suite, anything else ends the run there
#                        (failed, the cluster deleted), and so does the end of the process
#                        E2E_GATE_PID when set (the caller). At "go" this script goes back to
#                        normal CPU and I/O priority (the caller started it niced), so that what
#                        the suite starts does too. The report's phases table shows the wait.
#   E2E_BESIDE_DIR=DIR   a file per part of .ci/run running now: the report's step table names
#                        those seen during each step (e2e Beside)
# make e2e-secured sets E2E_SECURED=1: the KDC image is built too, e2e/kind/kdc-up.sh makes a
# Kerberos realm (KDC pod, keytabs as Secrets, krb5.conf) before charts/hbase is installed with
# security.kerberos.enabled, and the suite acts as the keytabs' principals (Settings.secured).
#   E2E_CPU_SHARES=N     the kind node at that CPU weight (docker update --cpu-shares, against the
#                        other containers; Docker's default 1024) until the suite starts, which then
#                        runs at 1024.
E2E_SUITE=1   # lib.sh: the suite's own cluster name by default
. "$(dirname "${BASH_SOURCE[0]}")/kind/lib.sh"
NS=$HBASE_NAMESPACE
OP_NS=$OPERATOR_NAMESPACE
CTX=$KUBE_CONTEXT
TARGET=$REPO_ROOT/e2e/target
mkdir -p "$TARGET"
phases=()
t_all=$SECONDS
phase() { # phase NAME COMMAND...
  local name=$1 t0=$SECONDS; shift
  log "== $name"
  "$@"
  phases+=("| $name | $((SECONDS - t0)) s |")
  log "== $name: $((SECONDS - t0))s"
}
write_phases() {
  {
    echo
    echo "## make e2e phases (e2e/e2e.sh, cluster $KIND_CLUSTER)"
    echo
    echo "| phase | wall time |"
    echo "|---|---|"
    printf '%s\n' "${phases[@]}"
    echo "| total | $((SECONDS - t_all)) s |"
    # .ci/run says when other work shared the machine's cores with this run (the other parts, or
    # its jvm lane): the figures above (seconds per pod, p99s) were measured under that load
    # (an if, not `[ ] &&`: as the group's last command a false test would make it fail, and
    # under set -e the EXIT trap would exit 1 after a green suite)
    if [ "${E2E_SECURED:-0}" = 1 ]; then
      echo
      echo "HBase was Kerberos-secured (make e2e-secured): realm $KERBEROS_REALM, Kerberos RPC (charts/hbase's security.kerberos.rpcProtection, privacy unless HELM_ARGS said otherwise), ZooKeeper over SASL, HBase ACLs."
    fi
    if [ -n "${CI_E2E_BESIDE:-}" ]; then
      echo
      echo "Ran beside: $CI_E2E_BESIDE."
    fi
  } >>"$TARGET/e2e-report.md"
}
cleanup() {
  local rc=$?
  trap '' TERM INT HUP # a second signal does not cut the cluster's deletion short
  if [ "${KEEP_CLUSTER:-0}" = 1 ]; then
    log "KEEP_CLUSTER=1: cluster $KIND_CLUSTER left running (kubectl --context $CTX; delete: make kind-down KIND_CLUSTER=$KIND_CLUSTER)"
  else
    local t0=$SECONDS
    "$E2E_KIND_DIR/cluster-down.sh" || true
    phases+=("| delete cluster | $((SECONDS - t0)) s |")
  fi
  if [ -f "$TARGET/jmx-samples.csv" ]; then
    # the run as a picture (reads/s, p99, the cluster's reads from cache, each restart): a report
    # artifact, not a check
    { make -C "$REPO_ROOT" --no-print-directory plot-venv >/dev/null 2>&1 \
      && "$BIN_DIR/bench-venv/bin/python" "$REPO_ROOT/e2e/roll-plot.py" "$TARGET" "$TARGET/roll.png" >&2 \
      && [ -f "$TARGET/e2e-report.md" ] && printf '\n![the run, per second](roll.png)\n' >>"$TARGET/e2e-report.md"; } \
      || log "no picture of the run (matplotlib from PyPI into $BIN_DIR/bench-venv failed)"
  fi
  [ -f "$TARGET/e2e-report.md" ] && write_phases
  [ -f "$TARGET/e2e-report.md" ] && log "report: $TARGET/e2e-report.md"
  if [ $rc = 0 ]; then log "make e2e PASSED in $((SECONDS - t_all))s"; else log "make e2e FAILED (rc=$rc) after $((SECONDS - t_all))s"; fi
  exit $rc
}

reset_cluster() {
  # REUSE_CLUSTER=1: back to a cluster without the operator and with a fresh HBase
  local k=(kubectl --context "$CTX")
  if "${k[@]}" get crd blockcachepolicies.cache.hbase.dev >/dev/null 2>&1; then
    "${k[@]}" delete bcp --all -A --timeout=120s >&2 || true
  fi
  helm --kube-context "$CTX" uninstall "$OPERATOR_RELEASE" -n "$OP_NS" --wait --timeout 3m >&2 2>/dev/null || true
  helm --kube-context "$CTX" uninstall "$HBASE_RELEASE" -n "$NS" --wait --timeout 5m >&2 2>/dev/null || true
  "${k[@]}" delete namespace "$NS" --timeout=300s >&2 2>/dev/null || true
  # the suite's root-owned cache volumes (e2e RootOwnedVolumes) are made when their StorageClass is
  # missing: released by the namespace's claims, they would bind no new one (seen: every cache PVC
  # Pending on a reused cluster)
  local pvs
  pvs=$("${k[@]}" get pv -o jsonpath='{range .items[?(@.spec.storageClassName=="e2e-root-owned")]}{.metadata.name}{" "}{end}' 2>/dev/null || true)
  [ -z "$pvs" ] || "${k[@]}" delete pv $pvs --timeout=60s >&2 || true
  "${k[@]}" delete storageclass e2e-root-owned --ignore-not-found >&2 || true
}

cluster() {
  # kind first: without it (a new checkout's ./bin) the check below sees no cluster and a leftover
  # one would be reused as it is (seen: a kept cluster's policy made step 2 fail with 409)
  have kind || "$E2E_KIND_DIR/tools.sh" kind >/dev/null
  if kind get clusters 2>/dev/null | grep -qx "$KIND_CLUSTER"; then
    if [ "${REUSE_CLUSTER:-0}" = 1 ]; then
      log "reusing cluster $KIND_CLUSTER: removing the previous run's installs"
      reset_cluster
    else
      log "cluster $KIND_CLUSTER exists: deleting it for a clean run (REUSE_CLUSTER=1 to keep it)"
      "$E2E_KIND_DIR/cluster-down.sh"
    fi
  fi
  "$E2E_KIND_DIR/cluster-up.sh" >/dev/null
  [ -z "${E2E_CPU_SHARES:-}" ] || cpu_shares "$E2E_CPU_SHARES"
}

cpu_shares() { # cpu_shares N: the kind node's CPU weight (the pods' cgroups are inside its)
  docker update --cpu-shares "$1" $(kind get nodes --name "$KIND_CLUSTER") >/dev/null \
    || die "docker update --cpu-shares $1 of $KIND_CLUSTER's node failed"
  log "kind node of $KIND_CLUSTER at CPU weight $1 (Docker's default: 1024)"
}

await_gate() {
  # E2E_SUITE_GATE: phases 1-3 are done; the caller says when the suite may run (.ci/run opens it
  # before this starts: the gate then only times phases 1-3 and puts the suite back at normal
  # priority)
  # (written whole: the caller may read it at any moment)
  echo "$((SECONDS - t_all))" >"$E2E_SUITE_GATE.prepared.tmp" && mv -f "$E2E_SUITE_GATE.prepared.tmp" "$E2E_SUITE_GATE.prepared"
  log "cluster, images and charts/hbase ready in $((SECONDS - t_all))s; waiting for $E2E_SUITE_GATE"
  until [ -f "$E2E_SUITE_GATE" ]; do
    sleep 1
    [ -z "${E2E_GATE_PID:-}" ] || kill -0 "$E2E_GATE_PID" 2>/dev/null \
      || die "not running the suite: process $E2E_GATE_PID, which was to open $E2E_SUITE_GATE, is gone"
  done
  local word; word=$(cat "$E2E_SUITE_GATE")
  [ "$word" = go ] || die "not running the suite: $E2E_SUITE_GATE says '$word'"
  # the suite at normal priority (root may lower its nice)
  renice -n 0 -p $$ >/dev/null 2>&1 || log "could not renice to 0 (the suite runs at nice $(nice))"
  ionice -c2 -n4 -p $$ 2>/dev/null || true
}

images() {
  "$E2E_KIND_DIR/docker.sh"
  if [ "${SKIP_IMAGES:-0}" = 1 ]; then
    log "SKIP_IMAGES=1: using the images docker has ($HBASE_IMAGE, $OPERATOR_IMAGE)"
  else
    "$E2E_KIND_DIR/hbase-image.sh" >/dev/null
    "$E2E_KIND_DIR/operator-image.sh" >/dev/null
    [ "${E2E_SECURED:-0}" != 1 ] || "$E2E_KIND_DIR/kdc-image.sh" >/dev/null
  fi
  # loaded into kind by hbase-up.sh and (from the suite) operator-up.sh
}

client_side() {
  # chained with &&: called on the left of ||, set -e does not stop it at a failed command
  "$REPO_ROOT/e2e/workload/build.sh" >/dev/null &&
    # the tests read BlockCachePolicy typed: the API jar from this checkout
    ${MVN:-mvn} -B -ntp -q -f "$REPO_ROOT/operator/pom.xml" -pl api -am -DskipTests install >&2 &&
    # the suite compiled (and its formatting checked) now, so that the suite phase only runs it
    ${MVN:-mvn} -B -ntp -q -f "$REPO_ROOT/e2e/pom.xml" test-compile >&2
}

hbase_and_client_side() {
  # charts/hbase mostly waits (image load, pods starting): the client side builds meanwhile. Both
  # run to their end, and the phase fails if either did (each one's own output says which).
  local hbase_rc=0 client_rc=0 t0=$SECONDS
  hbase_up &
  local hbase_pid=$!
  client_side || client_rc=$?
  log "workload client, API jar and the suite compiled in $((SECONDS - t0))s (rc=$client_rc), beside charts/hbase"
  wait "$hbase_pid" || hbase_rc=$?
  [ "$hbase_rc" = 0 ] || log "charts/hbase did not get Ready (rc=$hbase_rc)"
  [ "$hbase_rc" = 0 ] && [ "$client_rc" = 0 ]
}

hbase_up() {
  if [ "${E2E_SECURED:-0}" = 1 ]; then
    # the realm first: the chart's pods mount its keytab Secret and krb5 ConfigMap
    "$E2E_KIND_DIR/kdc-up.sh"
    HELM_ARGS="${HELM_ARGS:-} --set security.kerberos.enabled=true --set security.kerberos.realm=$KERBEROS_REALM
      --set security.kerberos.superusers=e2e-workload" "$E2E_KIND_DIR/hbase-up.sh"
  else
    "$E2E_KIND_DIR/hbase-up.sh"
  fi
}

suite() {
  rm -f "$TARGET/e2e-report.md"
  [ -z "${E2E_CPU_SHARES:-}" ] || cpu_shares 1024
  # E2E_TAGS as surefire's -Dgroups (one word: the expression may hold | and &); E2E_MVN_ARGS after it
  local tags=()
  [ -z "${E2E_TAGS:-}" ] || tags=("-Dgroups=$E2E_TAGS")
  # KIND_CLUSTER, the namespaces and images reach the suite through the environment (lib.sh exports them)
  # shellcheck disable=SC2086
  ${MVN:-mvn} -B -ntp -f "$REPO_ROOT/e2e/pom.xml" test -De2e.repo="$REPO_ROOT" "${tags[@]}" ${E2E_MVN_ARGS:-} 2>&1 \
    | tee "$TARGET/mvn-e2e.log"
  return "${PIPESTATUS[0]}"
}

trap cleanup EXIT
# a run stopped by a signal is a failed run: without these the EXIT trap saw the status of the last
# command that finished (0) and printed PASSED
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP
phase "kind cluster" cluster
phase "images (build)" images
phase "charts/hbase to Ready, beside the workload client, API jar and suite compile" hbase_and_client_side
[ -z "${E2E_SUITE_GATE:-}" ] || phase "waiting for the go to run the suite (${E2E_GATE_WHAT:-$E2E_SUITE_GATE})" await_gate
phase "mvn -f e2e/pom.xml test" suite
