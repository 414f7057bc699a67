package main

// Round trips: an object created over protobuf comes back, over protobuf, with the fields
// that were set. Zero values of pointer fields (tolerationSeconds: 0, runAsNonRoot: false,
// storageClassName: "") are the sharp edge: Go's protobuf encoding sends them, and they must
// come back set, not absent.

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// semantically compares with apimachinery's semantic equality (quantities by value, times by
// instant, nil and empty lists alike, which protobuf cannot tell apart), then lists the
// differing JSON paths.
func semantically(what string, sent, got interface{}) error {
	if equality.Semantic.DeepEqual(sent, got) {
		return nil
	}
	return sameAs(what, sent, got)
}

func checkClientSpeaksProtobuf(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	from := e.rec.mark()
	name := e.name("speaks")
	if _, err := cms.Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create: %v", err)
	}
	if _, err := cms.Get(e.ctx, name, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("get: %v", err)
	}
	var problems []string
	for _, x := range e.rec.since(from, "/configmaps") {
		if x.Method == "POST" && x.RequestType != protobufType {
			problems = append(problems, fmt.Sprintf("POST %s sent Content-Type %q", x.URL, x.RequestType))
		}
		if !strings.HasPrefix(x.ResponseType, protobufType) {
			problems = append(problems, fmt.Sprintf("%s %s (Accept %q) answered %d with Content-Type %q, want %s", x.Method, x.URL, x.Accept, x.Status, x.ResponseType, protobufType))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

func checkConfigMapCRUD(e *env) error {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	sent := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:        e.name("crud"),
			Labels:      map[string]string{"app": "crud"},
			Annotations: map[string]string{"note": "protobuf"},
		},
		Data: map[string]string{"mode": "fast", "empty": ""},
	}
	created, err := cms.Create(e.ctx, sent, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create: %v", err)
	}
	if created.UID == "" || created.ResourceVersion == "" {
		return fmt.Errorf("create answered uid %q resourceVersion %q, want both set", created.UID, created.ResourceVersion)
	}
	if err := semantically("created data", sent.Data, created.Data); err != nil {
		return err
	}
	got, err := cms.Get(e.ctx, sent.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get: %v", err)
	}
	if err := semantically("data", sent.Data, got.Data); err != nil {
		return err
	}
	if err := semantically("labels", sent.Labels, got.Labels); err != nil {
		return err
	}
	if err := semantically("annotations", sent.Annotations, got.Annotations); err != nil {
		return err
	}
	got.Data = map[string]string{"mode": "slow"}
	updated, err := cms.Update(e.ctx, got, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update: %v", err)
	}
	if updated.ResourceVersion == got.ResourceVersion {
		return fmt.Errorf("update kept resourceVersion %q", got.ResourceVersion)
	}
	reread, err := cms.Get(e.ctx, sent.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get after update: %v", err)
	}
	if err := semantically("data after update", got.Data, reread.Data); err != nil {
		return err
	}
	if err := cms.Delete(e.ctx, sent.Name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete: %v", err)
	}
	if _, err := cms.Get(e.ctx, sent.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("get after delete: want NotFound, got %v", err)
	}
	return nil
}

func checkBytesRoundTrip(e *env) error {
	binary := []byte{0, 1, 2, 0xfe, 0xff, '\n', 0}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: e.name("bytes")},
		BinaryData: map[string][]byte{"blob": binary},
		Immutable:  boolPtr(false),
	}
	got, err := createAndGetConfigMap(e, cm)
	if err != nil {
		return err
	}
	if err := semantically("configmap binaryData and immutable", []interface{}{cm.BinaryData, cm.Immutable}, []interface{}{got.BinaryData, got.Immutable}); err != nil {
		return err
	}
	secrets := e.client.CoreV1().Secrets(e.namespace)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: e.name("bytes")},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"blob": binary, "text": []byte("hunter2")},
	}
	if _, err := secrets.Create(e.ctx, secret, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create secret: %v", err)
	}
	gotSecret, err := secrets.Get(e.ctx, secret.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get secret: %v", err)
	}
	return semantically("secret data and type", []interface{}{secret.Data, secret.Type}, []interface{}{gotSecret.Data, gotSecret.Type})
}

