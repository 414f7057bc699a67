package main

// The zero-pointer audit: for each served kind, an object whose every pointer-to-scalar field
// (at any depth, one element in every list of objects) is set to its zero value — false, 0 or
// "" — is created over protobuf and read back. Each such field that comes back absent is
// listed. Go's protobuf encoding sends these zeros and a Go client tells them from unset
// (nil), so kube-apiserver keeps them. The objects are not valid specs (every member of every
// one-of is set); the server under test does not validate specs, and only the wire matters.

import (
	"fmt"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
)

// auditKind is one kind the audit creates and reads back.
type auditKind struct {
	group, kind, resource string
	namespaced            bool
	object                runtime.Object
	client                func(e *env) rest.Interface
}

func auditKinds() []auditKind {
	core := func(e *env) rest.Interface { return e.client.CoreV1().RESTClient() }
	apps := func(e *env) rest.Interface { return e.client.AppsV1().RESTClient() }
	batch := func(e *env) rest.Interface { return e.client.BatchV1().RESTClient() }
	coordination := func(e *env) rest.Interface { return e.client.CoordinationV1().RESTClient() }
	events := func(e *env) rest.Interface { return e.client.EventsV1().RESTClient() }
	rbac := func(e *env) rest.Interface { return e.client.RbacV1().RESTClient() }
	return []auditKind{
		{"core", "Pod", "pods", true, &corev1.Pod{}, core},
		{"core", "Service", "services", true, &corev1.Service{}, core},
		{"core", "Secret", "secrets", true, &corev1.Secret{}, core},
		{"core", "ConfigMap", "configmaps", true, &corev1.ConfigMap{}, core},
		{"core", "Node", "nodes", false, &corev1.Node{}, core},
		{"core", "Event", "events", true, &corev1.Event{}, core},
		{"core", "ServiceAccount", "serviceaccounts", true, &corev1.ServiceAccount{}, core},
		{"core", "Endpoints", "endpoints", true, &corev1.Endpoints{}, core},
		{"core", "PersistentVolume", "persistentvolumes", false, &corev1.PersistentVolume{}, core},
		{"core", "PersistentVolumeClaim", "persistentvolumeclaims", true, &corev1.PersistentVolumeClaim{}, core},
		{"core", "ReplicationController", "replicationcontrollers", true, &corev1.ReplicationController{}, core},
		{"core", "ResourceQuota", "resourcequotas", true, &corev1.ResourceQuota{}, core},
		{"core", "LimitRange", "limitranges", true, &corev1.LimitRange{}, core},
		{"core", "PodTemplate", "podtemplates", true, &corev1.PodTemplate{}, core},
		{"apps", "Deployment", "deployments", true, &appsv1.Deployment{}, apps},
		{"apps", "ReplicaSet", "replicasets", true, &appsv1.ReplicaSet{}, apps},
		{"apps", "StatefulSet", "statefulsets", true, &appsv1.StatefulSet{}, apps},
		{"apps", "DaemonSet", "daemonsets", true, &appsv1.DaemonSet{}, apps},
		{"batch", "Job", "jobs", true, &batchv1.Job{}, batch},
		{"coordination.k8s.io", "Lease", "leases", true, &coordinationv1.Lease{}, coordination},
		{"events.k8s.io", "Event", "events", true, &eventsv1.Event{}, events},
		{"rbac.authorization.k8s.io", "Role", "roles", true, &rbacv1.Role{}, rbac},
		{"rbac.authorization.k8s.io", "RoleBinding", "rolebindings", true, &rbacv1.RoleBinding{}, rbac},
		{"rbac.authorization.k8s.io", "ClusterRole", "clusterroles", false, &rbacv1.ClusterRole{}, rbac},
		{"rbac.authorization.k8s.io", "ClusterRoleBinding", "clusterrolebindings", false, &rbacv1.ClusterRoleBinding{}, rbac},
	}
}

func auditChecks() []check {
	var out []check
	for _, k := range auditKinds() {
		k := k
		out = append(out, check{"zero-pointers/" + k.group + "/" + k.kind, func(e *env) error { return auditZeroPointers(e, k) }})
	}
	return out
}

var (
	skippedTypes = map[reflect.Type]bool{
		reflect.TypeOf(metav1.TypeMeta{}):      true,
		reflect.TypeOf(metav1.ObjectMeta{}):    true,
		reflect.TypeOf(metav1.Time{}):          true,
		reflect.TypeOf(metav1.MicroTime{}):     true,
		reflect.TypeOf(metav1.Duration{}):      true,
		reflect.TypeOf(metav1.FieldsV1{}):      true,
		reflect.TypeOf(resource.Quantity{}):    true,
		reflect.TypeOf(intstr.IntOrString{}):   true,
		reflect.TypeOf(runtime.RawExtension{}): true,
	}
)

