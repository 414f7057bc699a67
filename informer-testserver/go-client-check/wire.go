package main

// The server's protobuf bytes, read field by field against the Go types' protobuf tags. The
// generated Unmarshal methods skip field numbers they do not know and would hide a wrong field
// number as a missing value; this walk names it, with its path.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

var protobufMagic = []byte("k8s\x00")

var (
	timeType      = reflect.TypeOf(metav1.Time{})
	microTimeType = reflect.TypeOf(metav1.MicroTime{})
	quantityType  = reflect.TypeOf(resource.Quantity{})
	rawExtType    = reflect.TypeOf(runtime.RawExtension{})
	byteSliceType = reflect.TypeOf([]byte(nil))
)

// newerFields are fields added to the API after Kubernetes 1.20: a 1.20 client skips them, as
// it would from a newer kube-apiserver, so the walk notes them instead of failing.
var newerFields = map[reflect.Type]map[int]string{
	reflect.TypeOf(metav1.ManagedFieldsEntry{}): {8: "subresource (Kubernetes 1.22)"},
}

// wireWalk collects what a walk found: problems, and one line per field for the dump.
type wireWalk struct {
	problems []string
	fields   []string
}

func (w *wireWalk) problem(path, format string, args ...interface{}) {
	w.problems = append(w.problems, fmt.Sprintf("%s: %s", path, fmt.Sprintf(format, args...)))
}

// wireField is one field read off the wire.
type wireField struct {
	num      int
	wireType int
	varint   uint64
	data     []byte // wire type 2 payload, or the 4/8 fixed bytes
}

// readFields splits a message into its fields.
func readFields(data []byte) ([]wireField, error) {
	var out []wireField
	for i := 0; i < len(data); {
		key, n := binary.Uvarint(data[i:])
		if n <= 0 {
			return out, fmt.Errorf("truncated field key at byte %d", i)
		}
		i += n
		f := wireField{num: int(key >> 3), wireType: int(key & 7)}
		switch f.wireType {
		case 0:
			v, n := binary.Uvarint(data[i:])
			if n <= 0 {
				return out, fmt.Errorf("field %d: truncated varint at byte %d", f.num, i)
			}
			f.varint = v
			i += n
		case 1, 5:
			size := 8
			if f.wireType == 5 {
				size = 4
			}
			if i+size > len(data) {
				return out, fmt.Errorf("field %d: truncated fixed%d at byte %d", f.num, size*8, i)
			}
			f.data = data[i : i+size]
			i += size
		case 2:
			l, n := binary.Uvarint(data[i:])
			if n <= 0 {
				return out, fmt.Errorf("field %d: truncated length at byte %d", f.num, i)
			}
			i += n
			if uint64(len(data)-i) < l {
				return out, fmt.Errorf("field %d: length %d runs past the end (%d bytes left)", f.num, l, len(data)-i)
			}
			f.data = data[i : i+int(l)]
			i += int(l)
		default:
			return out, fmt.Errorf("field %d: unsupported wire type %d at byte %d", f.num, f.wireType, i)
		}
		if f.num <= 0 {
			return out, fmt.Errorf("illegal field number %d", f.num)
		}
		out = append(out, f)
	}
	return out, nil
}

// goField is a struct field with a protobuf tag.
type goField struct {
	name   string
	typ    reflect.Type
	num    int
	keyTag string
	valTag string
}

func protoFields(t reflect.Type) map[int]goField {
	out := map[int]goField{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("protobuf")
		if tag == "" {
			continue
		}
		parts := strings.Split(tag, ",")
		if len(parts) < 2 {
			continue
		}
		num, err := strconv.Atoi(parts[1])
		if err != nil {
			continue
		}
		name := sf.Name
		for _, p := range parts {
			if strings.HasPrefix(p, "name=") {
				name = strings.TrimPrefix(p, "name=")
			}
		}
		out[num] = goField{name: name, typ: sf.Type, num: num, keyTag: sf.Tag.Get("protobuf_key"), valTag: sf.Tag.Get("protobuf_val")}
	}
	return out
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Ptr {
		t = t.Elem()
	}
	return t
}

