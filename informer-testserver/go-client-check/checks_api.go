package main

// The API's verbs over protobuf: deletes with options, Status errors, patches, paging, watches,
// the metadata client and an informer.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

const periodicBookmarkCheck = "watch-periodic-bookmark"

func configMap(name string, labels map[string]string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: data}
}

func checkDeleteCollection(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	group := map[string]string{"delete-group": e.suffix}
	for i := 0; i < 3; i++ {
		if _, err := cms.Create(e.ctx, configMap(e.name(fmt.Sprintf("doomed-%d", i)), group, nil), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create: %v", err)
		}
	}
	keeper := e.name("keeper")
	if _, err := cms.Create(e.ctx, configMap(keeper, nil, nil), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create: %v", err)
	}
	selector := "delete-group=" + e.suffix
	background := metav1.DeletePropagationBackground
	if err := cms.DeleteCollection(e.ctx, metav1.DeleteOptions{PropagationPolicy: &background}, metav1.ListOptions{LabelSelector: selector}); err != nil {
		return fmt.Errorf("deletecollection: %v", err)
	}
	left, err := cms.List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("list: %v", err)
	}
	if len(left.Items) != 0 {
		return fmt.Errorf("deletecollection with labelSelector %q left %d of 3 objects", selector, len(left.Items))
	}
	if _, err := cms.Get(e.ctx, keeper, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("deletecollection deleted an object outside the selector: get %s: %v", keeper, err)
	}
	return nil
}

// checkDeleteProtobufBody: client-go sends every delete's DeleteOptions as a body, encoded in
// the client's content type (protobuf here), even when all options are empty.
func checkDeleteProtobufBody(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	name := e.name("plain-delete")
	if _, err := cms.Create(e.ctx, configMap(name, nil, nil), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create: %v", err)
	}
	from := e.rec.mark()
	err := cms.Delete(e.ctx, name, metav1.DeleteOptions{})
	sentType := "?"
	for _, x := range e.rec.since(from, name) {
		if x.Method == "DELETE" {
			sentType = x.RequestType
		}
	}
	if err != nil {
		return fmt.Errorf("DELETE with an empty DeleteOptions body (Content-Type %q): %s", sentType, describe(err))
	}
	if sentType != protobufType {
		return fmt.Errorf("client-go sent the DeleteOptions as %q, not protobuf: this check did not test protobuf", sentType)
	}
	if _, err := cms.Get(e.ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("get after delete: want NotFound, got %v", err)
	}
	return nil
}

// ownerAndDependent creates a ConfigMap and another owned by it.
func ownerAndDependent(e *env, base string) (owner, dependent *corev1.ConfigMap, err error) {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	owner, err = cms.Create(e.ctx, configMap(e.name(base+"-owner"), nil, nil), metav1.CreateOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("create owner: %v", err)
	}
	dep := configMap(e.name(base+"-dependent"), nil, nil)
	dep.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}
	dependent, err = cms.Create(e.ctx, dep, metav1.CreateOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("create dependent: %v", err)
	}
	return owner, dependent, nil
}

// checkDeleteOrphan: the Orphan policy travels in the protobuf DeleteOptions body; had the
// server missed it, the default (background) would delete the dependent.
func checkDeleteOrphan(e *env) error {
	owner, dependent, err := ownerAndDependent(e, "orphan")
	if err != nil {
		return err
	}
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	orphan := metav1.DeletePropagationOrphan
	if err := cms.Delete(e.ctx, owner.Name, metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		return fmt.Errorf("delete owner with propagationPolicy Orphan: %v", err)
	}
	return eventually(5*time.Second, func() error {
		if _, err := cms.Get(e.ctx, owner.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("owner not gone after delete (Orphan): get gives %v", err)
		}
		got, err := cms.Get(e.ctx, dependent.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("dependent gone after its owner was deleted with propagationPolicy Orphan (get: %v)", err)
		}
		if len(got.OwnerReferences) != 0 {
			return fmt.Errorf("dependent kept, but its ownerReferences still name the deleted owner: %v", got.OwnerReferences)
		}
		return nil
	})
}

