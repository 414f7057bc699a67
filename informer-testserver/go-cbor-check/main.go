// Command informer-cbor-check reads and writes CBOR with apimachinery's CBOR encoding and
// decoding modes (k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct, the functions the
// CBOR serializer's types use) against a Kubernetes API server (meant for informer-testserver)
// and prints one PASS/FAIL line per check. It exits 1 when a check fails.
//
// Every CBOR answer must decode in apimachinery's decoding mode, hold what the JSON answer
// holds, and be byte for byte what apimachinery's deterministic encoding mode writes for the
// decoded value (self-described tag, byte strings, key order, integer and float widths).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/fxamacker/cbor/v2"
	v1 "informer-cbor-check/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	kjson "sigs.k8s.io/json"
)

const cborType = "application/cbor"

var selfDescribed = []byte{0xd9, 0xd9, 0xf7}

var (
	server = flag.String("server", "", "the API server's URL")
	failed bool
	client = &http.Client{Timeout: 30 * time.Second}
)

func report(name string, err error) {
	if err != nil {
		failed = true
		fmt.Printf("FAIL %s: %v\n", name, err)
		return
	}
	fmt.Printf("PASS %s\n", name)
}

type answer struct {
	status      int
	contentType string
	body        []byte
}

func do(method, path, accept, contentType string, body []byte) (answer, error) {
	req, err := http.NewRequest(method, *server+path, bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header.Get("Content-Type"), data}, err
}

// decodeAnswer decodes a CBOR answer in apimachinery's decoding mode and checks that its
// encoding mode writes the same bytes for the value.
func decodeAnswer(a answer, status int) (any, error) {
	if a.status != status {
		return nil, fmt.Errorf("status %d, want %d: %q", a.status, status, a.body)
	}
	if a.contentType != cborType {
		return nil, fmt.Errorf("content type %q", a.contentType)
	}
	return decodeItem(a.body)
}

func decodeItem(item []byte) (any, error) {
	if !bytes.HasPrefix(item, selfDescribed) {
		return nil, fmt.Errorf("no self-described tag: % x", item[:min(len(item), 8)])
	}
	var value any
	if err := direct.Unmarshal(item, &value); err != nil {
		return nil, fmt.Errorf("apimachinery's decoding mode refuses the answer: %w", err)
	}
	again, err := direct.Marshal(value)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(again, item[len(selfDescribed):]) {
		diag, _ := direct.Diagnose(item[len(selfDescribed):])
		want, _ := direct.Diagnose(again)
		return nil, fmt.Errorf("bytes differ from apimachinery's encoding:\n  got  %x\n  want %x\n  got  %s\n  want %s", item[3:], again, diag, want)
	}
	return value, nil
}

// jsonValue decodes JSON as Go's unstructured decoding does (integers int64, others float64).
func jsonValue(data []byte) (any, error) {
	var value any
	err := kjson.UnmarshalCaseSensitivePreserveInts(data, &value)
	return value, err
}

// sameAsJSON checks that a path's CBOR answer holds what its JSON answer holds.
func sameAsJSON(path string) error {
	a, err := do("GET", path, cborType, "", nil)
	if err != nil {
		return err
	}
	fromCBOR, err := decodeAnswer(a, 200)
	if err != nil {
		return err
	}
	j, err := do("GET", path, "application/json", "", nil)
	if err != nil {
		return err
	}
	fromJSON, err := jsonValue(j.body)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(fromCBOR, fromJSON) {
		return fmt.Errorf("CBOR and JSON answers differ:\n  cbor %#v\n  json %#v", fromCBOR, fromJSON)
	}
	return nil
}

func body(value any) []byte {
	data, err := direct.Marshal(value)
	if err != nil {
		panic(err)
	}
	return append(append([]byte{}, selfDescribed...), data...)
}

func mustJSON(method, path string, value any) error {
	data, _ := json.Marshal(value)
	a, err := do(method, path, "application/json", "application/json", data)
	if err != nil {
		return err
	}
	if a.status >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, a.status, a.body)
	}
	return nil
}

