// Package e2e runs `kubectl cassandra` end to end, through the real kubectl binary, against a
// real kube-apiserver, etcd, kube-controller-manager and kube-scheduler, with kwok nodes
// whose fake kubelet answers `kubectl exec ... nodetool` with the simulated nodetool
// (test/nodetool-sim). See hack/testenv.
//
// The tests skip unless KCASS_E2E=1; `make e2e` sets it. TestMain then builds what is
// missing (the first control-plane build takes ~20 min), starts one control plane for the
// whole run in a private state dir on free ports, and always tears it down.
//
// The CRD-dependent scenarios (TestCassKop) run once per CassandraCluster CRD: CassKop
// 2.1's and 2.3's when ../shared/casskop is next to the repo, else the project's stand-in
// (testdata/crd-cassandracluster.yaml).
//
// TestCassOperator installs k8ssandra cass-operator's CRDs (test/testdata/cass-operator)
// once and runs its scenarios in parallel on CassandraDatacenters
// (fixture.NewCassOperatorDatacenter), the operator played in-process by the stand-in
// (test/standin/cassoperator) while the fixture's cass-operator Deployment has replicas:
// make e2e E2E_RUN='TestCassOperator' (or 'TestCassOperator/size-policy').
//
// Knobs: KCASS_E2E_KEEP=1 keeps the state dir (component logs, sim state) after the run;
// KCASS_E2E_CRDS=fixture,orange-v2.1,cscetbon-v2.3 picks the CRDs; KCASS_E2E_SEED replays
// the random crash delays of a run.
package e2e