// wantWireType is the wire type a value of Go type t is written with.
func wantWireType(t reflect.Type) int {
	t = deref(t)
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return 0
	case reflect.Float64:
		return 1
	case reflect.Float32:
		return 5
	default:
		return 2
	}
}

// walkMessage reads data as a message of Go struct type t.
func (w *wireWalk) walkMessage(data []byte, t reflect.Type, path string) {
	t = deref(t)
	switch t {
	case timeType, microTimeType:
		w.walkTimestamp(data, path, t == microTimeType)
		return
	case quantityType:
		w.walkQuantity(data, path)
		return
	case rawExtType:
		w.walkRawExtension(data, path)
		return
	}
	if t.Kind() != reflect.Struct {
		w.problem(path, "a message where Go has %s", t)
		return
	}
	fields, err := readFields(data)
	if err != nil {
		w.problem(path, "%v", err)
	}
	known := protoFields(t)
	seen := map[int]int{}
	for _, f := range fields {
		gf, ok := known[f.num]
		if newer, isNewer := newerFields[t][f.num]; !ok && isNewer {
			w.fields = append(w.fields, fmt.Sprintf("%s = field #%d %s, newer than client-go 1.20: skipped by Go (note, not a problem)", joinPath(path, "?"), f.num, newer))
			continue
		}
		if !ok {
			w.problem(path, "field number %d (wire type %d%s) is not a field of Go's %s", f.num, f.wireType, payloadHint(f), t)
			continue
		}
		seen[f.num]++
		sub := joinPath(path, gf.name)
		ft := gf.typ
		repeated := ft.Kind() == reflect.Slice && ft != byteSliceType && ft.Elem().Kind() != reflect.Uint8 || ft.Kind() == reflect.Map
		if !repeated && seen[f.num] == 2 {
			w.problem(sub, "sent more than once, though not repeated (Go keeps the last value, or merges messages)")
		}
		if repeated {
			sub = fmt.Sprintf("%s[%d]", sub, seen[f.num]-1)
		}
		w.walkField(f, gf, sub)
	}
}

func (w *wireWalk) walkField(f wireField, gf goField, path string) {
	t := deref(gf.typ)
	if t.Kind() == reflect.Map {
		w.walkMapEntry(f, t, path)
		return
	}
	elem := t
	if t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 {
		elem = deref(t.Elem())
	}
	want := wantWireType(elem)
	if want == 0 && f.wireType == 2 && t.Kind() == reflect.Slice {
		w.fields = append(w.fields, fmt.Sprintf("%s = packed %d bytes (#%d)", path, len(f.data), f.num))
		return
	}
	if f.wireType != want {
		w.problem(path, "wire type %d (%s), Go's %s wants wire type %d", f.wireType, payloadHint(f), elem, want)
		return
	}
	w.walkValue(f, elem, path)
}

func (w *wireWalk) walkValue(f wireField, t reflect.Type, path string) {
	switch t.Kind() {
	case reflect.Struct:
		w.walkMessage(f.data, t, path)
	case reflect.String:
		w.fields = append(w.fields, fmt.Sprintf("%s = %q (#%d)", path, clip(string(f.data)), f.num))
	case reflect.Slice: // []byte
		w.fields = append(w.fields, fmt.Sprintf("%s = %d bytes (#%d)", path, len(f.data), f.num))
	case reflect.Bool:
		if f.varint > 1 {
			w.problem(path, "bool with varint %d", f.varint)
		}
		w.fields = append(w.fields, fmt.Sprintf("%s = %v (#%d)", path, f.varint == 1, f.num))
	case reflect.Float64:
		w.fields = append(w.fields, fmt.Sprintf("%s = %v (#%d)", path, math.Float64frombits(binary.LittleEndian.Uint64(f.data)), f.num))
	case reflect.Float32:
		w.fields = append(w.fields, fmt.Sprintf("%s = %v (#%d)", path, math.Float32frombits(binary.LittleEndian.Uint32(f.data)), f.num))
	default:
		w.fields = append(w.fields, fmt.Sprintf("%s = %d (#%d)", path, int64(f.varint), f.num))
	}
}