// fillZeroPointers sets every pointer-to-scalar field under v to a zero value, allocating
// pointers to structs and one element of lists of structs on the way.
// refusedZeroPointers are the pointer fields whose zero value kube-apiserver's admission
// refuses: they are left nil.
var refusedZeroPointers = map[string]bool{"RuntimeClassName": true}

func fillZeroPointers(v reflect.Value, depth int) int {
	if depth > 12 {
		return 0
	}
	count := 0
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if sf.PkgPath != "" || sf.Tag.Get("protobuf") == "" {
			continue
		}
		if depth == 0 && sf.Name == "Status" {
			continue
		}
		// kube-apiserver's RuntimeClass admission refuses a pod naming the RuntimeClass ""
		if refusedZeroPointers[sf.Name] {
			continue
		}
		f := v.Field(i)
		ft := sf.Type
		switch {
		case ft.Kind() == reflect.Ptr && isScalar(ft.Elem()):
			f.Set(reflect.New(ft.Elem()))
			count++
		case ft.Kind() == reflect.Ptr && ft.Elem().Kind() == reflect.Struct && !skippedTypes[ft.Elem()]:
			p := reflect.New(ft.Elem())
			count += fillZeroPointers(p.Elem(), depth+1)
			f.Set(p)
		case ft.Kind() == reflect.Struct && !skippedTypes[ft]:
			count += fillZeroPointers(f, depth+1)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && !skippedTypes[ft.Elem()]:
			s := reflect.MakeSlice(ft, 1, 1)
			count += fillZeroPointers(s.Index(0), depth+1)
			f.Set(s)
		}
	}
	return count
}

func isScalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Int32, reflect.Int64, reflect.Int, reflect.Float64:
		return true
	}
	return false
}

func auditZeroPointers(e *env, k auditKind) error {
	sent := k.object.DeepCopyObject()
	v := reflect.ValueOf(sent).Elem()
	pointers := fillZeroPointers(v, 0)
	meta := v.FieldByName("ObjectMeta").Addr().Interface().(*metav1.ObjectMeta)
	meta.Name = e.name("zero-" + strings.ToLower(k.kind))
	if k.namespaced {
		meta.Namespace = e.namespace
	}
	client := k.client(e)
	create := client.Post().Resource(k.resource).Body(sent)
	get := client.Get().Resource(k.resource).Name(meta.Name)
	if k.namespaced {
		create = create.Namespace(e.namespace)
		get = get.Namespace(e.namespace)
	}
	if err := create.Do(e.ctx).Error(); err != nil {
		return fmt.Errorf("create %s with %d zero pointer fields: %s", k.kind, pointers, describe(err))
	}
	got := k.object.DeepCopyObject()
	if err := get.Do(e.ctx).Into(got); err != nil {
		return fmt.Errorf("get: %s", describe(err))
	}
	sentParts, gotParts := topFields(v), topFields(reflect.ValueOf(got).Elem())
	// semantic equality: a quantity read back carries its text, which the one sent lacks
	if equality.Semantic.DeepEqual(sentParts, gotParts) {
		return nil
	}
	diffs := notDefaulted(jsonDiff(sentParts, gotParts))
	if len(diffs) == 0 {
		return nil
	}
	total := len(diffs)
	// A pod template holds a PodSpec: its findings are zero-pointers/core/Pod's.
	var own []string
	inTemplate := 0
	for _, d := range diffs {
		if strings.HasPrefix(d, "spec.template.spec.") || strings.HasPrefix(d, "template.spec.") {
			inTemplate++
			continue
		}
		own = append(own, d)
	}
	if inTemplate > 0 {
		own = append(own, fmt.Sprintf("... and %d in the pod template's spec: the PodSpec fields zero-pointers/core/Pod lists", inTemplate))
	}
	return fmt.Errorf("%d differences (%d zero pointer fields were sent):\n    %s", total, pointers, strings.Join(own, "\n    "))
}

// topFields maps the JSON names of an object's fields to their values, leaving out the type,
// metadata and status.
func topFields(v reflect.Value) map[string]interface{} {
	out := map[string]interface{}{}
	for i := 0; i < v.NumField(); i++ {
		sf := v.Type().Field(i)
		if sf.Name == "TypeMeta" || sf.Name == "ObjectMeta" || sf.Name == "Status" {
			continue
		}
		out[strings.Split(sf.Tag.Get("json"), ",")[0]] = v.Field(i).Interface()
	}
	return out
}