func main() {
	flag.Parse()
	if *server == "" {
		fmt.Fprintln(os.Stderr, "usage: informer-cbor-check -server URL")
		os.Exit(2)
	}
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1000000)
	ns := "/api/v1/namespaces/default"

	report("setup", errors.Join(
		mustJSON("POST", ns+"/configmaps", map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cm-" + suffix, "labels": map[string]any{"a": "b"}},
			"data":     map[string]any{"key": "value", "long-key-name-past-twenty-four": "x"},
		}),
		mustJSON("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "gadgets.cbor.example.com"},
			"spec": map[string]any{
				"group": "cbor.example.com", "scope": "Namespaced",
				"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
				"versions": []any{map[string]any{
					"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{
						"type": "object", "x-kubernetes-preserve-unknown-fields": true,
					}},
				}},
			},
		}),
	))

	report("get-configmap", sameAsJSON(ns+"/configmaps/cm-"+suffix))
	report("list-configmaps", sameAsJSON(ns+"/configmaps"))
	report("list-namespaces", sameAsJSON("/api/v1/namespaces"))

	gadgets := "/apis/cbor.example.com/v1/namespaces/default/gadgets"
	gadget := map[string]any{
		"apiVersion": "cbor.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g-" + suffix},
		"spec": map[string]any{
			"small": int64(1), "negative": int64(-300), "big": int64(1) << 40,
			"half": 1.5, "single": 100000.5, "double": 0.1, "whole": 2.0,
			"text": "ünïcode", "empty": "", "list": []any{int64(1), "two", nil, true},
			"nested": map[string]any{"z": int64(1), "aa": int64(2), "b": int64(3)},
		},
	}
	report("create-custom-resource-with-cbor-body", func() error {
		a, err := do("POST", gadgets, cborType, cborType, body(gadget))
		if err != nil {
			return err
		}
		created, err := decodeAnswer(a, 201)
		if err != nil {
			return err
		}
		spec := created.(map[string]any)["spec"]
		if !reflect.DeepEqual(spec, gadget["spec"]) {
			return fmt.Errorf("spec came back as %#v", spec)
		}
		return nil
	}())
	report("get-custom-resource", sameAsJSON(gadgets+"/g-"+suffix))

	report("update-configmap-with-cbor-body", func() error {
		a, err := do("GET", ns+"/configmaps/cm-"+suffix, cborType, "", nil)
		if err != nil {
			return err
		}
		current, err := decodeAnswer(a, 200)
		if err != nil {
			return err
		}
		current.(map[string]any)["data"].(map[string]any)["key"] = "changed"
		a, err = do("PUT", ns+"/configmaps/cm-"+suffix, cborType, cborType, body(current))
		if err != nil {
			return err
		}
		updated, err := decodeAnswer(a, 200)
		if err != nil {
			return err
		}
		if got := updated.(map[string]any)["data"].(map[string]any)["key"]; got != "changed" {
			return fmt.Errorf("data.key is %v", got)
		}
		return nil
	}())

	report("apply-patch-cbor", func() error {
		patch := map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "applied-" + suffix},
			"data":     map[string]any{"k": "v"},
		}
		a, err := do("PATCH", ns+"/configmaps/applied-"+suffix+"?fieldManager=go-cbor-check",
			cborType, "application/apply-patch+cbor", body(patch))
		if err != nil {
			return err
		}
		_, err = decodeAnswer(a, 201)
		return err
	}())

	report("not-found-status", func() error {
		a, err := do("GET", ns+"/configmaps/missing-"+suffix, cborType, "", nil)
		if err != nil {
			return err
		}
		status, err := decodeAnswer(a, 404)
		if err != nil {
			return err
		}
		m := status.(map[string]any)
		if m["kind"] != "Status" || m["code"] != int64(404) || m["reason"] != "NotFound" {
			return fmt.Errorf("status %#v", m)
		}
		return nil
	}())

	report("secret-bytes-fields", checkSecret(ns, suffix))
	report("watch-cbor-seq", checkWatch(ns, suffix))
	report("malformed-bodies", checkMalformed(ns))

	if failed {
		os.Exit(1)
	}
}