func createAndGetConfigMap(e *env, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	cms := e.client.CoreV1().ConfigMaps(e.namespace)
	if _, err := cms.Create(e.ctx, cm, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create: %v", err)
	}
	got, err := cms.Get(e.ctx, cm.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get: %v", err)
	}
	return got, nil
}

// basePod is a minimal pod the pod checks add to.
func basePod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "go-check"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36", Command: []string{"sleep", "3600"}}},
		},
	}
}

func createAndGetPod(e *env, pod *corev1.Pod) (*corev1.Pod, error) {
	pods := e.client.CoreV1().Pods(e.namespace)
	if _, err := pods.Create(e.ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create pod: %v", err)
	}
	got, err := pods.Get(e.ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get pod: %v", err)
	}
	return got, nil
}

func checkPodVolumes(e *env) error {
	pod := basePod(e.name("volumes"))
	addVolumes(pod)
	// without the token volume the ServiceAccount admission plugin would add to the list
	pod.Spec.AutomountServiceAccountToken = boolPtr(false)
	got, err := createAndGetPod(e, pod)
	if err != nil {
		return err
	}
	if err := semantically("spec.volumes", pod.Spec.Volumes, got.Spec.Volumes); err != nil {
		return err
	}
	return semantically("spec.containers[0].volumeMounts", pod.Spec.Containers[0].VolumeMounts, got.Spec.Containers[0].VolumeMounts)
}

// addVolumes adds a downwardAPI, a projected, an emptyDir and a configMap volume.
func addVolumes(pod *corev1.Pod) {
	divisor := resource.MustParse("1m")
	sizeLimit := resource.MustParse("64Mi")
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels"}},
				{Path: "cpu_limit", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "main", Resource: "limits.cpu", Divisor: divisor}},
				{Path: "name", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}, Mode: int32Ptr(0400)},
			},
			DefaultMode: int32Ptr(0644),
		}}},
		{Name: "all-in-one", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: "settings"},
					Items:                []corev1.KeyToPath{{Key: "mode", Path: "mode.txt", Mode: int32Ptr(0)}},
					Optional:             boolPtr(false),
				}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Optional: boolPtr(true)}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}},
				}}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "vault", ExpirationSeconds: int64Ptr(3600), Path: "token"}},
			},
			DefaultMode: int32Ptr(0440),
		}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &sizeLimit}}},
		{Name: "settings", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "settings"},
			DefaultMode:          int32Ptr(0420),
			Optional:             boolPtr(false),
		}}},
	}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "podinfo", MountPath: "/etc/podinfo", ReadOnly: true},
		{Name: "all-in-one", MountPath: "/projected"},
	}
}

func checkPodTolerations(e *env) error {
	pod := basePod(e.name("tolerations"))
	addTolerations(pod)
	got, err := createAndGetPod(e, pod)
	if err != nil {
		return err
	}
	return semantically("spec.tolerations", pod.Spec.Tolerations, got.Spec.Tolerations)
}

// addTolerations adds tolerations, one with tolerationSeconds 0.
func addTolerations(pod *corev1.Pod) {
	pod.Spec.Tolerations = []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: int64Ptr(0)},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: int64Ptr(300)},
		{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule},
		{Operator: corev1.TolerationOpExists},
	}
}

func checkPodSecurityContext(e *env) error {
	pod := basePod(e.name("security"))
	addSecurityContexts(pod)
	got, err := createAndGetPod(e, pod)
	if err != nil {
		return err
	}
	if err := semantically("spec.containers[0].securityContext", pod.Spec.Containers[0].SecurityContext, got.Spec.Containers[0].SecurityContext); err != nil {
		return err
	}
	return semantically("spec.securityContext", pod.Spec.SecurityContext, got.Spec.SecurityContext)
}

