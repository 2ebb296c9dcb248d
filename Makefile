# hbase-cache-operator: one entry point for building, testing and running.
# `make help` lists the targets. Tools the targets need are installed into ./bin when missing.
SHELL := /bin/bash
.DEFAULT_GOAL := help

ROOT      := $(abspath .)
BIN       := $(ROOT)/bin
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
build: ## compile, check crds/ is current, build the operator jar (no tests)
	cd operator && $(MVN) $(MVN_FLAGS) -DskipTests package

.PHONY: crds
crds: ## regenerate crds/ (and the chart's copy) from the API classes
	cd operator && $(MVN) $(MVN_FLAGS) -pl api -DskipTests process-classes
	cp operator/api/target/classes/META-INF/fabric8/$(CRD_FILE) crds/$(CRD_FILE)
	@if [ -d charts/hbase-cache-operator/crds ]; then cp crds/$(CRD_FILE) charts/hbase-cache-operator/crds/$(CRD_FILE); fi

.PHONY: kube-api-test-binaries
kube-api-test-binaries: ## make kube-apiserver/etcd/kubectl available to kube-api-test (offline here)
	@.ci/kube-api-test-binaries.sh

.PHONY: test
test: kube-api-test-binaries ## unit + API-server tests (real kube-apiserver/etcd via kube-api-test)
	cd operator && $(MVN) $(MVN_FLAGS) verify

.PHONY: lint
lint: ## compiler warnings as errors, shell scripts syntax-checked
	cd operator && $(MVN) $(MVN_FLAGS) -DskipTests -Dmaven.compiler.failOnWarning=true compile
	@for f in $$(git ls-files '*.sh' .ci/run); do bash -n $$f || exit 1; done; echo "shell scripts: ok"

.PHONY: plan
plan: ## print a plan: make plan POLICY=examples/persistent-file.yaml LIMIT=16Gi
	@test -f $(OPERATOR_JAR) || $(MAKE) build
	java -jar $(OPERATOR_JAR) plan -f $(POLICY) --memory-limit $(LIMIT)

.PHONY: clean
clean: ## remove build outputs
	cd operator && $(MVN) $(MVN_FLAGS) -q clean