func checkDeleteBackground(e *env) error {
	owner, dependent, err := ownerAndDependent(e, "background")
	if err != nil {
		return err
	}
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	background := metav1.DeletePropagationBackground
	if err := cms.Delete(e.ctx, owner.Name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		return fmt.Errorf("delete owner with propagationPolicy Background: %v", err)
	}
	return eventually(5*time.Second, func() error {
		if _, err := cms.Get(e.ctx, dependent.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("dependent not collected 5 s after its owner was deleted (Background): get gives %v", err)
		}
		return nil
	})
}

func checkDeletePreconditions(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	created, err := cms.Create(e.ctx, configMap(e.name("guarded"), nil, nil), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create: %v", err)
	}
	wrongUID := types.UID("00000000-0000-4000-8000-000000000000")
	err = cms.Delete(e.ctx, created.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})
	if !apierrors.IsConflict(err) {
		return fmt.Errorf("delete with preconditions.uid %s (not the object's %s): want Conflict, got %v", wrongUID, created.UID, describe(err))
	}
	stale := "1"
	err = cms.Delete(e.ctx, created.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}})
	if !apierrors.IsConflict(err) {
		return fmt.Errorf("delete with preconditions.resourceVersion %q (object at %q): want Conflict, got %v", stale, created.ResourceVersion, describe(err))
	}
	if _, err := cms.Get(e.ctx, created.Name, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("object gone after deletes whose preconditions failed: %v", err)
	}
	uid, rv := created.UID, created.ResourceVersion
	grace := int64(0)
	if err := cms.Delete(e.ctx, created.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}); err != nil {
		return fmt.Errorf("delete with matching preconditions: %v", err)
	}
	if _, err := cms.Get(e.ctx, created.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("get after delete with matching preconditions: want NotFound, got %v", err)
	}
	return nil
}

// describe prints an error with its Status when it has one.
func describe(err error) string {
	if err == nil {
		return "no error"
	}
	if s, ok := err.(apierrors.APIStatus); ok {
		st := s.Status()
		return fmt.Sprintf("%v (code %d, reason %q)", err, st.Code, st.Reason)
	}
	return fmt.Sprintf("%v (%T, not an API Status)", err, err)
}

func statusDetails(err error) *metav1.StatusDetails {
	if s, ok := err.(apierrors.APIStatus); ok {
		return s.Status().Details
	}
	return nil
}

func checkNotFound(e *env) error {
	name := e.name("missing")
	_, err := e.client.CoreV1().ConfigMaps(e.namespace).Get(e.ctx, name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get of a missing object: want NotFound, got %s", describe(err))
	}
	d := statusDetails(err)
	if d == nil || d.Name != name || d.Kind != "configmaps" {
		return fmt.Errorf("status.details: want name %q kind \"configmaps\", got %+v", name, d)
	}
	return nil
}

func checkAlreadyExists(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	cm := configMap(e.name("twice"), nil, nil)
	if _, err := cms.Create(e.ctx, cm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("first create: %v", err)
	}
	_, err := cms.Create(e.ctx, cm, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("second create: want AlreadyExists, got %s", describe(err))
	}
	if d := statusDetails(err); d == nil || d.Name != cm.Name {
		return fmt.Errorf("status.details: want name %q, got %+v", cm.Name, d)
	}
	return nil
}

func checkConflict(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	created, err := cms.Create(e.ctx, configMap(e.name("contended"), nil, map[string]string{"v": "1"}), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create: %v", err)
	}
	first := created.DeepCopy()
	first.Data["v"] = "2"
	if _, err := cms.Update(e.ctx, first, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("first update: %v", err)
	}
	stale := created.DeepCopy()
	stale.Data["v"] = "3"
	_, err = cms.Update(e.ctx, stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		return fmt.Errorf("update with stale resourceVersion %s: want Conflict, got %s", created.ResourceVersion, describe(err))
	}
	return nil
}