// addSecurityContexts adds pod and container security contexts with false and zero pointers.
func addSecurityContexts(pod *corev1.Pod) {
	procMount := corev1.DefaultProcMount
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
		RunAsNonRoot:             boolPtr(false),
		RunAsUser:                int64Ptr(0),
		RunAsGroup:               int64Ptr(0),
		Privileged:               boolPtr(false),
		AllowPrivilegeEscalation: boolPtr(false),
		ReadOnlyRootFilesystem:   boolPtr(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"}},
		ProcMount:                &procMount,
	}
	policy := corev1.FSGroupChangeAlways
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsNonRoot:        boolPtr(false),
		RunAsUser:           int64Ptr(0),
		RunAsGroup:          int64Ptr(0),
		FSGroup:             int64Ptr(0),
		SupplementalGroups:  []int64{0, 1000},
		FSGroupChangePolicy: &policy,
		SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		Sysctls:             []corev1.Sysctl{{Name: "net.ipv4.ping_group_range", Value: "0 2147483647"}},
	}
}

func checkPodSpecPointers(e *env) error {
	pod := basePod(e.name("pointers"))
	preemption := corev1.PreemptNever
	pod.Spec.TerminationGracePeriodSeconds = int64Ptr(0)
	pod.Spec.AutomountServiceAccountToken = boolPtr(false)
	pod.Spec.EnableServiceLinks = boolPtr(false)
	pod.Spec.ShareProcessNamespace = boolPtr(false)
	pod.Spec.SetHostnameAsFQDN = boolPtr(false)
	pod.Spec.Priority = int32Ptr(0)
	pod.Spec.PreemptionPolicy = &preemption
	pod.Spec.DNSConfig = &corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: stringPtr("1")}, {Name: "edns0"}}}
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
	pod.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "EMPTY", Value: ""},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
		{Name: "OPTIONAL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "mode", Optional: boolPtr(false),
		}}},
	}
	got, err := createAndGetPod(e, pod)
	if err != nil {
		return err
	}
	return semantically("spec", pod.Spec, got.Spec)
}

func checkPodResources(e *env) error {
	pod := basePod(e.name("resources"))
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:              resource.MustParse("100m"),
			corev1.ResourceMemory:           resource.MustParse("64Mi"),
			corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("1"),
			corev1.ResourceMemory: resource.MustParse("128Mi"),
			"example.com/dongle":  resource.MustParse("0"),
		},
	}
	got, err := createAndGetPod(e, pod)
	if err != nil {
		return err
	}
	sent, back := pod.Spec.Containers[0].Resources, got.Spec.Containers[0].Resources
	if err := semantically("spec.containers[0].resources", sent, back); err != nil {
		return err
	}
	for _, list := range []struct {
		name       string
		sent, back corev1.ResourceList
	}{{"requests", sent.Requests, back.Requests}, {"limits", sent.Limits, back.Limits}} {
		for k, q := range list.sent {
			b := list.back[k]
			if q.String() != b.String() {
				return fmt.Errorf("resources.%s[%s]: sent %q, got %q", list.name, k, q.String(), b.String())
			}
		}
	}
	return nil
}

func checkPodProbes(e *env) error {
	pod := basePod(e.name("probes"))
	c := &pod.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
	c.LivenessProbe = &corev1.Probe{
		Handler:          corev1.Handler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
		PeriodSeconds:    10,
		TimeoutSeconds:   1,
		SuccessThreshold: 1,
		FailureThreshold: 3,
	}
	c.ReadinessProbe = &corev1.Probe{Handler: corev1.Handler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(8080)}}, InitialDelaySeconds: 5}
	c.StartupProbe = &corev1.Probe{Handler: corev1.Handler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/ready"}}}}
	got, err := createAndGetPod(e, pod)
	if err != nil {
		return err
	}
	sent := []interface{}{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe}
	back := []interface{}{got.Spec.Containers[0].LivenessProbe, got.Spec.Containers[0].ReadinessProbe, got.Spec.Containers[0].StartupProbe}
	return semantically("[livenessProbe, readinessProbe, startupProbe]", sent, back)
}

