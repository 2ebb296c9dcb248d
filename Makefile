# hbase-cache-operator: one entry point for building, testing and running.
# `make help` lists the targets. Tools the targets need are installed into ./bin when missing.
SHELL := /bin/bash
.DEFAULT_GOAL := help

ROOT      := $(abspath .)
# BIN: where tools and the plot venv live (.ci/run's kind lane points its copy of the tree at
# the checkout's)
BIN       ?= $(ROOT)/bin
MVN       ?= mvn
MVN_FLAGS ?= -B -ntp
OPERATOR_JAR := operator/target/hbase-cache-operator.jar
CRD_FILE  := blockcachepolicies.cache.hbase.dev-v1.yml

export PATH := $(BIN):$(PATH)

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*?## "}{printf "  %-14s %s\n",$$1,$$2}'

##@ build and test
.PHONY: build
build: ## compile, check crds/ is current (CrdUpToDateTest, the only test run), build the operator jar
	cd operator && $(MVN) $(MVN_FLAGS) -Dtest=CrdUpToDateTest -Dsurefire.failIfNoSpecifiedTests=false package

.PHONY: crds
crds: ## regenerate crds/, the chart's copy (files/crds/), docs/reference/api.md and the chart README's values table
	cd operator && $(MVN) $(MVN_FLAGS) -pl api test -Dtest='CrdUpToDateTest,ChartValuesReferenceTest' -Dcrds.update=true
	cp crds/$(CRD_FILE) charts/hbase-cache-operator/files/crds/$(CRD_FILE)

.PHONY: kube-api-test-binaries
kube-api-test-binaries: ## make kube-apiserver/etcd/kubectl available to kube-api-test (offline here)
	@.ci/kube-api-test-binaries.sh

# What make test needs besides Maven (kube-api-test's binaries, the chart checks' tools: on a new
# machine ~12 min of Go builds) is made beside Maven's downloads and compile (.ci/test-prereqs.sh);
# the tests wait for the binaries after the compile (core/pom.xml, execution kube-api-test-binaries).
# A head start only (what it could not make, the step that needs it tries again); stopped with its
# process group if Maven fails. Needs setsid (util-linux).
.PHONY: test
test: ## unit + API-server tests (real kube-apiserver/etcd), then the chart checks
	@mkdir -p target; \
	setsid .ci/test-prereqs.sh >target/test-prereqs.log 2>&1 & bg=$$!; \
	trap 'kill -- -$$bg 2>/dev/null || true' EXIT; \
	echo "make test: kube-api-test binaries and chart tools made beside the build (target/test-prereqs.log)"; \
	(cd operator && $(MVN) $(MVN_FLAGS) verify) || exit 1; \
	wait $$bg; trap - EXIT; grep -E ' (ready after|not made|not all made) ' target/test-prereqs.log || true
	@$(MAKE) --no-print-directory chart-test

# The API-server tests on the oldest Kubernetes the README claims (KUBE_OLDEST): the CRD's schema
# and CEL rules (CrdValidationTest, with the BadPolicies table), server-side apply of status (its
# conditions test), events (EventsTest) and the roll step's deletes (RollStepTest), on a
# kube-apiserver of that version (kube-api-test, KUBE_API_TEST_API_SERVER_VERSION; the test asserts
# the server's version). Its binaries are built once from Go modules with kind-offline (a cache of
# their own: .ci/kube-api-test-binaries.sh, KUBE_API_TEST_K8S_VERSION). Not 1.29: the Go module
# proxy here serves k8s.io/kubernetes v1.29.6 only, without the staging modules its commands need
# (k8s.io/endpointslice, kube-controller-manager, legacy-cloud-providers at v0.29.6).
KUBE_OLDEST ?= 1.30.14
.PHONY: test-api-oldest
test-api-oldest: ## the API-server tests (CRD schema and CEL, status apply, events) on the oldest Kubernetes tested (KUBE_OLDEST=1.30.14)
	@KUBE_API_TEST_K8S_VERSION=$(KUBE_OLDEST) .ci/kube-api-test-binaries.sh
	cd operator && KUBE_API_TEST_API_SERVER_VERSION=$(KUBE_OLDEST) $(MVN) $(MVN_FLAGS) -pl core -am verify \
	  -Dtest='CrdValidationTest,EventsTest,RollStepTest' -Dsurefire.failIfNoSpecifiedTests=false \
	  -DskipITs -Dspotless.check.skip=true

