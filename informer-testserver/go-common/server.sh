# Sourced by the Go checks' run.sh: builds the informer-testserver binary (unless
# INFORMER_TESTSERVER_BIN names one), starts it on a free port and sets `url` to its address;
# the server stops when the script exits. Needs `workspace` (the repository root) and the
# caller's `say` and `die`.

server_bin=${INFORMER_TESTSERVER_BIN:-}
if [ -z "$server_bin" ]; then
    say "building informer-testserver (cargo build -p informer-testserver --features cli)"
    (cd "$workspace" && cargo build --quiet -p informer-testserver --features cli) || die "cargo build failed"
    server_bin=${CARGO_TARGET_DIR:-$workspace/target}/debug/informer-testserver
fi
[ -x "$server_bin" ] || die "no server binary at $server_bin"

server_log=$(mktemp "${TMPDIR:-/tmp}/informer-testserver.XXXXXX.log")
"$server_bin" --port 0 >"$server_log" 2>&1 &
server_pid=$!
stop_server() {
    if kill -0 "$server_pid" 2>/dev/null; then
        kill -INT "$server_pid" 2>/dev/null || true
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.2
        done
        kill -KILL "$server_pid" 2>/dev/null || true
    fi
    rm -f "$server_log"
}
trap stop_server EXIT

url=
for _ in $(seq 1 150); do
    url=$(sed -n 's/^listening on \(http:\/\/[^ ]*\).*/\1/p' "$server_log" | head -n 1)
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$server_log" >&2; die "the server exited"; }
    sleep 0.2
done
[ -n "$url" ] || { cat "$server_log" >&2; die "the server printed no 'listening on' line within 30 s"; }
say "server at $url"
