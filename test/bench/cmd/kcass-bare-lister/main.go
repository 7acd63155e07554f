// Command kcass-bare-lister is the cold-start yardstick the benchmark issue names: a bare
// client-go binary that lists the CassandraClusters of one namespace and prints them as
// YAML, like `kubectl get cassandraclusters -o yaml` but without kubectl's discovery.
// It uses only clientcmd and the dynamic client (no cli-runtime, no typed clientset), so
// it shows the least a Go client pays to start on this machine. make bench runs it
// directly and through kubectl (as a plugin, kubectl-kcassbare) beside the real plugin.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

func main() {
	ns := flag.String("n", "default", "namespace")
	flag.Parse()
	if err := run(*ns); err != nil {
		fmt.Fprintln(os.Stderr, "kcass-bare-lister:", err)
		os.Exit(1)
	}
}

func run(ns string) error {
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "db.orange.com", Version: "v2", Resource: "cassandraclusters"}
	l, err := dc.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	out, err := yaml.Marshal(l.UnstructuredContent())
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}