func (w *wireWalk) walkMapEntry(f wireField, t reflect.Type, path string) {
	if f.wireType != 2 {
		w.problem(path, "map entry with wire type %d", f.wireType)
		return
	}
	entry, err := readFields(f.data)
	if err != nil {
		w.problem(path, "map entry: %v", err)
		return
	}
	key := ""
	for _, e := range entry {
		switch e.num {
		case 1:
			if e.wireType != 2 {
				w.problem(path, "map key with wire type %d", e.wireType)
				continue
			}
			key = string(e.data)
		case 2:
		default:
			w.problem(path, "map entry field number %d (only 1 key, 2 value exist)", e.num)
		}
	}
	sub := fmt.Sprintf("%s[%q]", strings.TrimSuffix(path, "["+lastIndex(path)+"]"), key)
	for _, e := range entry {
		if e.num != 2 {
			continue
		}
		vt := deref(t.Elem())
		if want := wantWireType(vt); e.wireType != want {
			w.problem(sub, "map value with wire type %d, Go's %s wants %d", e.wireType, vt, want)
			continue
		}
		w.walkValue(e, vt, sub)
	}
}

func lastIndex(path string) string {
	open := strings.LastIndex(path, "[")
	if open < 0 || !strings.HasSuffix(path, "]") {
		return ""
	}
	return path[open+1 : len(path)-1]
}

// walkTimestamp reads a Time/MicroTime: a Timestamp {1: seconds, 2: nanos}. An empty message is
// an unset time; seconds 0 decodes as 1970-01-01T00:00:00Z, which no server means.
func (w *wireWalk) walkTimestamp(data []byte, path string, micro bool) {
	if len(data) == 0 {
		w.fields = append(w.fields, fmt.Sprintf("%s = (empty: unset time)", path))
		return
	}
	fields, err := readFields(data)
	if err != nil {
		w.problem(path, "Timestamp: %v", err)
		return
	}
	var seconds, nanos int64
	for _, f := range fields {
		switch {
		case f.num == 1 && f.wireType == 0:
			seconds = int64(f.varint)
		case f.num == 2 && f.wireType == 0:
			nanos = int64(int32(f.varint))
		default:
			w.problem(path, "Timestamp field %d wire type %d (only 1 seconds, 2 nanos exist)", f.num, f.wireType)
		}
	}
	at := time.Unix(seconds, nanos).UTC()
	if seconds == 0 && nanos == 0 {
		w.problem(path, "a Timestamp with seconds 0: Go decodes 1970-01-01T00:00:00Z, not an unset time (send an empty message or leave the field out)")
	}
	if !micro && nanos != 0 {
		w.problem(path, "metav1.Time with nanos %d (Go's Time keeps seconds only)", nanos)
	}
	w.fields = append(w.fields, fmt.Sprintf("%s = %s", path, at.Format(time.RFC3339Nano)))
}

func (w *wireWalk) walkQuantity(data []byte, path string) {
	fields, err := readFields(data)
	if err != nil {
		w.problem(path, "Quantity: %v", err)
		return
	}
	for _, f := range fields {
		if f.num != 1 || f.wireType != 2 {
			w.problem(path, "Quantity field %d wire type %d (only 1 string exists)", f.num, f.wireType)
			continue
		}
		if _, err := resource.ParseQuantity(string(f.data)); err != nil {
			w.problem(path, "Quantity %q does not parse: %v", f.data, err)
		}
		w.fields = append(w.fields, fmt.Sprintf("%s = quantity %q", path, f.data))
	}
}