// checkPodStatusTimes writes a status as a kubelet does: a condition whose lastProbeTime is
// unset (a zero metav1.Time, which Go sends as an empty Timestamp), started: false, no
// startTime. Unset times must come back zero/nil, not 1970-01-01.
func checkPodStatusTimes(e *env) error {
	pods := e.client.CoreV1().Pods(e.namespace)
	pod := basePod(e.name("status"))
	created, err := pods.Create(e.ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create pod: %v", err)
	}
	created.Status = kubeletStatus()
	if _, err := pods.UpdateStatus(e.ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status: %v", err)
	}
	got, err := pods.Get(e.ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get pod: %v", err)
	}
	for i, cond := range got.Status.Conditions {
		if !cond.LastProbeTime.IsZero() {
			return fmt.Errorf("status.conditions[%d].lastProbeTime: sent unset, got %s", i, cond.LastProbeTime.UTC().Format(time.RFC3339Nano))
		}
	}
	if got.Status.StartTime != nil {
		return fmt.Errorf("status.startTime: sent nil, got %s", got.Status.StartTime.UTC().Format(time.RFC3339Nano))
	}
	return semantically("status", created.Status, got.Status)
}

// kubeletStatus is a running pod's status as a kubelet writes it: conditions without a
// lastProbeTime, started: false, no startTime.
func kubeletStatus() corev1.PodStatus {
	transition := metav1.NewTime(time.Now().Truncate(time.Second))
	return corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: transition},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, LastTransitionTime: transition, Reason: "ContainersNotReady", Message: "containers with unready status: [main]"},
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name:         "main",
			Ready:        false,
			RestartCount: 0,
			Image:        "busybox:1.36",
			ImageID:      "docker-pullable://busybox@sha256:0000",
			ContainerID:  "containerd://abc",
			Started:      boolPtr(false),
			State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: transition}},
		}},
		PodIP:    "10.0.0.5",
		PodIPs:   []corev1.PodIP{{IP: "10.0.0.5"}},
		HostIP:   "192.168.1.10",
		QOSClass: corev1.PodQOSBestEffort,
	}
}

func checkOwnerReferences(e *env) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: e.name("owned"),
		OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: types.UID("6c1f8a52-0000-4000-8000-000000000001"), Controller: boolPtr(false), BlockOwnerDeletion: boolPtr(false)},
			{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: types.UID("6c1f8a52-0000-4000-8000-000000000002"), Controller: boolPtr(true), BlockOwnerDeletion: boolPtr(true)},
			{APIVersion: "v1", Kind: "ConfigMap", Name: "plain", UID: types.UID("6c1f8a52-0000-4000-8000-000000000003")},
		},
	}}
	got, err := createAndGetConfigMap(e, cm)
	if err != nil {
		return err
	}
	return semantically("metadata.ownerReferences", cm.OwnerReferences, got.OwnerReferences)
}

func createAndGetLease(e *env, lease *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	leases := e.client.CoordinationV1().Leases(e.namespace)
	if _, err := leases.Create(e.ctx, lease, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create lease: %v", err)
	}
	got, err := leases.Get(e.ctx, lease.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get lease: %v", err)
	}
	return got, nil
}

func checkLeaseZeroPointers(e *env) error {
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: e.name("released")},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       stringPtr(""),
			LeaseDurationSeconds: int32Ptr(0),
			LeaseTransitions:     int32Ptr(0),
		},
	}
	got, err := createAndGetLease(e, lease)
	if err != nil {
		return err
	}
	return semantically("spec", lease.Spec, got.Spec)
}