.PHONY: lint
lint: ## compiler warnings as errors, shell scripts syntax-checked, Markdown links and anchors resolve, checkov's Kubernetes checks on the rendered charts (charts/scan-skips.txt)
	@# every main source stale, so that javac runs (after another build it reports "Nothing to compile")
	find operator/api/src/main/java operator/core/src/main/java -name '*.java' -exec touch {} +
	cd operator && $(MVN) $(MVN_FLAGS) -DskipTests -Dmaven.compiler.failOnWarning=true compile
	@for f in $$(git ls-files '*.sh' .ci/run); do bash -n $$f || exit 1; done; echo "shell scripts: ok"
	@e2e/kind/doc-links.sh
	@e2e/kind/chart-scan.sh

.PHONY: fmt
fmt: ## format the Java sources (spotless:apply: google-java-format, imports); `make test` checks it (the e2e suite's: `make e2e`)
	cd operator && $(MVN) $(MVN_FLAGS) -Phbase-it spotless:apply
	$(MVN) $(MVN_FLAGS) -f e2e/pom.xml spotless:apply

.PHONY: plan
plan: ## print a plan: make plan POLICY=examples/persistent-file.yaml LIMIT=16Gi
	@test -f $(OPERATOR_JAR) || $(MAKE) build
	java -jar $(OPERATOR_JAR) plan -f $(POLICY) --memory-limit $(LIMIT)

.PHONY: clean
clean: ## remove build outputs
	cd operator && $(MVN) $(MVN_FLAGS) -q clean

##@ kind cluster, images and the demo HBase chart (scripts in e2e/kind/)
# Names and defaults (KIND_CLUSTER, HBASE_IMAGE, OPERATOR_IMAGE, JRE_IMAGE, KIND_NODE_IMAGE, the
# namespaces and release names) are defined once, in e2e/kind/lib.sh. The Makefile sets none: what
# you give on the command line (make demo HBASE_IMAGE=...) or in the environment reaches the scripts.

.PHONY: tools
tools: ## install kind and helm into ./bin (go install) when missing
	@e2e/kind/tools.sh

.PHONY: docker
docker: ## make a Docker daemon available (installs docker.io from apt as root when missing)
	@e2e/kind/docker.sh

.PHONY: kind-up
kind-up: ## create the kind cluster KIND_CLUSTER (node image: KIND_NODE_IMAGE, or built offline from ../shared/kind-offline)
	@e2e/kind/cluster-up.sh

.PHONY: kind-down
kind-down: ## delete the kind cluster KIND_CLUSTER
	@e2e/kind/cluster-down.sh

.PHONY: hbase-image
hbase-image: ## build HBASE_IMAGE: HBase classpath with Maven, then docker build on the JRE base (JRE_IMAGE or local/public default)
	@e2e/kind/docker.sh
	@e2e/kind/hbase-image.sh

.PHONY: operator-image
operator-image: ## build OPERATOR_IMAGE into Docker: the image a release publishes (Jib, operator/core/pom.xml profile jib), on the local JRE base
	@e2e/kind/docker.sh
	@e2e/kind/operator-image.sh

.PHONY: images
images: hbase-image operator-image ## build all container images

.PHONY: chart-test
chart-test: ## helm lint both charts, crds/ copy check, helm-unittest suites (charts/*/tests)
	@e2e/kind/chart-test.sh

.PHONY: kind-hbase
kind-hbase: kind-up hbase-image ## install charts/hbase into the kind cluster and wait for all pods Ready
	@e2e/kind/hbase-up.sh

