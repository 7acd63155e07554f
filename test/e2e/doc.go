// Package e2e runs `kubectl cassandra` end to end, through the real kubectl binary, against a
// real kube-apiserver, etcd, kube-controller-manager and kube-scheduler, with kwok nodes
// whose fake kubelet answers `kubectl exec ... nodetool` with the simulated nodetool
// (test/nodetool-sim). See hack/testenv.
//
// The tests skip unless KCASS_E2E=1; `make e2e` sets it. TestMain then builds what is
// missing (the first control-plane build takes ~20 min), starts one control plane for the
// whole run in a private state dir on free ports, and always tears it down.
//
// Knobs: KCASS_E2E_KEEP=1 keeps the state dir (component logs, sim state) after the run.
package e2e