func checkLeaseMicroTime(e *env) error {
	acquired := metav1.NewMicroTime(time.Date(2024, 5, 1, 12, 0, 0, 123456000, time.UTC))
	renewed := metav1.NewMicroTime(time.Date(2024, 5, 1, 12, 0, 10, 654321000, time.UTC))
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: e.name("held")},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       stringPtr("node-a_4f2c"),
			LeaseDurationSeconds: int32Ptr(15),
			AcquireTime:          &acquired,
			RenewTime:            &renewed,
			LeaseTransitions:     int32Ptr(3),
		},
	}
	got, err := createAndGetLease(e, lease)
	if err != nil {
		return err
	}
	if got.Spec.RenewTime == nil || !got.Spec.RenewTime.Time.Equal(renewed.Time) {
		return fmt.Errorf("spec.renewTime: sent %s, got %v", renewed.UTC().Format(time.RFC3339Nano), microString(got.Spec.RenewTime))
	}
	if got.Spec.AcquireTime == nil || !got.Spec.AcquireTime.Time.Equal(acquired.Time) {
		return fmt.Errorf("spec.acquireTime: sent %s, got %v", acquired.UTC().Format(time.RFC3339Nano), microString(got.Spec.AcquireTime))
	}
	return semantically("spec", lease.Spec, got.Spec)
}

func microString(t *metav1.MicroTime) string {
	if t == nil {
		return "nil"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func checkPVCStorageClass(e *env) error {
	mode := corev1.PersistentVolumeFilesystem
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: e.name("data")},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: stringPtr(""),
			VolumeMode:       &mode,
			Resources:        corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	claims := e.client.CoreV1().PersistentVolumeClaims(e.namespace)
	if _, err := claims.Create(e.ctx, pvc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create: %v", err)
	}
	got, err := claims.Get(e.ctx, pvc.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get: %v", err)
	}
	if got.Spec.StorageClassName == nil {
		return fmt.Errorf(`spec.storageClassName: sent "" (no dynamic provisioning), got nil (the default class would apply)`)
	}
	return semantically("spec", pvc.Spec, got.Spec)
}

func checkClusterRole(e *env) error {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: e.name("go-check-reader")},
		Rules: []rbacv1.PolicyRule{
			{NonResourceURLs: []string{"/healthz", "/metrics", "/version/*"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps", "pods/log"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, ResourceNames: []string{"web"}, Verbs: []string{"update"}},
		},
	}
	roles := e.client.RbacV1().ClusterRoles()
	if _, err := roles.Create(e.ctx, role, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create: %v", err)
	}
	got, err := roles.Get(e.ctx, role.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get: %v", err)
	}
	return semantically("rules", role.Rules, got.Rules)
}

func checkCSINode(e *env) error {
	node := &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: e.name("node")},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
			{Name: "ebs.csi.aws.com", NodeID: "i-0123456789abcdef0", TopologyKeys: []string{"topology.ebs.csi.aws.com/zone"}, Allocatable: &storagev1.VolumeNodeResources{Count: int32Ptr(25)}},
			{Name: "hostpath.csi.k8s.io", NodeID: "node-b", Allocatable: &storagev1.VolumeNodeResources{Count: int32Ptr(0)}},
		}},
	}
	nodes := e.client.StorageV1().CSINodes()
	if _, err := nodes.Create(e.ctx, node, metav1.CreateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("storage.k8s.io/v1 csinodes is not served: create answered 404 (%v)", err)
		}
		return fmt.Errorf("create: %v", err)
	}
	got, err := nodes.Get(e.ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get: %v", err)
	}
	return semantically("spec", node.Spec, got.Spec)
}

func checkDeployment(e *env) error {
	maxUnavailable := intstr.FromString("25%")
	maxSurge := intstr.FromInt(0)
	labels := map[string]string{"app": e.name("web")}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: e.name("web")},
		Spec: appsv1.DeploymentSpec{
			Replicas:                int32Ptr(0),
			RevisionHistoryLimit:    int32Ptr(0),
			ProgressDeadlineSeconds: int32Ptr(600),
			Selector:                &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &maxUnavailable, MaxSurge: &maxSurge},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       basePod("").Spec,
			},
		},
	}
	deployments := e.client.AppsV1().Deployments(e.namespace)
	if _, err := deployments.Create(e.ctx, deploy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create: %v", err)
	}
	got, err := deployments.Get(e.ctx, deploy.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get: %v", err)
	}
	return semantically("spec", deploy.Spec, got.Spec)
}