.PHONY: kind-operator
kind-operator: kind-up operator-image ## load the operator image, helm install charts/hbase-cache-operator (its CRD with it), wait for Ready
	@e2e/kind/operator-up.sh

.PHONY: hbase-check
hbase-check: ## on the kind cluster: create/write/read a table with a client pod, then `helm test` (CanaryTool)
	@e2e/kind/hbase-check.sh

##@ demo and end-to-end suite on kind (e2e/demo.sh, e2e/e2e.sh)
# The e2e gets its own cluster (hbase-cache-e2e, deleted at the end) unless KIND_CLUSTER is given.

.PHONY: demo
demo: ## kind cluster + both charts + the PersistentFile example + a table read by a client pod; prints `kubectl get bcp` (leaves the cluster: make kind-down)
	@e2e/demo.sh

.PHONY: e2e
# E2E_TAGS: a JUnit tag expression selecting scenario classes, each of which stands alone (it makes
# what it needs: e2e/kind/README.md, "The suite"): a class's own tag (setup, rolls, drains, disruptions,
# stops, refusals, lifecycle, observability, namespace, advice), the group fault, or e.g.
# 'setup|stops'. The report's class table says which ran and how each ended.
e2e: ## the JUnit suite on a fresh kind cluster (hbase-cache-e2e), deleted at the end unless KEEP_CLUSTER=1; E2E_TAGS=stops (a tag expression) selects classes; report in e2e/target/e2e-report.md
	@e2e/e2e.sh

.PHONY: e2e-unit
e2e-unit: ## the kind suite's checks that need no cluster (run order, tag selection, isolation of the scenario classes, ...): mvn -f e2e/pom.xml test -Dtest='*Test'
	$(MVN) $(MVN_FLAGS) -f operator/pom.xml -q -pl api -am -DskipTests install
	$(MVN) $(MVN_FLAGS) -f e2e/pom.xml test -Dtest='*Test'

.PHONY: e2e-faults
# The suite's fault scenarios (JUnit tag "fault": RollScenarios, DrainScenarios, DisruptionScenarios,
# WarmStopScenarios, PolicyRefusalScenarios, PolicyLifecycleScenarios) after its setup steps ("setup", SetupScenarios: operator, policy,
# table, reader, a first roll), without the sizing-advice and Prometheus steps. make e2e runs them
# too, on the same cluster: .ci/run does not run them twice.
e2e-faults: ## only the kind suite's fault scenarios (after its 4 setup steps), on a fresh kind cluster; report in e2e/target/e2e-report.md
	@E2E_TAGS='setup|fault' e2e/e2e.sh

.PHONY: e2e-secured
# The suite's setup steps (operator, policy and its first roll, table, reader, a roll with the usual
# checks) on a Kerberos-secured HBase: e2e/kind/kdc-up.sh makes a realm (a KDC pod from Debian's
# krb5-kdc, keytabs as Secrets), charts/hbase runs with security.kerberos.enabled, the operator acts
# as its own principal with RA. Not in .ci/run (~6 min here with a kind cluster of its own, on
# the critical path; past its time budget); make test-hbase's SecuredClusterIT and SecuredPolicyIT
# are (a real KDC, real secured HBase).
e2e-secured: ## the kind suite's 4 setup steps on a Kerberos-secured HBase (a KDC pod, keytab Secrets), on a fresh kind cluster; report in e2e/target/e2e-report.md
	@E2E_SECURED=1 E2E_TAGS=setup e2e/e2e.sh

.PHONY: e2e-namespace
# The suite's namespace-only install (issue 25: the chart as a namespace admin installs it, a roll under it;
# NamespaceInstallScenario) after its setup steps. make e2e runs it as step 18, on the same cluster
# (only the sizing advice runs after it, under its operator).
e2e-namespace: ## only the kind suite's namespace-only install step (after its 4 setup steps), on a fresh kind cluster
	@E2E_TAGS='setup|namespace' e2e/e2e.sh