// checkErrorStatusProtobuf: kube-apiserver answers errors in the first acceptable type,
// protobuf here; a JSON Status is decoded by client-go too, so the error checks above pass
// either way. This one says which it was.
func checkErrorStatusProtobuf(e *env) error {
	from := e.rec.mark()
	name := e.name("missing-status")
	_, err := e.client.CoreV1().ConfigMaps(e.namespace).Get(e.ctx, name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("want NotFound, got %s", describe(err))
	}
	for _, x := range e.rec.since(from, name) {
		if !strings.HasPrefix(x.ResponseType, protobufType) {
			return fmt.Errorf("the 404 Status came as %q (Accept %q), not protobuf", x.ResponseType, x.Accept)
		}
		return nil
	}
	return fmt.Errorf("no request recorded")
}

func checkPatch(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	created, err := cms.Create(e.ctx, configMap(e.name("patched"), nil, map[string]string{"a": "1"}), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create: %v", err)
	}
	from := e.rec.mark()
	got, err := cms.Patch(e.ctx, created.Name, types.StrategicMergePatchType, []byte(`{"data":{"b":"2"}}`), metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("strategic merge patch: %v", err)
	}
	if err := semantically("data after patch", map[string]string{"a": "1", "b": "2"}, got.Data); err != nil {
		return err
	}
	for _, x := range e.rec.since(from, created.Name) {
		if !strings.HasPrefix(x.ResponseType, protobufType) {
			return fmt.Errorf("PATCH answered with Content-Type %q, not protobuf", x.ResponseType)
		}
	}
	return nil
}

