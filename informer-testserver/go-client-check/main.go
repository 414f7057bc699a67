// Command informer-protobuf-check runs client-go, speaking protobuf as kube-controller-manager
// does, against a Kubernetes API server (meant for informer-testserver) and prints one
// PASS/FAIL/SKIP line per check. It exits 1 when a check fails.
//
// It is built inside the Kubernetes 1.20 source tree (see run.sh), so it uses client-go 1.20.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

const (
	protobufType = "application/vnd.kubernetes.protobuf"
	acceptTypes  = "application/vnd.kubernetes.protobuf,application/json"
)

// exchange is one HTTP request and its answer's status and content type.
type exchange struct {
	Method, URL, RequestType, Accept string
	Status                           int
	ResponseType                     string
}

// recorder is a RoundTripper recording every exchange, so checks can tell whether an answer
// really was protobuf.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	log  []exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	e := exchange{
		Method:      req.Method,
		URL:         req.URL.RequestURI(),
		RequestType: req.Header.Get("Content-Type"),
		Accept:      req.Header.Get("Accept"),
	}
	if resp != nil {
		e.Status = resp.StatusCode
		e.ResponseType = resp.Header.Get("Content-Type")
	}
	r.mu.Lock()
	r.log = append(r.log, e)
	r.mu.Unlock()
	return resp, err
}

// since returns the exchanges recorded from position `from` on whose URL contains `part`.
func (r *recorder) since(from int, part string) []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []exchange
	for _, e := range r.log[from:] {
		if strings.Contains(e.URL, part) {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.log)
}

// env is what every check gets: clients, the recorder and names unique to this run.
type env struct {
	ctx       context.Context
	cfg       *rest.Config
	client    kubernetes.Interface
	meta      metadata.Interface
	rec       *recorder
	namespace string
	suffix    string
	dumpFull  bool
}

// name gives an object name unique to this run.
func (e *env) name(base string) string { return base + "-" + e.suffix }

// skipError marks a check that cannot run against client-go 1.20.
type skipError struct{ reason string }

func (s skipError) Error() string { return s.reason }

func skip(format string, args ...interface{}) error {
	return skipError{fmt.Sprintf(format, args...)}
}

// check is one named, independent check.
type check struct {
	name string
	run  func(e *env) error
}

func main() {
	server := flag.String("server", "", "the API server's URL, e.g. http://127.0.0.1:PORT (required)")
	only := flag.String("run", "", "run only the checks whose name matches this regular expression")
	skipSlow := flag.Bool("skip-slow", false, "skip the check waiting up to 70 s for a periodic watch bookmark")
	dumpFull := flag.Bool("dump-full", false, "print the whole hex dump of the Pod's protobuf answer, not the first 256 bytes")
	list := flag.Bool("list", false, "list the checks and exit")
	flag.Parse()

	checks := allChecks()
	if *list {
		for _, c := range checks {
			fmt.Println(c.name)
		}
		return
	}
	if *server == "" {
		fmt.Fprintln(os.Stderr, "informer-protobuf-check: -server URL is required")
		os.Exit(2)
	}
	var filter *regexp.Regexp
	if *only != "" {
		filter = regexp.MustCompile(*only)
	}

	rec := &recorder{}
	// No rest.Config.Timeout: it would cut watches; each check has a deadline instead.
	cfg := &rest.Config{Host: *server}
	cfg.ContentType = protobufType
	cfg.AcceptContentTypes = acceptTypes
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		rec.next = rt
		return rec
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "informer-protobuf-check: failed to build the clientset: %v\n", err)
		os.Exit(2)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "informer-protobuf-check: failed to build the metadata client: %v\n", err)
		os.Exit(2)
	}
	rand.Seed(time.Now().UnixNano())
	suffix := fmt.Sprintf("%05d", rand.Intn(100000))
	e := &env{
		ctx:       context.Background(),
		cfg:       cfg,
		client:    client,
		meta:      meta,
		rec:       rec,
		namespace: "go-check-" + suffix,
		suffix:    suffix,
		dumpFull:  *dumpFull,
	}

	// Namespaces must exist, as on kube-apiserver: create those the checks write into.
	for _, ns := range []string{e.namespace, e.namespace + "-paging"} {
		namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if _, err := client.CoreV1().Namespaces().Create(e.ctx, namespace, metav1.CreateOptions{}); err != nil {
			fmt.Fprintf(os.Stderr, "informer-protobuf-check: failed to create the namespace %s: %v\n", ns, err)
			os.Exit(2)
		}
	}

	// The periodic bookmark takes up to a minute: start it first, collect it last.
	var slow *slowBookmark
	if !*skipSlow && (filter == nil || filter.MatchString(periodicBookmarkCheck)) {
		slow = startPeriodicBookmark(e)
	}

	var passed, failed, skipped []string
	report := func(name string, err error) {
		switch err.(type) {
		case nil:
			passed = append(passed, name)
			fmt.Printf("PASS %s\n", name)
		case skipError:
			skipped = append(skipped, name)
			fmt.Printf("SKIP %s: %v\n", name, err)
		default:
			failed = append(failed, name)
			fmt.Printf("FAIL %s: %v\n", name, err)
		}
	}
	for _, c := range checks {
		if filter != nil && !filter.MatchString(c.name) {
			continue
		}
		report(c.name, runGuarded(c, e))
	}
	if slow != nil {
		report(periodicBookmarkCheck, slow.wait())
	} else if *skipSlow && (filter == nil || filter.MatchString(periodicBookmarkCheck)) {
		report(periodicBookmarkCheck, skip("-skip-slow given"))
	}

	fmt.Printf("\n%d passed, %d failed, %d skipped\n", len(passed), len(failed), len(skipped))
	if len(failed) > 0 {
		fmt.Printf("failed: %s\n", strings.Join(failed, ", "))
		os.Exit(1)
	}
}

