#!/usr/bin/env bash
# Runs a command beside a real FoundationDB it starts itself: one fdbserver 7.3 from ../shared/fdb (beside the
# repository root; FDB_BIN names another directory holding fdbserver, fdbcli and lib/libfdb_c.so), configured
# `single memory` on a free loopback port in a temporary directory, removed afterwards.
# bench/with-fdb.sh COMMAND [ARGS...]: the command sees FDB_CLUSTER_FILE and LD_LIBRARY_PATH, and may name the
# cluster file as "$FDB_CLUSTER_FILE" in its own arguments when quoted (e.g. JAVA_OPTS), e.g.
#   bench/with-fdb.sh sh -c 'JAVA_OPTS="-Dbench.clusterFile=$FDB_CLUSTER_FILE" bench/run.sh cluster RecipesBenchmark'
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bench/with-fdb.sh COMMAND [ARGS...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${FDB_BIN:-$here/../shared/fdb}
server=$bin/bin/fdbserver; cli=$bin/bin/fdbcli
[ -x "$server" ] || { server=$bin/fdbserver; cli=$bin/fdbcli; }
[ -x "$server" ] || { echo "no fdbserver under $bin (set FDB_BIN)" >&2; exit 1; }
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "bench:b$port@127.0.0.1:$port" > "$dir/fdb.cluster"
mkdir -p "$dir/data" "$dir/logs"
"$server" -p "127.0.0.1:$port" -C "$dir/fdb.cluster" -d "$dir/data" -L "$dir/logs" > "$dir/server.out" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-$bin/lib}
timeout 60 "$cli" -C "$dir/fdb.cluster" --exec "configure new single memory" --timeout 50 >/dev/null
export FDB_CLUSTER_FILE=$dir/fdb.cluster
echo "with-fdb: fdbserver $("$server" --version | head -1) on 127.0.0.1:$port (single memory), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$@"
