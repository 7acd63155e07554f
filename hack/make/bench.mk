# bench.mk - `make bench`: the plugin's overhead, reaction latency, API load, cold start and
# memory, measured on a private local control plane (hack/testenv) that the run starts and
# always stops. Included by the top-level Makefile (-include hack/make/*.mk). Never part of
# `make test`: test/bench's own tests only check the harness's bookkeeping.

# BENCH_ARGS: harness flags, e.g. make bench BENCH_ARGS='-sizes 2,10 -memory-size 10 -skip-micro -skip-stream'
# (hack/bench/run.sh -h lists them).
BENCH_ARGS ?=
BENCH_OUT  ?= $(CURDIR)/bench/results.json

.PHONY: bench

## bench: measure overhead per node, reaction latency, API requests, cold start, peak RSS and micro-benchmarks (~7.5 min on 2 cores, streaming figures included; table on stdout, JSON in bench/results.json)
bench: build
	@BENCH_PLUGIN=$(BIN_DIR)/kubectl-cassandra BENCH_OUT=$(BENCH_OUT) hack/bench/run.sh $(BENCH_ARGS)
