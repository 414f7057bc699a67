package main

// The server's protobuf frames as bytes: an object, a list and watch frames, read field by
// field (wire.go) and decoded by Go's generated Unmarshal.

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func contextWithTimeout(e *env, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(e.ctx, d)
}

// richPod is a pod with every feature the pod checks use.
func richPod(name string, labels map[string]string) *corev1.Pod {
	pod := basePod(name)
	pod.Labels = labels
	addVolumes(pod)
	addTolerations(pod)
	addSecurityContexts(pod)
	c := &pod.Spec.Containers[0]
	c.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
	}
	c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
	c.LivenessProbe = &corev1.Probe{Handler: corev1.Handler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}, PeriodSeconds: 10}
	c.ReadinessProbe = &corev1.Probe{Handler: corev1.Handler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(8080)}}}
	pod.Spec.TerminationGracePeriodSeconds = int64Ptr(0)
	pod.Spec.EnableServiceLinks = boolPtr(false)
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: types.UID("6c1f8a52-0000-4000-8000-000000000001"), Controller: boolPtr(true), BlockOwnerDeletion: boolPtr(false)}}
	return pod
}

// createRichPod creates a rich pod and gives it a kubelet's status.
func createRichPod(e *env, name string, labels map[string]string) (*corev1.Pod, error) {
	pods := e.client.CoreV1().Pods(e.namespace)
	created, err := pods.Create(e.ctx, richPod(name, labels), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create pod: %v", err)
	}
	created.Status = kubeletStatus()
	updated, err := pods.UpdateStatus(e.ctx, created, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update pod status: %v", err)
	}
	return updated, nil
}