// checkDeadline bounds each check's requests.
const checkDeadline = 60 * time.Second

// runGuarded runs a check with its own deadline, turning a panic into its failure.
func runGuarded(c check, shared *env) (err error) {
	e := *shared
	ctx, cancel := context.WithTimeout(shared.ctx, checkDeadline)
	defer cancel()
	e.ctx = ctx
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panicked: %v", p)
		}
	}()
	return c.run(&e)
}

func allChecks() []check {
	return append([]check{
		{"client-speaks-protobuf", checkClientSpeaksProtobuf},
		{"delete-protobuf-body", checkDeleteProtobufBody},
		{"configmap-crud", checkConfigMapCRUD},
		{"configmap-secret-bytes", checkBytesRoundTrip},
		{"deletecollection-by-label", checkDeleteCollection},
		{"delete-propagation-orphan", checkDeleteOrphan},
		{"delete-propagation-background", checkDeleteBackground},
		{"delete-preconditions", checkDeletePreconditions},
		{"pod-volumes-downwardapi-projected", checkPodVolumes},
		{"pod-tolerations-zero-seconds", checkPodTolerations},
		{"pod-security-context-false-zero", checkPodSecurityContext},
		{"pod-spec-zero-pointers", checkPodSpecPointers},
		{"pod-resources-quantity", checkPodResources},
		{"pod-probe-intorstring", checkPodProbes},
		{"pod-status-condition-times", checkPodStatusTimes},
		{"owner-references-false-flags", checkOwnerReferences},
		{"lease-zero-pointers", checkLeaseZeroPointers},
		{"lease-microtime", checkLeaseMicroTime},
		{"pvc-empty-storage-class", checkPVCStorageClass},
		{"clusterrole-nonresourceurls", checkClusterRole},
		{"csinode-driver-nodeid", checkCSINode},
		{"deployment-zero-replicas-intorstring", checkDeployment},
		{"job-zero-pointers", checkJob},
		{"service-ports-pointers", checkService},
		{"controllerrevision-rawextension", checkControllerRevision},
		{"time-fields", checkTimeFields},
		{"error-not-found", checkNotFound},
		{"error-already-exists", checkAlreadyExists},
		{"error-conflict", checkConflict},
		{"error-status-is-protobuf", checkErrorStatusProtobuf},
		{"patch-strategic-merge", checkPatch},
		{"apply-server-side", checkApply},
		{"list-limit-continue", checkListPaging},
		{"watch-added-modified-deleted", checkWatchEvents},
		{"watch-initial-events-bookmark", checkInitialEventsBookmark},
		{"metadata-client-list-watch", checkMetadataClient},
		{"metadata-client-protobuf-answers", checkMetadataProtobuf},
		{"informer-sync-and-update", checkInformer},
		{"wire-pod-object", checkPodWire},
		{"wire-list", checkListWire},
		{"wire-watch-frames", checkWatchWire},
	}, auditChecks()...)
}
