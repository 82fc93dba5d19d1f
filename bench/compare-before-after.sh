#!/usr/bin/env bash
# Issue 21 before/after: the same benchmark main classes from the single-module build before the
# module split (commit f3d0d72, class path in OLD_CP_FILE) and from the new layout (NEW_CP_FILE), alternating.
set -u
OLD_CP=$(cat "${OLD_CP_FILE:?a file holding the old build class path}")
NEW_CP=$(cat "${NEW_CP_FILE:?a file holding the new build class path}")
ROUNDS=${ROUNDS:-3}
for r in $(seq 1 $ROUNDS); do
  for side in old new; do
    cp=$OLD_CP; [ $side = new ] && cp=$NEW_CP
    echo "== round $r $side $(uptime | sed 's/.*load/load/')"
    java -Xmx2g -Dbench.seconds=5 -cp "$cp" io.github.fdbcoord.bench.EngineBenchmark memory 2>/dev/null | grep 'threads, single-key'
    java -Xmx2g -cp "$cp" io.github.fdbcoord.bench.MutexBenchmark 1000 3 200 5 2>/dev/null | grep -E 'hand-offs|uncontended'
    java -Xmx2g -Dbench.seconds=5 -Dbench.warmup=2 -Dbench.modes=memory -Dbench.internOnly=true -Dbench.baseline=false -cp "$cp" io.github.fdbcoord.bench.InternerBenchmark 2>/dev/null | grep -i 'new strings'
  done
done
