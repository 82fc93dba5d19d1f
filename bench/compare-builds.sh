#!/usr/bin/env bash
# Alternates the mutex benchmarks of two builds of this repository (e.g. a worktree at the commit
# before a change and one after it): bench/compare-builds.sh BEFORE_DIR AFTER_DIR [ROUNDS].
# Each round runs MutexBenchmark (the layer's hand-offs and uncontended cycles) and
# ServicePathBenchmark's mutex rows (direct, event bus, HTTP; tryAcquire and 8 waiting acquirers)
# on the one build, then on the other, so that both see the same machine.
set -euo pipefail
before=${1:?a checkout of the build before}; after=${2:?a checkout of the build after}; rounds=${3:-3}
for dir in "$before" "$after"; do
  (cd "$dir" && mvn -B -ntp -q ${MVN_OFFLINE:+-o} -pl service -am test-compile dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="$dir/service/target/bench-classpath.txt" >/dev/null)
done
for r in $(seq 1 "$rounds"); do
  for dir in "$before" "$after"; do
    cp="$dir/service/target/test-classes:$dir/service/target/classes:$dir/layers/target/test-classes:$(cat "$dir/service/target/bench-classpath.txt")"
    echo "== round $r $dir $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"
    java -Xmx2g -cp "$cp" io.github.fdbcoord.bench.MutexBenchmark 1000 3 200 5 2>/dev/null | grep -E 'hand-offs|uncontended'
    java -Xmx2g -Dbench.seconds=3 -Dbench.rounds=1 -Dbench.only=mutex -cp "$cp" \
      io.github.fdbcoord.bench.ServicePathBenchmark memory 2>/dev/null | grep -i 'mutex'
  done
done
