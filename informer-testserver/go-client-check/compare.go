package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// sameAs compares what was sent with what came back (reflect.DeepEqual) and, when they differ,
// names each differing field by its JSON path: "spec.tolerations[0].tolerationSeconds: sent 0,
// got (absent)".
func sameAs(what string, sent, got interface{}) error {
	if reflect.DeepEqual(sent, got) {
		return nil
	}
	all := jsonDiff(sent, got)
	if len(all) == 0 {
		return fmt.Errorf("%s differs (reflect.DeepEqual) though its JSON forms are equal:\n    sent %#v\n    got  %#v", what, sent, got)
	}
	diffs := notDefaulted(all)
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%s came back different:\n    %s", what, strings.Join(diffs, "\n    "))
}

// replacedZeroValues are the differences kube-apiserver's defaulting makes to zero values a
// client sends (Go's SetDefaults_* treat "" as unset).
var replacedZeroValues = []string{
	`roleRef.apiGroup: sent "", got "rbac.authorization.k8s.io"`, // SetDefaults_RoleBinding
	`type: sent "", got "Opaque"`,                                // SetDefaults_Secret
	// SetDefaults_Service: no affinity config without ClientIP affinity
	`spec.sessionAffinityConfig: sent {"clientIP":{"timeoutSeconds":0}}, got (absent)`,
}

// notDefaulted leaves out of diffs what kube-apiserver's defaulting and admission set: a field
// the client left out that came back set, and the zero values it replaces. What a client sent
// must come back as it was sent; what it left to the server is the server's.
func notDefaulted(diffs []string) []string {
	var out []string
	for _, d := range diffs {
		if strings.Contains(d, ": sent (absent), got ") || isReplacedZeroValue(d) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func isReplacedZeroValue(diff string) bool {
	for _, replaced := range replacedZeroValues {
		if diff == replaced {
			return true
		}
	}
	return false
}

// jsonDiff lists the paths at which the JSON forms of a and b differ.
func jsonDiff(a, b interface{}) []string {
	var av, bv interface{}
	if err := roundTripJSON(a, &av); err != nil {
		return []string{fmt.Sprintf("(cannot encode what was sent: %v)", err)}
	}
	if err := roundTripJSON(b, &bv); err != nil {
		return []string{fmt.Sprintf("(cannot encode what came back: %v)", err)}
	}
	var out []string
	diffValue("", av, bv, &out)
	return out
}

func roundTripJSON(in interface{}, out *interface{}) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

func diffValue(path string, a, b interface{}, out *[]string) {
	if path == "" {
		path = "."
	}
	switch at := a.(type) {
	case map[string]interface{}:
		bt, ok := b.(map[string]interface{})
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: sent %s, got %s", path, show(a), show(b)))
			return
		}
		keys := map[string]bool{}
		for k := range at {
			keys[k] = true
		}
		for k := range bt {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			av, aok := at[k]
			bv, bok := bt[k]
			sub := strings.TrimPrefix(path+"."+k, "..")
			switch {
			case aok && !bok:
				*out = append(*out, fmt.Sprintf("%s: sent %s, got (absent)", sub, show(av)))
			case !aok && bok:
				*out = append(*out, fmt.Sprintf("%s: sent (absent), got %s", sub, show(bv)))
			default:
				diffValue(sub, av, bv, out)
			}
		}
	case []interface{}:
		bt, ok := b.([]interface{})
		if !ok || len(at) != len(bt) {
			*out = append(*out, fmt.Sprintf("%s: sent %s, got %s", path, show(a), show(b)))
			return
		}
		for i := range at {
			diffValue(fmt.Sprintf("%s[%d]", path, i), at[i], bt[i], out)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, fmt.Sprintf("%s: sent %s, got %s", path, show(a), show(b)))
		}
	}
}

func show(v interface{}) string {
	if v == nil {
		return "null"
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(raw) > 300 {
		return string(raw[:300]) + "..."
	}
	return string(raw)
}

// eventually polls cond every 50 ms until it returns nil or the timeout passes, returning the
// last error.
func eventually(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func boolPtr(b bool) *bool       { return &b }
func int32Ptr(i int32) *int32    { return &i }
func int64Ptr(i int64) *int64    { return &i }
func stringPtr(s string) *string { return &s }

func jsonUnmarshal(raw []byte, v interface{}) error { return json.Unmarshal(raw, v) }