##@ release (e2e/kind/publish.sh; .github/workflows/release.yml runs it against ghcr.io)

.PHONY: publish
publish: ## push the operator image (Jib, no Docker) and the OCI chart to REGISTRY (e.g. REGISTRY=ghcr.io/acme; PLAIN_HTTP=1 for a local one)
	@e2e/kind/publish.sh

.PHONY: publish-check
publish-check: ## the release path with a real registry: a local distribution registry, make publish to it, `helm install oci://` on a kind cluster pulling through a mirror (~4 min); target/publish-check.md
	@e2e/kind/publish-check.sh

##@ HBase contract tests (real HBase processes on loopback, started through images/hbase/entrypoint.sh)
# HBASE_VERSION: the hbase-server release the tests start (the operator's own client stays the one
# operator/pom.xml names, 2.6.4). The default's classpath is images/hbase/target/lib (the image's);
# any other release's goes to images/hbase/target/hbase-$(HBASE_VERSION)/lib, and a 2.5 release's
# carries hbase-rsgroup (RegionServer groups, RSGroupRollIT). HBASE_IT_TESTS: which classes.
HBASE_DEFAULT_VERSION := 2.6.4-hadoop3
HBASE_VERSION ?= $(HBASE_DEFAULT_VERSION)
HBASE_RUNTIME_DIR = $(if $(filter $(HBASE_DEFAULT_VERSION),$(HBASE_VERSION)),images/hbase/target,images/hbase/target/hbase-$(HBASE_VERSION))
HBASE_IT_TESTS ?= **/hbaseit/*IT
.PHONY: hbase-lib
hbase-lib: ## assemble the HBase server classpath (HBASE_VERSION, default 2.6.4-hadoop3): images/hbase/target/{lib,hbase-webapps}
	$(MVN) $(MVN_FLAGS) -q -f images/hbase/pom.xml package \
	  $(if $(filter $(HBASE_DEFAULT_VERSION),$(HBASE_VERSION)),,-Dhbase.server.version=$(HBASE_VERSION) -Dhbase.runtime.dir=$(ROOT)/$(HBASE_RUNTIME_DIR)) \
	  $(if $(filter 2.5.%,$(HBASE_VERSION)),-Phbase-rsgroup)

.PHONY: test-hbase
# The contract tests check what HBase does, not how fast: their daemons run with C1 only
# (-XX:TieredStopAtLevel=1, HBASE_OPTS through -Dhbase.it.jvmOpts), which spares the two cores
# C2's compile work in processes that live a few minutes. The bench-* targets leave the JIT as it is.
# Two test classes at a time (HBASE_IT_FORKS), each with its own HBase processes: 357 s against
# 580 s one at a time, warm, on 2 cores. The bench-* targets run one.
HBASE_IT_JVM_OPTS ?= -XX:TieredStopAtLevel=1
HBASE_IT_FORKS ?= 2
# OwnClusterIT runs after the other classes, in a JVM of its own (operator/hbase-it/pom.xml,
# execution own-cluster): with the full set of classes only, not a subset (HBASE_IT_TESTS)
HBASE_IT_OWN_CLUSTER_SKIP = $(if $(subst **/hbaseit/*IT,,$(HBASE_IT_TESTS)),true,false)
test-hbase: hbase-lib ## contract tests on real ZooKeeper/HMaster/RegionServers (operator/hbase-it, ~6 min; HBASE_VERSION=2.5.13-hadoop3: on the 2.5 line)
	cd operator && $(MVN) $(MVN_FLAGS) -Phbase-it -pl hbase-it -am verify -DskipITs \
	  -Dtest='$(HBASE_IT_TESTS)' -Dsurefire.failIfNoSpecifiedTests=false \
	  -Dhbase.it.lib.dir=$(ROOT)/$(HBASE_RUNTIME_DIR)/lib \
	  -Dhbase.it.jvmOpts='$(HBASE_IT_JVM_OPTS)' -Dhbase.it.forkCount=$(HBASE_IT_FORKS) \
	  -Dhbase.it.ownCluster.skip=$(HBASE_IT_OWN_CLUSTER_SKIP)

.PHONY: bench-roll
bench-roll: hbase-lib ## two rolls of three real RegionServers, HBase's drain vs the operator's (~8 min, not a test): docs/bench-roll.md
	cd operator && $(MVN) $(MVN_FLAGS) -Phbase-it -pl hbase-it -am verify -DskipITs \
	  -Dtest=RollBench -Dsurefire.failIfNoSpecifiedTests=false
	cp operator/hbase-it/target/bench/roll.md docs/bench-roll.md

.PHONY: bench-scale-up
SCALE_UP_REGIONS ?= 12
SCALE_UP_VARIANTS ?=
SCALE_UP_REPORT = scale-up$(if $(filter 12,$(SCALE_UP_REGIONS)),,-$(SCALE_UP_REGIONS)-regions).md
bench-scale-up: hbase-lib ## a fourth RegionServer with an empty cache joins three warm ones, HBase's balancer as planned (paced), unpaced, and without prefetch on open (~18 min, not a test): docs/bench-scale-up.md; SCALE_UP_REGIONS=36 SCALE_UP_VARIANTS=PLANNED: docs/bench-scale-up-36-regions.md
	cd operator && $(MVN) $(MVN_FLAGS) -Phbase-it -pl hbase-it -am verify -DskipITs \
	  -Dtest=ScaleUpBench -Dsurefire.failIfNoSpecifiedTests=false \
	  -Dbench.regions=$(SCALE_UP_REGIONS) -Dbench.variants=$(SCALE_UP_VARIANTS)
	cp operator/hbase-it/target/bench/$(SCALE_UP_REPORT) docs/bench-$(SCALE_UP_REPORT)

.PHONY: bench-roll-secured
bench-roll-secured: hbase-lib ## WarmRollIT's two rolls on an unsecured cluster and on a Kerberos-secured one with HTTPS+SPNEGO info servers, one after the other (~7 min, not a test): RESULT lines in target/bench-roll-secured.txt
	@mkdir -p target
	cd operator && $(MVN) $(MVN_FLAGS) -Phbase-it -pl hbase-it -am verify -DskipITs \
	  -Dtest='**/hbaseit/WarmRollIT,**/hbaseit/SecuredRollBench' -Dsurefire.failIfNoSpecifiedTests=false \
	  -Dspotless.check.skip=true
	grep -h -E '^(RESULT|  slow second)' operator/hbase-it/target/surefire-reports/*WarmRollIT-output.txt \
	  operator/hbase-it/target/surefire-reports/*SecuredRollBench-output.txt | tee target/bench-roll-secured.txt

.PHONY: slowfs
slowfs: ## build bin/slowfs from Go modules: a FUSE loopback whose reads wait a fixed latency (bench-restart's storage)
	@test -x $(BIN)/slowfs -a $(BIN)/slowfs -nt operator/hbase-it/bench/slowfs/main.go \
	  || (cd operator/hbase-it/bench/slowfs && GOTOOLCHAIN=local CGO_ENABLED=0 go build -trimpath -o $(BIN)/slowfs .)

.PHONY: bench-restart
bench-restart: hbase-lib slowfs ## the first minute after a RegionServer restart, File vs PersistentFile, HFiles on slowfs (~15 min, root): docs/bench-restart.md
	cd operator && $(MVN) $(MVN_FLAGS) -Phbase-it -pl hbase-it -am verify -DskipITs \
	  -Dtest=RestartBench -Dsurefire.failIfNoSpecifiedTests=false $(BENCH_ARGS)
	@$(MAKE) --no-print-directory plot-venv
	$(BIN)/bench-venv/bin/python operator/hbase-it/bench/restart-report.py operator/hbase-it/target/bench/restart.json docs

.PHONY: plot-venv
plot-venv: ## matplotlib (PyPI) in bin/bench-venv for the plots; Debian's python3-venv is installed when root and missing
	@test -x $(BIN)/bench-venv/bin/python || python3 -m venv $(BIN)/bench-venv 2>/dev/null \
	  || { [ "$$(id -u)" = 0 ] && apt-get install -y -qq python3-venv >/dev/null && rm -rf $(BIN)/bench-venv && python3 -m venv $(BIN)/bench-venv; }
	@$(BIN)/bench-venv/bin/python -c 'import matplotlib' 2>/dev/null || $(BIN)/bench-venv/bin/pip install -q matplotlib

.PHONY: dashboard-plot
dashboard-plot: plot-venv ## the Grafana dashboard's panels as make e2e's Prometheus answered them: docs/dashboard-kind.png
	$(BIN)/bench-venv/bin/python e2e/dashboard-plot.py e2e/target/prometheus-panels.json docs/dashboard-kind.png

.PHONY: roll-plot
roll-plot: plot-venv ## make e2e's rolls as a picture (reads/s, p99, the cluster's reads from cache, each restart): docs/roll-kind.png
	$(BIN)/bench-venv/bin/python e2e/roll-plot.py e2e/target docs/roll-kind.png $(ROLL_WINDOW)

.PHONY: bench-operator
# The benchmark JVM as the chart runs the operator: its javaOpts under the chart's 512Mi memory limit
# (MaxRAM stands for the container's limit; in such a container the JVM picks the Serial GC itself)
BENCH_OPERATOR_JVM ?= -XX:MaxRAM=512m -XX:MaxRAMPercentage=70 -XX:TieredStopAtLevel=1 -XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=30 -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError -XX:-UsePerfData -XX:NativeMemoryTracking=summary
# The benchmark's own JVM (the simulation, and the operator at the in-process points) runs with
# BENCH_HARNESS_JVM, the chart's options by default. The noisy-neighbour row runs the operator in a
# process of its own (always with BENCH_OPERATOR_JVM). Its harness once ran out of memory under the
# chart's heap: the row's cleanup deleted the flood's 320 ConfigMaps of 1 MiB with one collection
# delete, whose answer lists them all (2026-12-03: 343 MB of byte arrays in its heap, the OOM in that delete); now
# deleted by name. Run the row alone with
#   make bench-operator BENCH_ARGS=-Dbench.points=noisy
BENCH_HARNESS_JVM ?= $(BENCH_OPERATOR_JVM)
bench-operator: kube-api-test-binaries ## the operator at 3, 52 and 200 simulated RegionServers on a real kube-apiserver, then at 200 in its own process from its jar, then the noisy-neighbour row (~35 min, not a test; that row alone: BENCH_ARGS=-Dbench.points=noisy): docs/bench-operator.md
	cd operator && $(MVN) $(MVN_FLAGS) -pl core -am verify -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
	  -Dit.test=OperatorScaleBench -Dfailsafe.failIfNoSpecifiedTests=false -DargLine="$(BENCH_HARNESS_JVM)" \
	  -Dbench.operatorJvm="$(BENCH_OPERATOR_JVM)" $(BENCH_ARGS)
	@$(MAKE) --no-print-directory plot-venv
	$(BIN)/bench-venv/bin/python operator/core/bench/operator-report.py operator/core/target/bench/operator.json docs

.PHONY: bench-cache
bench-cache: hbase-lib slowfs ## cache benchmark on real HBase, HFiles on slowfs (~25 min, not a test, root): docs/benchmarks.md and plots
	cd operator && $(MVN) $(MVN_FLAGS) -Phbase-it -pl hbase-it -am verify -DskipITs \
	  -Dtest=CacheBench -Dsurefire.failIfNoSpecifiedTests=false $(BENCH_ARGS)
	@$(MAKE) --no-print-directory plot-venv
	$(BIN)/bench-venv/bin/python operator/hbase-it/bench/report.py operator/hbase-it/target/bench/results.json docs
