# model.mk - the spin model of the scale-down and the lock (model/scaledown.pml, docs/model.md).
# Included by the top-level Makefile (-include hack/make/*.mk). Needs spin and a C compiler
# (Debian: apt-get install spin gcc); without them the tests skip and say why.

.PHONY: model

## model: check the Promela model with spin (safety, liveness, every mutant must fail) and compare its step list with the code's
model:
	go test -count=1 -timeout 20m -v -run 'TestModel' ./model