func wireProblems(what string, w *wireWalk) error {
	if len(w.problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %d problem(s) in the bytes:\n    %s", what, len(w.problems), strings.Join(w.problems, "\n    "))
}

// checkPodWire gets one pod as raw protobuf, prints the bytes, the fields as read and the pod
// Go decodes, and fails on any field Go's types do not know or read differently.
func checkPodWire(e *env) error {
	name := e.name("wire")
	if _, err := createRichPod(e, name, map[string]string{"app": "wire"}); err != nil {
		return err
	}
	from := e.rec.mark()
	raw, err := e.client.CoreV1().RESTClient().Get().Namespace(e.namespace).Resource("pods").Name(name).
		SetHeader("Accept", protobufType).DoRaw(e.ctx)
	if err != nil {
		return fmt.Errorf("raw get: %v", err)
	}
	for _, x := range e.rec.since(from, name) {
		if x.ResponseType != protobufType {
			return fmt.Errorf("answered Content-Type %q to Accept %q", x.ResponseType, x.Accept)
		}
	}
	w := &wireWalk{}
	unk := w.walkEnvelope(raw, "")
	var pod *corev1.Pod
	if unk != nil {
		if unk.APIVersion != "v1" || unk.Kind != "Pod" {
			w.problem("Unknown.typeMeta", "apiVersion %q kind %q, want v1 Pod", unk.APIVersion, unk.Kind)
		}
		pod = &corev1.Pod{}
		if err := pod.Unmarshal(unk.Raw); err != nil {
			w.problem("Pod", "Go's Unmarshal fails: %v", err)
			pod = nil
		}
	}
	printDump("pod "+name+" as the server sent it (GET, Accept: "+protobufType+")", raw, e.dumpFull, w, pod)
	if pod != nil {
		typed, err := e.client.CoreV1().Pods(e.namespace).Get(e.ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("typed get: %v", err)
		}
		if !reflect.DeepEqual(typed.Spec, pod.Spec) {
			w.problem("Pod", "the raw bytes decode to another spec than the typed client's get: %v", jsonDiff(typed.Spec, pod.Spec))
		}
	}
	return wireProblems("pod "+name, w)
}

func checkListWire(e *env) error {
	selector := "wire-list=" + e.suffix
	for i := 0; i < 2; i++ {
		if _, err := createRichPod(e, e.name(fmt.Sprintf("wire-list-%d", i)), map[string]string{"wire-list": e.suffix}); err != nil {
			return err
		}
	}
	raw, err := e.client.CoreV1().RESTClient().Get().Namespace(e.namespace).Resource("pods").
		Param("labelSelector", selector).SetHeader("Accept", protobufType).DoRaw(e.ctx)
	if err != nil {
		return fmt.Errorf("raw list: %v", err)
	}
	w := &wireWalk{}
	unk := w.walkEnvelope(raw, "")
	if unk != nil {
		if unk.APIVersion != "v1" || unk.Kind != "PodList" {
			w.problem("Unknown.typeMeta", "apiVersion %q kind %q, want v1 PodList", unk.APIVersion, unk.Kind)
		}
		var list corev1.PodList
		if err := list.Unmarshal(unk.Raw); err != nil {
			w.problem("PodList", "Go's Unmarshal fails: %v", err)
		} else if len(list.Items) != 2 || list.ResourceVersion == "" {
			w.problem("PodList", "want 2 items and metadata.resourceVersion, got %d items, resourceVersion %q", len(list.Items), list.ResourceVersion)
		}
	}
	return wireProblems("pod list", w)
}

// checkWatchFrames reads a protobuf watch stream as bytes: length-prefixed frames, each a
// metav1.WatchEvent whose object is magic + runtime.Unknown + the object.
func checkWatchWire(e *env) error {
	selector := "wire-watch=" + e.suffix
	pods := e.client.CoreV1().Pods(e.namespace)
	list, err := pods.List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("list: %v", err)
	}
	ctx, cancel := contextWithTimeout(e, 15*time.Second)
	defer cancel()
	from := e.rec.mark()
	stream, err := e.client.CoreV1().RESTClient().Get().Namespace(e.namespace).Resource("pods").
		Param("watch", "true").Param("resourceVersion", list.ResourceVersion).Param("labelSelector", selector).
		Stream(ctx)
	if err != nil {
		return fmt.Errorf("raw watch: %v", err)
	}
	defer stream.Close()
	for _, x := range e.rec.since(from, "watch=true") {
		if x.ResponseType != protobufType+";stream=watch" {
			return fmt.Errorf("watch answered Content-Type %q to Accept %q, want %s;stream=watch", x.ResponseType, x.Accept, protobufType)
		}
	}
	name := e.name("wire-watch")
	created, err := createRichPod(e, name, map[string]string{"wire-watch": e.suffix})
	if err != nil {
		return err
	}
	// A failing delete (see delete-protobuf-body) still leaves two frames to read.
	deleteErr := pods.Delete(e.ctx, created.Name, metav1.DeleteOptions{})
	want := 3
	if deleteErr != nil {
		want = 2
	}
	frames, err := readFrames(stream, want)
	w := &wireWalk{}
	wantTypes := []string{"ADDED", "MODIFIED", "DELETED"}
	for i, frame := range frames {
		if len(frame) >= 4 && string(frame[:4]) == string(protobufMagic) {
			w.problem(fmt.Sprintf("frame %d", i), "starts with the magic k8s\\x00: stream frames are bare WatchEvent messages")
			continue
		}
		w.walkMessage(frame, reflect.TypeOf(metav1.WatchEvent{}), fmt.Sprintf("frame %d (WatchEvent)", i))
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(frame); err != nil {
			w.problem(fmt.Sprintf("frame %d", i), "Go's WatchEvent Unmarshal fails: %v", err)
			continue
		}
		if ev.Type != wantTypes[i] {
			w.problem(fmt.Sprintf("frame %d", i), "type %q, want %q", ev.Type, wantTypes[i])
		}
	}
	if err != nil {
		return fmt.Errorf("%v (after %d frames)%s", err, len(frames), problemsSuffix(w))
	}
	if deleteErr != nil {
		return fmt.Errorf("delete failed, so no DELETED frame to read: %s%s", describe(deleteErr), problemsSuffix(w))
	}
	return wireProblems("watch frames", w)
}

func problemsSuffix(w *wireWalk) string {
	if len(w.problems) == 0 {
		return ""
	}
	return "; and:\n    " + strings.Join(w.problems, "\n    ")
}
