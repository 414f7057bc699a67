// Package v1 holds a copy of the two fields of apimachinery's metav1.TypeMeta, under the same
// package and type names, so that the decoding errors of a body's kind name the same Go type
// (v1.TypeMeta) without building apimachinery's meta/v1 package.
package v1

// TypeMeta is the kind of an object, as metav1.TypeMeta declares it.
type TypeMeta struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}
