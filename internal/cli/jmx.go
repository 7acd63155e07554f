package cli

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/kube"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
)

// JMX secret keys, as CassKop's spec.imageJolokiaSecret has them.
const (
	jmxUserKey     = "username"
	jmxPasswordKey = "password"
)

// jmxAuth is the source of the JMX credentials every nodetool call of a session passes:
// the Secret named by --jmx-secret, else the one the cluster resource names for its
// containers (named by the operator adapter: CassKop's spec.imageJolokiaSecret), else none. The Secret is read on the
// first nodetool call (a command that runs none needs no access to it) and kept once
// read. Its values never leave the nodetool client: they go to nodetool's stdin
// (nodetool.PasswordFile), never into argv, output, errors, events or the checkpoint.
//
// A Secret named by the flag must be readable; one found in the cluster resource may be
// for Jolokia only while JMX needs none, so when it cannot be read (forbidden, missing)
// the calls go without credentials, and a refusal then names the flag (AuthError). That
// answer is kept too: the operator writes its Secret before it starts any node, so one
// missing at the first call stays missing, and a GET before every call (on the run's
// critical path, before each ring read) would only say so again.
func (o *Options) jmxAuth(c *kube.Clients, ns, crSecret string) func(context.Context) (*nodetool.Credentials, error) {
	name, explicit := o.JMXSecret, true
	if name == "" {
		name, explicit = crSecret, false
	}
	if name == "" {
		return nil
	}
	var mu sync.Mutex
	var got *nodetool.Credentials
	var none bool // the cluster resource's Secret cannot be read: calls go without
	return func(ctx context.Context) (*nodetool.Credentials, error) {
		mu.Lock()
		defer mu.Unlock()
		if got != nil || none {
			return got, nil
		}
		s, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if !explicit && (apierrors.IsForbidden(err) || apierrors.IsNotFound(err)) {
				none = true
				return nil, nil
			}
			return nil, fmt.Errorf("cannot read the JMX secret %s/%s: %w", ns, name, err)
		}
		user, pass := string(s.Data[jmxUserKey]), string(s.Data[jmxPasswordKey])
		if user == "" || pass == "" {
			if !explicit {
				return nil, nil
			}
			return nil, exit.Usagef("the JMX secret %s/%s needs the keys %s and %s", ns, name, jmxUserKey, jmxPasswordKey)
		}
		got = &nodetool.Credentials{Username: user, Password: pass}
		return got, nil
	}
}
