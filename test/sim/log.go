package sim

import (
	"fmt"
	"strings"
	"time"
)

// The container log of a node: what `kubectl logs` shows of the Cassandra container
// since its latest start. Cassandra's console appender (conf/logback.xml, STDOUT, INFO
// and up, the same in 3.11–5.0) prints "%-5level [%thread] %date{ISO8601} %F:%L - %msg%n";
// CassandraDaemon prints a startup error on stdout before it exits 3
// (docs/how-it-works/replace.md §4.2). Only the lines the simulated rules produce are
// written; the plugin reads the startup error from here.

// logLine is one entry; Level "" is a raw line (a println, a stack frame).
type logLine struct {
	At    time.Time `json:"at"`
	Level string    `json:"level,omitempty"`
	Src   string    `json:"src,omitempty"` // "StorageService.java:653"
	Msg   string    `json:"msg"`
	// Thread is "main" (startup) unless set, e.g. to a JMX call's RMI thread.
	Thread string `json:"thread,omitempty"`
}

// maxLog bounds a node's log in the state file.
const maxLog = 200

func (l logLine) String() string {
	if l.Level == "" {
		return l.Msg
	}
	thread := l.Thread
	if thread == "" {
		thread = "main"
	}
	// %date{ISO8601} in the container's UTC zone.
	return fmt.Sprintf("%-5s [%s] %s %s - %s", l.Level, thread, l.At.UTC().Format("2006-01-02 15:04:05,000"), l.Src, l.Msg)
}

func (n *node) logAt(at time.Time, level string, src perVersion, o Options, msg string) {
	n.appendLog(logLine{At: at, Level: level, Src: src.of(o), Msg: msg})
}

// logJMX logs from a nodetool call's RMI thread.
func (n *node) logJMX(at time.Time, level string, src perVersion, o Options, msg string) {
	n.appendLog(logLine{At: at, Level: level, Src: src.of(o), Msg: msg, Thread: "RMI TCP Connection(2)-127.0.0.1"})
}

func (n *node) logRaw(at time.Time, msg string) { n.appendLog(logLine{At: at, Msg: msg}) }

func (n *node) appendLog(l logLine) {
	n.Log = append(n.Log, l)
	if len(n.Log) > maxLog {
		n.Log = n.Log[len(n.Log)-maxLog:]
	}
}

// setModeLog is StorageService.setMode(mode, msg, true): "JOINING: <msg>" at INFO.
func (n *node) setModeLog(at time.Time, o Options, msg string) {
	n.logAt(at, "INFO", srcSetMode, o, "JOINING: "+msg)
}

// crash is a startup error: the stdout line, the ERROR with its trace, and the JVM
// exiting with status 3 (CassandraDaemon.activate's catch, CD line srcStartupErr).
func (st *state) crash(n *node, at time.Time, r startupRule, msg string) {
	o := st.Options
	frame := "\tat " + r.frame.of(o)
	n.logRaw(at, "Exception ("+r.class+") encountered during startup: "+msg)
	n.logAt(at, "ERROR", srcStartupErr, o, "Exception encountered during startup")
	n.logRaw(at, r.class+": "+msg)
	n.logRaw(at, frame)
	n.Exit = 3
	st.jvmStopped(n, at)
}

// startupError is the line n printed when its JVM exited on a startup error, "" when
// it did not.
func (n *node) startupError() string {
	if n.Exit == 0 {
		return ""
	}
	for i := len(n.Log) - 1; i >= 0; i-- {
		if l := n.Log[i]; l.Level == "" && strings.HasPrefix(l.Msg, "Exception (") {
			return l.Msg
		}
	}
	return ""
}

// Log returns the container log of pod's latest JVM start, one line per element.
func (s *Store) Log(pod string) ([]string, error) {
	var out []string
	err := s.read(func(st *state, _ time.Time) error {
		n, err := st.node(pod)
		if err != nil {
			return err
		}
		for _, l := range n.Log {
			out = append(out, strings.Split(l.String(), "\n")...)
		}
		return nil
	})
	return out, err
}
