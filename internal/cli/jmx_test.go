package cli

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
)

// TestJMXAuthReadsTheSecretOnce: the cluster resource's Secret is read at the first
// call and not again, found or not; one named by --jmx-secret that is missing is an
// error at each call (nothing kept).
func TestJMXAuthReadsTheSecretOnce(t *testing.T) {
	ctx := context.Background()
	gets := func(k *fake.Clientset) int {
		n := 0
		for _, a := range k.Actions() {
			if a.GetVerb() == "get" && a.GetResource().Resource == "secrets" {
				n++
			}
		}
		return n
	}
	k := fake.NewClientset()
	auth := (&Options{}).jmxAuth(&kube.Clients{Kube: k}, "ns", "dc1-superuser")
	for range 3 {
		if c, err := auth(ctx); c != nil || err != nil {
			t.Fatalf("missing Secret of the resource: %v %v, want no credentials", c, err)
		}
	}
	if n := gets(k); n != 1 {
		t.Fatalf("missing Secret read %d times, want once", n)
	}

	k = fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "dc1-superuser", Namespace: "ns"},
		Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}})
	auth = (&Options{}).jmxAuth(&kube.Clients{Kube: k}, "ns", "dc1-superuser")
	for range 3 {
		if c, err := auth(ctx); err != nil || c == nil || c.Username != "u" {
			t.Fatalf("the resource's Secret: %v %v", c, err)
		}
	}
	if n := gets(k); n != 1 {
		t.Fatalf("Secret read %d times, want once", n)
	}

	k = fake.NewClientset()
	auth = (&Options{JMXSecret: "named"}).jmxAuth(&kube.Clients{Kube: k}, "ns", "")
	for range 2 {
		if _, err := auth(ctx); err == nil {
			t.Fatal("a missing --jmx-secret is not an error")
		}
	}
	if n := gets(k); n != 2 {
		t.Fatalf("missing --jmx-secret read %d times, want at each call", n)
	}
}
