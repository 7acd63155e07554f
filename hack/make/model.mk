# model.mk - the spin model of the scale-down and the lock (model/scaledown.pml, docs/model.md).
# Included by the top-level Makefile (-include hack/make/*.mk). Needs spin and a C compiler
# (Debian: apt-get install spin gcc). Without them the model tests skip, which go test shows
# only in verbose output: `make unit` prints MODEL NOT CHECKED before and after its tests
# (MODEL_REQUIRED=1 makes that an error), and `make model` fails.

.PHONY: model model-tools

# MODEL_TOOLS_CHECK is a shell command: it prints a loud line, and fails, when the model
# cannot be checked here.
MODEL_TOOLS_CHECK = if ! command -v spin >/dev/null 2>&1; then \
		echo "MODEL NOT CHECKED: spin not installed (apt-get install spin gcc)"; exit 1; \
	elif ! command -v gcc >/dev/null 2>&1 && ! command -v cc >/dev/null 2>&1; then \
		echo "MODEL NOT CHECKED: no C compiler for spin's verifier (apt-get install spin gcc)"; exit 1; \
	fi
# MODEL_TOOLS_WARN: the same line, an error only with MODEL_REQUIRED=1 (for make unit).
MODEL_TOOLS_WARN = ( $(MODEL_TOOLS_CHECK) ) || [ -z "$(MODEL_REQUIRED)" ]

## model-tools: fail with "MODEL NOT CHECKED: ..." unless spin and a C compiler are installed
model-tools:
	@$(MODEL_TOOLS_CHECK)

## model: check the Promela model with spin (safety, liveness, every mutant must fail) and compare its step list with the code's
model: model-tools
	go test -count=1 -timeout 20m -v -run 'TestModel' ./model
