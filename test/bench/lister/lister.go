// Package lister is the work of the cold start's yardstick binaries: list the
// CassandraClusters of one namespace with the dynamic client and print them as YAML, like
// `kubectl get cassandraclusters -o yaml` without kubectl's discovery. It imports no
// more than that needs, so that each yardstick's start-up is that of how it loads its
// kubeconfig.
package lister

import (
	"context"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// List prints the CassandraClusters (db.orange.com/v2) of ns to w.
func List(ctx context.Context, cfg *rest.Config, ns string, w io.Writer) error {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "db.orange.com", Version: "v2", Resource: "cassandraclusters"}
	l, err := dc.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	out, err := yaml.Marshal(l.UnstructuredContent())
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}