// checkWatch reads a watch as client-go's CBOR framer does: one data item at a time from the
// stream (fxamacker/cbor's Decoder), each decoded in apimachinery's decoding mode.
func checkWatch(ns, suffix string) error {
	req, err := http.NewRequest("GET", *server+ns+"/configmaps?watch=true&timeoutSeconds=2", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", cborType)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/cbor-seq" {
		return fmt.Errorf("content type %q", ct)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = mustJSON("POST", ns+"/configmaps", map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "watched-" + suffix},
		})
	}()
	decoder := cbor.NewDecoder(resp.Body)
	var seen []string
	for {
		var raw cbor.RawMessage
		if err := decoder.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("reading the sequence: %w", err)
		}
		// fxamacker/cbor's Decoder leaves the self-described tag of each item out of the
		// RawMessage (apimachinery's RawExtension puts it back): decode what is left
		var event any
		if err := direct.Unmarshal(raw, &event); err != nil {
			return fmt.Errorf("apimachinery's decoding mode refuses an event: %w", err)
		}
		m, ok := event.(map[string]any)
		if !ok || len(m) != 2 {
			return fmt.Errorf("event %#v", event)
		}
		object, _ := m["object"].(map[string]any)
		// what kube-apiserver writes: a WatchEvent whose object is embedded as encoded (with
		// its own self-described tag)
		want, err := direct.Marshal(map[string]any{"type": m["type"], "object": cbor.RawMessage(body(object))})
		if err != nil {
			return err
		}
		if !bytes.Equal(bytes.TrimPrefix(raw, selfDescribed), want) {
			return fmt.Errorf("event bytes differ from apimachinery's encoding:\n  got  %x\n  want %x", raw, want)
		}
		metadata, _ := object["metadata"].(map[string]any)
		seen = append(seen, fmt.Sprintf("%v %v", m["type"], metadata["name"]))
	}
	if !strings.Contains(strings.Join(seen, ","), "ADDED watched-"+suffix) {
		return fmt.Errorf("events %v", seen)
	}
	return nil
}

