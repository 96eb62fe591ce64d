//go:build tools

// Package testcluster only pins the Kubernetes programs that `make test-deploy` builds
// (scripts in this folder): the build tag keeps it out of every build, while `go mod tidy`
// still sees the imports and keeps their modules in go.mod and go.sum.
package testcluster

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
