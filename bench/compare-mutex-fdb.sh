#!/usr/bin/env bash
# Alternates the layer's MutexBenchmark of two builds of this repository on one real FoundationDB:
# bench/compare-mutex-fdb.sh BEFORE_DIR AFTER_DIR CLUSTER_FILE [ROUNDS] [BENCH_ARGS...].
# Both checkouts must have run `mvn -pl layers -am test-compile`; the class path is taken from the
# checkouts' target folders (never the shared ~/.m2 snapshots of this project's own modules).
# libfdb_c.so comes from ../shared/fdb/lib beside the project unless LD_LIBRARY_PATH names one.
set -euo pipefail
before=${1:?a checkout of the build before}; after=${2:?a checkout of the build after}
cluster=${3:?a cluster file}; rounds=${4:-3}; shift $(( $# < 4 ? $# : 4 ))
args=("$@"); [ ${#args[@]} -eq 0 ] && args=(500 3 200 5)
here=$(cd "$(dirname "$0")/.." && pwd)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-$here/../shared/fdb/lib}
classpath() {
  local dir=$1 ext
  (cd "$dir" && mvn -B -ntp -q -o -pl layers dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile="$dir/layers/target/bench-classpath.txt" >/dev/null)
  ext=$(tr ':' '\n' < "$dir/layers/target/bench-classpath.txt" | grep -v '/io/github/fdbcoord/' | paste -sd:)
  echo "$dir/layers/target/test-classes:$dir/layers/target/classes:$dir/api/target/classes:$dir/store/target/classes:$dir/embedded/target/classes:$dir/embedded/target/test-classes:$ext"
}
cp_before=$(classpath "$before"); cp_after=$(classpath "$after")
for r in $(seq 1 "$rounds"); do
  for side in before after; do
    cp=$cp_before; dir=$before; [ $side = after ] && { cp=$cp_after; dir=$after; }
    echo "== round $r $side ($dir) $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')"
    java -Xmx1g -cp "$cp" -Dbench.engines=cluster -Dbench.clusterFile="$cluster" \
      io.github.fdbcoord.bench.MutexBenchmark "${args[@]}" 2>/dev/null | grep -vE '^(JVM|==)'
  done
done
