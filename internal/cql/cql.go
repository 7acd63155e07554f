// Package cql runs cqlsh in a Cassandra pod for what nodetool cannot do: read each
// keyspace's replication and change it (ALTER KEYSPACE). The superuser's password goes
// to cqlsh's standard input as its cqlshrc, never into argv (which is in the exec
// request's URL, the API server's audit log and the container's process list).
package cql

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Streamer runs a command in a pod, feeding it stdin (nil: none); a non-zero exit is an
// error carrying the code (kube.ExitCode).
type Streamer interface {
	Stream(ctx context.Context, pod string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// Credentials are a CQL user and password.
type Credentials struct {
	Username, Password string
}

// RCFile is the cqlshrc cqlsh is told to read (--cqlshrc): its own standard input, which
// the exec fills with the [authentication] section.
const RCFile = "/dev/stdin"

// Client runs cqlsh through a pod exec.
type Client struct {
	Exec Streamer
	// Auth gives the credentials (nil, or nil credentials: none), asked on each call so
	// the Secret is read only when cqlsh runs.
	Auth func(context.Context) (*Credentials, error)
}

// Run runs one statement with cqlsh in pod, connected to host (the node's own address:
// cqlsh's default, localhost, is not where every operator's Cassandra listens).
func (c Client) Run(ctx context.Context, pod, host, stmt string) (stdout, stderr string, err error) {
	argv := []string{"cqlsh"}
	var in io.Reader
	if c.Auth != nil {
		cred, err := c.Auth(ctx)
		if err != nil {
			return "", "", err
		}
		if cred != nil {
			rc, err := cred.rc()
			if err != nil {
				return "", "", err
			}
			argv, in = append(argv, "--cqlshrc", RCFile), strings.NewReader(rc)
		}
	}
	argv = append(argv, host, "-e", stmt)
	var out, errOut bytes.Buffer
	err = c.Exec.Stream(ctx, pod, argv, in, &out, &errOut)
	if err != nil {
		err = fmt.Errorf("cqlsh in %s failed: %w: %s", pod, err, firstLine(errOut.String(), out.String()))
	}
	return out.String(), errOut.String(), err
}

// rc is the cqlshrc carrying the credentials; a line break in them would end the value
// (cqlsh reads it with Python's configparser).
func (c Credentials) rc() (string, error) {
	if c.Username == "" || strings.ContainsAny(c.Username+c.Password, "\r\n") {
		return "", fmt.Errorf("the CQL secret's username is empty or its username or password holds a line break, which cqlsh's cqlshrc cannot carry")
	}
	return "[authentication]\nusername = " + c.Username + "\npassword = " + c.Password + "\n", nil
}

func firstLine(texts ...string) string {
	for _, t := range texts {
		if t = strings.TrimSpace(t); t != "" {
			return strings.SplitN(t, "\n", 2)[0]
		}
	}
	return "no output"
}

// SecretAuth reads the credentials from the Secret ns/name (keys username and
// password, as cass-operator's <cluster>-superuser has them) on first use, and keeps
// them. An empty name: no credentials.
func SecretAuth(kube kubernetes.Interface, ns, name string) func(context.Context) (*Credentials, error) {
	if name == "" {
		return nil
	}
	var got *Credentials
	return func(ctx context.Context) (*Credentials, error) {
		if got != nil {
			return got, nil
		}
		s, err := kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("cannot read the CQL secret %s/%s: %w", ns, name, err)
		}
		cred, err := fromSecret(s)
		if err != nil {
			return nil, err
		}
		got = cred
		return got, nil
	}
}

func fromSecret(s *corev1.Secret) (*Credentials, error) {
	user, pass := string(s.Data["username"]), string(s.Data["password"])
	if user == "" || pass == "" {
		return nil, fmt.Errorf("the CQL secret %s/%s needs the keys username and password", s.Namespace, s.Name)
	}
	return &Credentials{Username: user, Password: pass}, nil
}
