#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and kubectl of the Kubernetes release pinned in
# go.mod (beside this script) into TOOLS_DIR, once: a directory that already holds all three is
# reused, so the directory's name carries the version (target/tools/kubernetes-vX.Y.Z).
# kubectl is built too, even when one is on PATH, so that client and server are the same release.
set -euo pipefail

# Absolute: the build runs from this script's folder.
tools_dir=$(realpath -m "${1:?usage: build.sh TOOLS_DIR}")
here=$(cd "$(dirname "$0")" && pwd)
go=${GO:-go}
programs=(kube-apiserver kube-controller-manager kubectl)

missing=0
for program in "${programs[@]}"; do
  [ -x "$tools_dir/$program" ] || missing=1
done
if [ "$missing" = 0 ]; then
  echo "reusing $tools_dir (kube-apiserver, kube-controller-manager, kubectl)"
  exit 0
fi

version=$(sed -n 's#^require k8s.io/kubernetes \(v[0-9.]*\)$#\1#p' "$here/go.mod")
needed=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$here/go.mod")
have=$("$go" env GOVERSION | sed 's/^go//')
# The release needs a newer Go than e.g. Debian 12's golang-go (1.19): say so rather than
# fail deep in a compile. Go 1.21 and later fetch the toolchain go.mod names from the module
# proxy themselves when allowed (GOTOOLCHAIN=auto).
if [ "$(printf '%s\n%s\n' "$needed" "$have" | sort -V | head -n 1)" != "$needed" ]; then
  if [ "$(printf '1.21\n%s\n' "$have" | sort -V | head -n 1)" = 1.21 ]; then
    echo "Go $have is older than the $needed that Kubernetes $version needs: GOTOOLCHAIN=auto"
    export GOTOOLCHAIN=auto
  else
    echo "Go $have is older than the $needed that Kubernetes $version needs; install Go >= $needed" >&2
    exit 1
  fi
fi

# The version stamps its own build scripts would set: without them every program calls itself
# v0.0.0-master and kubectl warns of a version skew with the server.
major=${version#v}; major=${major%%.*}
minor=${version#v*.}; minor=${minor%%.*}
ldflags=""
for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $package.gitVersion=$version -X $package.gitMajor=$major -X $package.gitMinor=$minor"
  ldflags+=" -X $package.gitTreeState=clean"
done

mkdir -p "$tools_dir"
echo "building Kubernetes $version (${programs[*]}) into $tools_dir: minutes on a cold Go cache"
start=$(date +%s)
# Into a scratch directory first, so an interrupted build never leaves a half set to reuse.
scratch=$(mktemp -d "$tools_dir/.build.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
(cd "$here" && "$go" build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$scratch/" \
  "${programs[@]/#/k8s.io/kubernetes/cmd/}")
for program in "${programs[@]}"; do
  mv "$scratch/$program" "$tools_dir/$program"
done
echo "built in $(( $(date +%s) - start )) s"