func checkJob(e *env) error {
	template := basePod("").Spec
	template.RestartPolicy = corev1.RestartPolicyNever
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: e.name("batch")},
		Spec: batchv1.JobSpec{
			Parallelism:             int32Ptr(0),
			Completions:             int32Ptr(1),
			BackoffLimit:            int32Ptr(0),
			TTLSecondsAfterFinished: int32Ptr(0),
			ManualSelector:          boolPtr(false),
			Template:                corev1.PodTemplateSpec{Spec: template},
		},
	}
	jobs := e.client.BatchV1().Jobs(e.namespace)
	if _, err := jobs.Create(e.ctx, job, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create: %v", err)
	}
	got, err := jobs.Get(e.ctx, job.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get: %v", err)
	}
	return semantically("spec", job.Spec, got.Spec)
}

func checkService(e *env) error {
	single := corev1.IPFamilyPolicySingleStack
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: e.name("web")},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP},
				{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt(9090), Protocol: corev1.ProtocolTCP},
			},
			SessionAffinity:               corev1.ServiceAffinityClientIP,
			SessionAffinityConfig:         &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: int32Ptr(10800)}},
			IPFamilyPolicy:                &single,
			AllocateLoadBalancerNodePorts: boolPtr(false),
		},
	}
	services := e.client.CoreV1().Services(e.namespace)
	if _, err := services.Create(e.ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create: %v", err)
	}
	got, err := services.Get(e.ctx, svc.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get: %v", err)
	}
	return semantically("spec", svc.Spec, got.Spec)
}

func checkControllerRevision(e *env) error {
	raw := []byte(`{"spec":{"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"main","image":"busybox:1.36"}]}}}}`)
	rev := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: e.name("web-7d9f")},
		Data:       runtime.RawExtension{Raw: raw},
		Revision:   3,
	}
	revisions := e.client.AppsV1().ControllerRevisions(e.namespace)
	if _, err := revisions.Create(e.ctx, rev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create: %v", err)
	}
	got, err := revisions.Get(e.ctx, rev.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get: %v", err)
	}
	if got.Revision != 3 {
		return fmt.Errorf("revision: sent 3, got %d", got.Revision)
	}
	var sent, back interface{}
	if err := jsonUnmarshal(raw, &sent); err != nil {
		return err
	}
	if err := jsonUnmarshal(got.Data.Raw, &back); err != nil {
		return fmt.Errorf("data.raw is not the JSON sent (%v): %q", err, got.Data.Raw)
	}
	return sameAs("data (as JSON)", sent, back)
}

// checkTimeFields: an unset deletionTimestamp stays nil; the server-set creationTimestamp is
// now, not zero and not 1970-01-01 (a Timestamp with seconds 0 sent for an unset time).
func checkTimeFields(e *env) error {
	got, err := createAndGetConfigMap(e, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: e.name("times")}})
	if err != nil {
		return err
	}
	if err := timesOf("get", &got.ObjectMeta); err != nil {
		return err
	}
	list, err := e.client.CoreV1().ConfigMaps(e.namespace).List(e.ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + got.Name})
	if err != nil {
		return fmt.Errorf("list: %v", err)
	}
	if len(list.Items) != 1 {
		return fmt.Errorf("list by metadata.name: want 1 item, got %d", len(list.Items))
	}
	return timesOf("list", &list.Items[0].ObjectMeta)
}

func timesOf(how string, meta *metav1.ObjectMeta) error {
	if meta.DeletionTimestamp != nil {
		return fmt.Errorf("%s: metadata.deletionTimestamp: never set, got %s", how, meta.DeletionTimestamp.UTC().Format(time.RFC3339Nano))
	}
	if meta.DeletionGracePeriodSeconds != nil {
		return fmt.Errorf("%s: metadata.deletionGracePeriodSeconds: never set, got %d", how, *meta.DeletionGracePeriodSeconds)
	}
	created := meta.CreationTimestamp
	if created.IsZero() {
		return fmt.Errorf("%s: metadata.creationTimestamp is zero", how)
	}
	if age := time.Since(created.Time); age < -time.Hour || age > time.Hour {
		return fmt.Errorf("%s: metadata.creationTimestamp is %s, not about now", how, created.UTC().Format(time.RFC3339))
	}
	return nil
}