// checkMalformed sends bodies apimachinery's decoding mode refuses: each 400's message must quote
// the error apimachinery gives for the same bytes.
func checkMalformed(ns string) error {
	good := body(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "bad"}})
	cases := map[string][]byte{
		"truncated":           good[:len(good)-2],
		"extraneous":          append(append([]byte{}, good...), 0x00),
		"nested-duplicate":    fromHex("d9d9f7a3446b696e6449436f6e6669674d61704a61706956657273696f6e4276314464617461a24161417841614179"),
		"invalid-utf8":        fromHex("d9d9f7a3446b696e6449436f6e6669674d61704a61706956657273696f6e4276314464617461a1416161ff"),
		"integer-key":         fromHex("d9d9f7a3446b696e6449436f6e6669674d61704a61706956657273696f6e4276314464617461a1014178"),
		"nan":                 fromHex("d9d9f7a3446b696e6449436f6e6669674d61704a61706956657273696f6e4276314464617461a14161f97e00"),
		"bignum":              fromHex("d9d9f7a3446b696e6449436f6e6669674d61704a61706956657273696f6e4276314464617461a14161c24101"),
		"undefined":           fromHex("d9d9f7a3446b696e6449436f6e6669674d61704a61706956657273696f6e4276314464617461a14161f7"),
		"top-level-duplicate": fromHex("d9d9f7a2446b696e6449436f6e6669674d6170446b696e6449436f6e6669674d6170"),
	}
	var problems []error
	for name, data := range cases {
		var into map[string]any
		goErr := direct.Unmarshal(data, &into)
		if goErr == nil {
			problems = append(problems, fmt.Errorf("%s: apimachinery accepts it", name))
			continue
		}
		a, err := do("POST", ns+"/configmaps", cborType, cborType, data)
		if err != nil {
			return err
		}
		status, err := decodeAnswer(a, 400)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", name, err))
			continue
		}
		message, _ := status.(map[string]any)["message"].(string)
		if !strings.Contains(message, goErr.Error()) {
			problems = append(problems, fmt.Errorf("%s: message %q does not quote %q", name, message, goErr.Error()))
		}
	}
	// bodies whose kind apimachinery cannot read (its lax decoding into TypeMeta fails; these
	// bodies hold nothing else, so the strict decoding into TypeMeta gives the same error; not
	// a key that is neither a string nor an integer, which the strict decoding reports as an
	// unknown field)
	kindless := map[string][]byte{
		"integer-kind":      fromHex("d9d9f7a1446b696e6405"),
		"invalid-utf8-key":  fromHex("d9d9f7a161ff4178"),
		"invalid-utf8-kind": fromHex("d9d9f7a1446b696e6461ff"),
		"array":             fromHex("d9d9f78101"),
	}
	for name, data := range kindless {
		var into v1.TypeMeta
		goErr := direct.Unmarshal(data, &into)
		if goErr == nil {
			problems = append(problems, fmt.Errorf("%s: apimachinery accepts it", name))
			continue
		}
		a, err := do("POST", ns+"/configmaps", cborType, cborType, data)
		if err != nil {
			return err
		}
		status, err := decodeAnswer(a, 400)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", name, err))
			continue
		}
		message, _ := status.(map[string]any)["message"].(string)
		want := "unable to determine group/version/kind: " + goErr.Error()
		if !strings.Contains(message, want) {
			problems = append(problems, fmt.Errorf("%s: message %q does not quote %q", name, message, want))
		}
	}
	return errors.Join(problems...)
}

func fromHex(text string) []byte {
	out := make([]byte, len(text)/2)
	for i := range out {
		fmt.Sscanf(text[2*i:2*i+2], "%02x", &out[i])
	}
	return out
}

// secret has the fields of a core/v1 Secret the check sends, with Go's types: `data` is
// map[string][]byte, whose values apimachinery's encoder writes as byte strings in the base64
// tag.
type secret struct {
	APIVersion string            `json:"apiVersion,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Metadata   map[string]any    `json:"metadata,omitempty"`
	Data       map[string][]byte `json:"data,omitempty"`
	Type       string            `json:"type,omitempty"`
}

// checkSecret reads a Secret into Go's field types and checks that apimachinery's encoder writes
// the same bytes for it (the []byte fields included).
func checkSecret(ns, suffix string) error {
	if err := mustJSON("POST", ns+"/secrets", map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": "s-" + suffix},
		"data":     map[string]any{"key": "AQID/w=="},
	}); err != nil {
		return err
	}
	a, err := do("GET", ns+"/secrets/s-"+suffix, cborType, "", nil)
	if err != nil {
		return err
	}
	if a.status != 200 || !bytes.HasPrefix(a.body, selfDescribed) {
		return fmt.Errorf("status %d: %q", a.status, a.body)
	}
	var s secret
	if err := direct.Unmarshal(a.body, &s); err != nil {
		return fmt.Errorf("apimachinery's decoding mode refuses the answer: %w", err)
	}
	if !bytes.Equal(s.Data["key"], []byte{1, 2, 3, 0xff}) {
		return fmt.Errorf("data.key is %v", s.Data["key"])
	}
	again, err := direct.Marshal(s)
	if err != nil {
		return err
	}
	if !bytes.Equal(again, a.body[len(selfDescribed):]) {
		got, _ := direct.Diagnose(a.body[len(selfDescribed):])
		want, _ := direct.Diagnose(again)
		return fmt.Errorf("bytes differ from apimachinery's encoding:\n  got  %s\n  want %s", got, want)
	}
	return nil
}