// walkRawExtension reads a RawExtension {1: raw}; raw holding a protobuf object (magic and
// runtime.Unknown, as in watch events) is walked as that object.
func (w *wireWalk) walkRawExtension(data []byte, path string) {
	fields, err := readFields(data)
	if err != nil {
		w.problem(path, "RawExtension: %v", err)
		return
	}
	for _, f := range fields {
		if f.num != 1 || f.wireType != 2 {
			w.problem(path, "RawExtension field %d wire type %d (only 1 raw exists)", f.num, f.wireType)
			continue
		}
		if bytes.HasPrefix(f.data, protobufMagic) {
			w.walkEnvelope(f.data, path+".raw")
			continue
		}
		w.fields = append(w.fields, fmt.Sprintf("%s.raw = %q", path, clip(string(f.data))))
	}
}

// walkEnvelope reads magic + runtime.Unknown and walks the object inside by its kind. It
// returns the Unknown.
func (w *wireWalk) walkEnvelope(data []byte, path string) *runtime.Unknown {
	if !bytes.HasPrefix(data, protobufMagic) {
		w.problem(path, "does not start with the magic k8s\\x00: % x", data[:min(len(data), 8)])
		return nil
	}
	body := data[len(protobufMagic):]
	w.walkMessage(body, reflect.TypeOf(runtime.Unknown{}), path+"(Unknown)")
	var unk runtime.Unknown
	if err := unk.Unmarshal(body); err != nil {
		w.problem(path, "runtime.Unknown does not decode: %v", err)
		return nil
	}
	if unk.ContentEncoding != "" || (unk.ContentType != "" && unk.ContentType != protobufType) {
		w.problem(path, "Unknown.contentEncoding %q contentType %q, want both empty", unk.ContentEncoding, unk.ContentType)
	}
	gvk := schema.FromAPIVersionAndKind(unk.APIVersion, unk.Kind)
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		w.problem(path, "Unknown.typeMeta %s/%s is no kind Go knows: %v", unk.APIVersion, unk.Kind, err)
		return &unk
	}
	w.walkMessage(unk.Raw, reflect.TypeOf(obj), path+"("+unk.Kind+")")
	return &unk
}

func payloadHint(f wireField) string {
	switch f.wireType {
	case 0:
		return fmt.Sprintf(", varint %d", f.varint)
	case 2:
		return fmt.Sprintf(", %d bytes %q", len(f.data), clip(string(f.data)))
	}
	return ""
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// readFrames reads up to n length-prefixed watch frames (4-byte big-endian length).
func readFrames(r io.Reader, n int) ([][]byte, error) {
	var frames [][]byte
	for len(frames) < n {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return frames, fmt.Errorf("reading frame %d's length: %v", len(frames), err)
		}
		l := binary.BigEndian.Uint32(size[:])
		if l > 16<<20 {
			return frames, fmt.Errorf("frame %d claims %d bytes: not a length-delimited protobuf frame (first bytes % x)", len(frames), l, size)
		}
		frame := make([]byte, l)
		if _, err := io.ReadFull(r, frame); err != nil {
			return frames, fmt.Errorf("reading frame %d (%d bytes): %v", len(frames), l, err)
		}
		frames = append(frames, frame)
	}
	return frames, nil
}

// printDump prints bytes as hex (the first 256 unless full), then the fields as read, then the
// object as Go decoded it.
func printDump(title string, data []byte, full bool, walk *wireWalk, decoded interface{}) {
	fmt.Printf("---- %s: %d bytes\n", title, len(data))
	shown := data
	if !full && len(shown) > 256 {
		shown = shown[:256]
	}
	for _, line := range strings.Split(strings.TrimRight(hex.Dump(shown), "\n"), "\n") {
		fmt.Printf("    | %s\n", line)
	}
	if len(shown) < len(data) {
		fmt.Printf("    | ... %d more bytes (-dump-full prints them)\n", len(data)-len(shown))
	}
	fmt.Printf("---- fields as read against Go's protobuf tags (#field number):\n")
	for _, f := range walk.fields {
		fmt.Printf("    | %s\n", f)
	}
	if decoded != nil {
		out, _ := json.MarshalIndent(decoded, "    | ", "  ")
		fmt.Printf("---- decoded by Go's %T, as JSON:\n    | %s\n", decoded, out)
	}
	fmt.Printf("---- end of %s\n", title)
}
