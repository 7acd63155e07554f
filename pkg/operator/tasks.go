package operator

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Tasks is offered by an operator that runs datacenter-wide jobs itself when asked
// through an object of its own (cass-operator's CassandraTask,
// apis/control/v1alpha1/cassandratask_types.go): a rolling restart, a cleanup. The
// plugin creates the task under a name derived from the operation (TaskName), so a
// resumed run finds it again by name, and verifies what the task says in the world
// (every pod re-created and its node UN; each pod's own status).
type Tasks interface {
	// CreateTask creates the task t in namespace ns (errors.Is ErrTaskExists when a task
	// of that name exists already; nothing is written then).
	CreateTask(ctx context.Context, ns string, t TaskSpec) error
	// GetTask reads the task name of namespace ns (nil, nil when there is none).
	GetTask(ctx context.Context, ns, name string) (*Task, error)
	// AutoCleanup reports whether the operator creates a cleanup task of its own after
	// each node it adds to the datacenter resource name (cass-operator: unless the
	// resource is annotated cassandra.datastax.com/no-cleanup;
	// pkg/reconciliation/reconcile_racks.go cleanupAfterScaling).
	AutoCleanup(ctx context.Context, ns, name string) (bool, error)
	// ListTasks lists the tasks of namespace ns on the datacenter resource dc, finished
	// or not, sorted by name.
	ListTasks(ctx context.Context, ns, dc string) ([]*Task, error)
	// TaskResource names the task resource for RBAC checks and kubectl commands.
	TaskResource() schema.GroupResource
	// DeleteTask deletes the task name of namespace ns only while it is the object
	// read: its UID and resourceVersion as preconditions (a request withdrawn must be
	// the one judged unstarted). errors.Is ErrTaskChanged when it changed or went
	// since.
	DeleteTask(ctx context.Context, ns, name, uid, resourceVersion string) error
}

// ErrTaskExists is matched (errors.Is) by CreateTask's error when a task of that name
// exists already.
var ErrTaskExists = errors.New("a task of that name exists already")

// ErrTaskChanged is matched (errors.Is) by DeleteTask's error when the task is not the
// object read any more (written since, or gone): nothing was deleted.
var ErrTaskChanged = errors.New("the task changed since it was read")

// Task commands the plugin asks for (cassandratask_types.go CassandraCommand).
const (
	TaskRestart = "restart"
	TaskCleanup = "cleanup"
	// TaskReplaceNode replaces the node of one pod (args.pod_name): the operator drains
	// it if it is up, deletes its claims and the pod, and starts the new pod with the
	// dead node's address as replace address (jobs.go replacePod, reconcile_racks.go
	// startCassandra; docs/how-it-works/replace.md §8). Its task completes once the pod is
	// deleted, not once the replacement is done: the plugin verifies that itself.
	TaskReplaceNode = "replacenode"
	// TaskRebuild rebuilds the node of one pod (args.pod_name) from the datacenter
	// args.source_datacenter (jobs.go rebuild: the management API's rebuild job; the
	// task's generic pod filter honours pod_name).
	TaskRebuild = "rebuild"
)

// Per-pod states of a task (cassandratask_types.go PodProcessingPhase).
const (
	TaskPodWaiting   = "WAITING"
	TaskPodRunning   = "RUNNING"
	TaskPodCompleted = "COMPLETED"
	TaskPodError     = "ERROR"
)

// TaskOperationLabel is the label the plugin puts on the tasks it creates, its value
// the operation's ID: a task of the planned name without it (or with another ID) is
// not the operation's.
const TaskOperationLabel = "kubectl-cassandra.io/operation-id"

// TaskSpec is a task to create: one job of Command on datacenter resource DC, limited
// to Rack when set, or to the pod Pod (args.pod_name: replacenode); labelled with
// OperationID (TaskOperationLabel). Its concurrency policy is Forbid: it runs only
// while no other task runs on the datacenter.
type TaskSpec struct {
	Name        string
	DC          string
	Command     string
	Rack        string
	Pod         string
	OperationID string
	// SourceDC is args.source_datacenter (rebuild).
	SourceDC string
}

// Task is a task as read.
type Task struct {
	Name string
	UID  string
	// ResourceVersion is the version read, for DeleteTask's precondition.
	ResourceVersion string
	DC              string
	Command         string
	Rack            string
	// Pod is args.pod_name of its job ("" when it names none).
	Pod string
	// SourceDC is args.source_datacenter of its job (rebuild).
	SourceDC string
	// OperationID is the value of its TaskOperationLabel ("" when it has none).
	OperationID string
	// Started: the operator began it (its status label or status.startTime is set:
	// the label is its first write). Running: its condition Running is True (written
	// before any pod's job starts). Finished: status.completionTime is set (every job
	// ended, well or not).
	Started, Running, Finished bool
	// Complete, Failed: its conditions of those types are True; Message is the Failed
	// condition's message.
	Complete, Failed bool
	Message          string
	// Pods is status.podStatuses: pod -> state (TaskPod*) and error. A restart task
	// keeps none (it rolls the StatefulSets: internal/controllers/control/jobs.go
	// restartSts).
	Pods map[string]TaskPod
}

// TaskPod is one pod's entry in a task's status.
type TaskPod struct {
	Status string
	Error  string
}

// TaskName is the name of the task of command that operation operationID creates:
// derived from the ID alone, so every run of the operation finds the same task.
// Operation IDs are lowercase words, digits and dashes (operation.Planner), so the name
// is a valid object name.
func TaskName(operationID, command string) string {
	return operationID + "-" + command
}
