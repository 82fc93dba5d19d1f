#!/usr/bin/env bash
# Runs a benchmark main class of one module with that module's test class path, from the
# repository root: bench/run.sh MODULE CLASS [ARGS...] (CLASS without its package, e.g.
# bench/run.sh service ServicePathBenchmark memory). JVM options (-Dbench.seconds=5, -Xmx2g, ...)
# go in JAVA_OPTS. Builds the module and those it depends on first (test-compile, offline when
# MVN_OFFLINE=1), then runs the class in a JVM of its own: Maven's JVM stays off the cores.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: bench/run.sh MODULE CLASS [ARGS...]   (MODULE: embedded, layers, cluster or service)" >&2
  exit 2
fi
module=$1; class=$2; shift 2
cd "$(dirname "$0")/.."
offline=${MVN_OFFLINE:+-o}
cpfile=$(mktemp)
trap 'rm -f "$cpfile"' EXIT
# In one reactor run, so that the sibling modules resolve to their target directories (never to a
# repository copy that may be stale); the module itself comes last and writes the file last.
mvn -B -ntp -q $offline -pl "$module" -am test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile="$cpfile" >/dev/null
exec java ${JAVA_OPTS:-} -cp "$module/target/test-classes:$module/target/classes:$(cat "$cpfile")" "io.github.fdbcoord.bench.$class" "$@"