func checkApply(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	name := e.name("applied")
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"owner":"go-check"}}`, name)
	got, err := cms.Patch(e.ctx, name, types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "go-check", Force: boolPtr(true)})
	if err != nil {
		return fmt.Errorf("server-side apply: %v", err)
	}
	if got.Data["owner"] != "go-check" {
		return fmt.Errorf("data after apply: %v", got.Data)
	}
	for _, m := range got.ManagedFields {
		if m.Manager != "go-check" {
			continue
		}
		if m.Operation != metav1.ManagedFieldsOperationApply || m.FieldsType != "FieldsV1" || m.FieldsV1 == nil {
			return fmt.Errorf("managedFields entry of go-check: operation %q fieldsType %q fieldsV1 %v", m.Operation, m.FieldsType, m.FieldsV1)
		}
		if !strings.Contains(string(m.FieldsV1.Raw), `"f:owner"`) {
			return fmt.Errorf("managedFields fieldsV1 of go-check does not name f:data/f:owner: %s", m.FieldsV1.Raw)
		}
		if m.Time == nil || m.Time.IsZero() {
			return fmt.Errorf("managedFields time of go-check is unset")
		}
		return nil
	}
	return fmt.Errorf("no managedFields entry for manager go-check: %+v", got.ManagedFields)
}

func checkListPaging(e *env) error {
	ns := e.namespace + "-paging"
	cms := e.client.CoreV1().ConfigMaps(ns)
	var want []string
	for i := 0; i < 5; i++ {
		name := e.name(fmt.Sprintf("page-%d", i))
		want = append(want, name)
		if _, err := cms.Create(e.ctx, configMap(name, nil, nil), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create: %v", err)
		}
	}
	var got []string
	opts := metav1.ListOptions{Limit: 2}
	for page := 1; ; page++ {
		list, err := cms.List(e.ctx, opts)
		if err != nil {
			return fmt.Errorf("list page %d: %v", page, err)
		}
		if len(list.Items) > 2 {
			return fmt.Errorf("page %d has %d items, limit 2", page, len(list.Items))
		}
		if page == 1 {
			if list.RemainingItemCount == nil || *list.RemainingItemCount != 3 {
				return fmt.Errorf("page 1: remainingItemCount want 3, got %v", int64String(list.RemainingItemCount))
			}
		}
		if list.ResourceVersion == "" {
			return fmt.Errorf("page %d: metadata.resourceVersion empty", page)
		}
		for _, item := range list.Items {
			got = append(got, item.Name)
		}
		if list.Continue == "" {
			break
		}
		if page > 5 {
			return fmt.Errorf("still a continue token after %d pages", page)
		}
		opts.Continue = list.Continue
	}
	sort.Strings(got)
	return sameAs("names over all pages", want, got)
}

func int64String(p *int64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// nextEvent waits for one event, up to timeout.
func nextEvent(w watch.Interface, timeout time.Duration) (watch.Event, error) {
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			return watch.Event{}, fmt.Errorf("watch closed")
		}
		return ev, nil
	case <-time.After(timeout):
		return watch.Event{}, fmt.Errorf("no event within %s", timeout)
	}
}

func expectConfigMapEvent(w watch.Interface, typ watch.EventType, name, value string) error {
	ev, err := nextEvent(w, 10*time.Second)
	if err != nil {
		return fmt.Errorf("waiting for %s of %s: %v", typ, name, err)
	}
	if ev.Type != typ {
		return fmt.Errorf("want %s of %s, got %s %s", typ, name, ev.Type, show(ev.Object))
	}
	cm, ok := ev.Object.(*corev1.ConfigMap)
	if !ok {
		return fmt.Errorf("%s event object is %T, want *v1.ConfigMap: %s", typ, ev.Object, show(ev.Object))
	}
	if cm.Name != name || cm.Data["v"] != value || cm.ResourceVersion == "" {
		return fmt.Errorf("%s event: want %s with data.v %q and a resourceVersion, got %s data %v rv %q", typ, name, value, cm.Name, cm.Data, cm.ResourceVersion)
	}
	return nil
}

func checkWatchEvents(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	selector := "watched=" + e.suffix
	list, err := cms.List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("list: %v", err)
	}
	from := e.rec.mark()
	w, err := cms.Watch(e.ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: list.ResourceVersion})
	if err != nil {
		return fmt.Errorf("watch: %v", err)
	}
	defer w.Stop()
	name := e.name("watched")
	created, err := cms.Create(e.ctx, configMap(name, map[string]string{"watched": e.suffix}, map[string]string{"v": "1"}), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create: %v", err)
	}
	if err := expectConfigMapEvent(w, watch.Added, name, "1"); err != nil {
		return err
	}
	created.Data["v"] = "2"
	if _, err := cms.Update(e.ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update: %v", err)
	}
	if err := expectConfigMapEvent(w, watch.Modified, name, "2"); err != nil {
		return err
	}
	if err := cms.Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete: %v", err)
	}
	if err := expectConfigMapEvent(w, watch.Deleted, name, "2"); err != nil {
		return err
	}
	for _, x := range e.rec.since(from, "watch=true") {
		if !strings.HasPrefix(x.ResponseType, protobufType) || !strings.Contains(x.ResponseType, "stream=watch") {
			return fmt.Errorf("watch answered with Content-Type %q, want %s;stream=watch", x.ResponseType, protobufType)
		}
	}
	return nil
}

// checkInitialEventsBookmark: client-go 1.20's ListOptions has no sendInitialEvents, so the
// parameters go on a raw request; the stream is still decoded by client-go's protobuf watch
// decoder.
func checkInitialEventsBookmark(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	selector := "initial=" + e.suffix
	for i := 0; i < 2; i++ {
		if _, err := cms.Create(e.ctx, configMap(e.name(fmt.Sprintf("initial-%d", i)), map[string]string{"initial": e.suffix}, map[string]string{"v": "1"}), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create: %v", err)
		}
	}
	w, err := e.client.CoreV1().RESTClient().Get().Namespace(e.namespace).Resource("configmaps").
		Param("watch", "true").
		Param("sendInitialEvents", "true").
		Param("resourceVersionMatch", "NotOlderThan").
		Param("allowWatchBookmarks", "true").
		Param("labelSelector", selector).
		Watch(e.ctx)
	if err != nil {
		return fmt.Errorf("watch with sendInitialEvents: %v", err)
	}
	defer w.Stop()
	for i := 0; i < 2; i++ {
		if err := expectConfigMapEvent(w, watch.Added, e.name(fmt.Sprintf("initial-%d", i)), "1"); err != nil {
			return fmt.Errorf("initial event %d: %v", i, err)
		}
	}
	ev, err := nextEvent(w, 10*time.Second)
	if err != nil {
		return fmt.Errorf("waiting for the initial-events-end BOOKMARK: %v", err)
	}
	return checkBookmark(ev, true)
}

func checkBookmark(ev watch.Event, initialEventsEnd bool) error {
	if ev.Type != watch.Bookmark {
		return fmt.Errorf("want BOOKMARK, got %s %s", ev.Type, show(ev.Object))
	}
	cm, ok := ev.Object.(*corev1.ConfigMap)
	if !ok {
		return fmt.Errorf("BOOKMARK object is %T, want *v1.ConfigMap", ev.Object)
	}
	if cm.ResourceVersion == "" {
		return fmt.Errorf("BOOKMARK without metadata.resourceVersion: %s", show(cm))
	}
	if initialEventsEnd && cm.Annotations["k8s.io/initial-events-end"] != "true" {
		return fmt.Errorf("BOOKMARK without annotation k8s.io/initial-events-end: \"true\": %s", show(cm.ObjectMeta))
	}
	return nil
}

// slowBookmark is the periodic-bookmark watch running while the other checks run.
type slowBookmark struct{ done chan error }

func (s *slowBookmark) wait() error { return <-s.done }

// startPeriodicBookmark opens a watch with allowWatchBookmarks and waits up to 70 s for a
// BOOKMARK (kube-apiserver and informer-testserver send one about every minute).
func startPeriodicBookmark(e *env) *slowBookmark {
	s := &slowBookmark{done: make(chan error, 1)}
	go func() {
		ctx, cancel := context.WithTimeout(e.ctx, 100*time.Second)
		defer cancel()
		cms := e.client.CoreV1().ConfigMaps(e.namespace + "-bookmarks")
		list, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			s.done <- fmt.Errorf("list: %v", err)
			return
		}
		timeout := int64(120)
		w, err := cms.Watch(ctx, metav1.ListOptions{AllowWatchBookmarks: true, ResourceVersion: list.ResourceVersion, TimeoutSeconds: &timeout})
		if err != nil {
			s.done <- fmt.Errorf("watch: %v", err)
			return
		}
		defer w.Stop()
		ev, err := nextEvent(w, 70*time.Second)
		if err != nil {
			s.done <- fmt.Errorf("watch with allowWatchBookmarks: %v", err)
			return
		}
		s.done <- checkBookmark(ev, false)
	}()
	return s
}

var configMapsResource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func checkMetadataClient(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	selector := "meta=" + e.suffix
	for i := 0; i < 2; i++ {
		if _, err := cms.Create(e.ctx, configMap(e.name(fmt.Sprintf("meta-%d", i)), map[string]string{"meta": e.suffix}, map[string]string{"big": "payload"}), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create: %v", err)
		}
	}
	client := e.meta.Resource(configMapsResource).Namespace(e.namespace)
	list, err := client.List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("metadata list: %v", err)
	}
	if len(list.Items) != 2 {
		return fmt.Errorf("metadata list: want 2 items, got %d", len(list.Items))
	}
	for _, item := range list.Items {
		if item.UID == "" || item.ResourceVersion == "" || item.Labels["meta"] != e.suffix || item.CreationTimestamp.IsZero() {
			return fmt.Errorf("metadata list item lacks uid/resourceVersion/labels/creationTimestamp: %s", show(item.ObjectMeta))
		}
	}
	one, err := client.Get(e.ctx, e.name("meta-0"), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("metadata get: %v", err)
	}
	if one.Name != e.name("meta-0") {
		return fmt.Errorf("metadata get: got name %q", one.Name)
	}
	w, err := client.Watch(e.ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: list.ResourceVersion})
	if err != nil {
		return fmt.Errorf("metadata watch: %v", err)
	}
	defer w.Stop()
	name := e.name("meta-new")
	if _, err := cms.Create(e.ctx, configMap(name, map[string]string{"meta": e.suffix}, nil), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create: %v", err)
	}
	ev, err := nextEvent(w, 10*time.Second)
	if err != nil {
		return fmt.Errorf("metadata watch: %v", err)
	}
	partial, ok := ev.Object.(*metav1.PartialObjectMetadata)
	if ev.Type != watch.Added || !ok || partial.Name != name {
		return fmt.Errorf("metadata watch: want ADDED PartialObjectMetadata %s, got %s %T %s", name, ev.Type, ev.Object, show(ev.Object))
	}
	return nil
}

// checkMetadataProtobuf: client-go 1.20's metadata client asks for
// "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1"
// first, JSON second. This says which one the server answered.
func checkMetadataProtobuf(e *env) error {
	from := e.rec.mark()
	client := e.meta.Resource(configMapsResource).Namespace(e.namespace)
	list, err := client.List(e.ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("metadata list: %v", err)
	}
	timeout := int64(1)
	w, err := client.Watch(e.ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, TimeoutSeconds: &timeout})
	if err != nil {
		return fmt.Errorf("metadata watch: %v", err)
	}
	w.Stop()
	var problems []string
	for _, x := range e.rec.since(from, "/configmaps") {
		if !strings.HasPrefix(x.ResponseType, protobufType) {
			problems = append(problems, fmt.Sprintf("%s %s answered %q", x.Method, x.URL, x.ResponseType))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("metadata answers were not protobuf: %s", strings.Join(problems, "; "))
	}
	return nil
}

func checkInformer(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	selector := "informed=" + e.suffix
	name := e.name("informed")
	created, err := cms.Create(e.ctx, configMap(name, map[string]string{"informed": e.suffix}, map[string]string{"v": "1"}), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create: %v", err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(e.client, 0,
		informers.WithNamespace(e.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	informer := factory.Core().V1().ConfigMaps()
	updates := make(chan *corev1.ConfigMap, 16)
	informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, newObj interface{}) {
			if cm, ok := newObj.(*corev1.ConfigMap); ok {
				updates <- cm
			}
		},
	})
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	syncCtx, cancel := contextWithTimeout(e, 10*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), informer.Informer().HasSynced) {
		return fmt.Errorf("informer did not sync within 10 s")
	}
	cached, err := informer.Lister().ConfigMaps(e.namespace).Get(name)
	if err != nil || cached.Data["v"] != "1" {
		return fmt.Errorf("lister after sync: want %s with data.v \"1\", got %v, %v", name, cached, err)
	}
	created.Data["v"] = "2"
	if _, err := cms.Update(e.ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update: %v", err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case cm := <-updates:
			if cm.Name == name && cm.Data["v"] == "2" {
				cached, err := informer.Lister().ConfigMaps(e.namespace).Get(name)
				if err != nil || cached.Data["v"] != "2" {
					return fmt.Errorf("lister after the update event: %v, %v", cached, err)
				}
				return nil
			}
		case <-deadline:
			return fmt.Errorf("no update event with data.v \"2\" within 10 s")
		}
	}
}
