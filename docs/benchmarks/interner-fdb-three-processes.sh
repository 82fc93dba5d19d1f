#!/usr/bin/env bash
# As run for issue 36 (2026-11-28): needs ../shared/fdb at /work/shared/fdb; writes under /tmp/p36/fdb3.
# Three fdbserver processes on loopback, roles split by process class: stateless (coordinator, cluster
# controller, master, GRV and commit proxies, resolver), log (transaction log), storage (storage server).
set -e
D=/tmp/p36/fdb3; mkdir -p $D
F=/work/shared/fdb/bin
echo "p36three:$(head -c8 /dev/urandom | od -An -tx1 | tr -d ' \n')@127.0.0.1:4741" > $D/fdb.cluster
i=0
for cls in stateless log storage; do
  port=$((4741 + i)); mkdir -p $D/$cls/data $D/$cls/logs
  nohup $F/fdbserver -p 127.0.0.1:$port -C $D/fdb.cluster -d $D/$cls/data -L $D/$cls/logs --class $cls --storage-memory 6GiB \
    --locality-zoneid z$i --locality-machineid m$i > $D/$cls/out.txt 2>&1 &
  echo $! > $D/$cls/pid
  i=$((i + 1))
done
sleep 1
$F/fdbcli -C $D/fdb.cluster --exec "configure new single memory" --timeout 60
$F/fdbcli -C $D/fdb.cluster --exec "configure commit_proxies=1 grv_proxies=1 resolvers=1 logs=1" --timeout 60 || true
