# e2e.mk - end-to-end tests on a real local control plane (hack/testenv) and the demo.
# Included by the top-level Makefile (-include hack/make/*.mk), which has `test: lint unit e2e`.

TESTENV      := hack/testenv
E2E_TIMEOUT  ?= 60m
# E2E_RUN: a -run regexp, e.g. make e2e E2E_RUN='TestCassKop/cscetbon-v2.3/scale'
E2E_RUN      ?=
# E2E_PARALLEL: scenarios run at once per CRD (default: go test's, GOMAXPROCS)
E2E_PARALLEL ?=

.PHONY: e2e e2e-build testenv-up testenv-down demo

## e2e-build: build the local control plane once (~20 min on 2 cores; cached in ~/.cache/kcass-testenv)
e2e-build:
	@$(TESTENV)/build.sh >/dev/null

## e2e: end-to-end suite through the real kubectl on a local control plane (started and stopped by the tests);
## the log ends with the whole output of each failed test (hack/testlog)
e2e: e2e-build
	KCASS_E2E=1 go test -json -count=1 -timeout $(E2E_TIMEOUT) \
		$(if $(E2E_RUN),-run '$(E2E_RUN)') $(if $(E2E_PARALLEL),-parallel $(E2E_PARALLEL)) ./test/e2e/... \
		| go run ./hack/testlog

## testenv-up: start a local control plane for manual use (KTE_DIR, default /tmp/kcass-testenv)
testenv-up: e2e-build
	@$(TESTENV)/up.sh

## testenv-down: stop it
testenv-down:
	@$(TESTENV)/down.sh

## demo: scale a simulated CassKop cluster down, interrupt it, resume it (starts what it needs)
demo:
	@hack/demo.sh
