#!/usr/bin/env bash
# Runs test classes of one module N times on a machine made busy on purpose, to find the tests that
# depend on timing (issue 33): bench/flake-hunt.sh [-n RUNS] [-H HOGS] [-t MINUTES] -m MODULE Class1,Class2,...
# (classes without their package, as surefire's -Dtest takes them; a Class#method works too).
#
# Builds MODULE and the modules it depends on once (test-compile, offline unless MVN_ONLINE=1), then
# runs surefire alone RUNS times (default 20) while HOGS processes (default 2, one per core of a CI
# machine) spin beside the test JVMs; the hogs die with the script. Prints, per class, the runs it
# passed and the failure messages, with the date and the load average; each run's surefire reports
# are kept under target/flake-hunt/ of the module. With -t, no run starts after MINUTES: the table
# then counts the runs made.
set -euo pipefail
usage() {
  echo "usage: bench/flake-hunt.sh [-n RUNS] [-H HOGS] [-t MINUTES] -m MODULE Class1,Class2,..." >&2
  exit 2
}
runs=20; hogs=2; module=""; minutes=""
while getopts "n:m:H:t:" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    m) module=$OPTARG ;;
    H) hogs=$OPTARG ;;
    t) minutes=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ -n "$module" ] && [ $# -eq 1 ] || usage
classes=$1
cd "$(dirname "$0")/.."
offline=-o
[ -n "${MVN_ONLINE:-}" ] && offline=""

hog_pids=()
stop_hogs() {
  for pid in "${hog_pids[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
}
trap stop_hogs EXIT
trap 'exit 130' INT TERM

load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "flake-hunt: $module $classes, $runs runs, $hogs CPU hogs, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(load)"
out="$module/target/flake-hunt"
rm -rf "$out"
mkdir -p "$out"
# One build at a time in a tree: two hunts of modules that share upstream modules would compile
# those into the same directories at once.
if ! mvn -B -ntp -q $offline -pl "$module" -am test-compile >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log" >&2
  echo "flake-hunt: the build failed (all of it in $out/build.log)" >&2
  exit 1
fi
for _ in $(seq 1 "$hogs"); do
  yes >/dev/null &
  hog_pids+=($!)
done

loads=()
deadline=""
[ -n "$minutes" ] && deadline=$(( $(date +%s) + minutes * 60 ))
made=0
for run in $(seq 1 "$runs"); do
  if [ -n "$deadline" ] && [ "$(date +%s)" -ge "$deadline" ]; then
    echo "stopped after $made runs: the $minutes minutes are over"
    break
  fi
  rm -rf "$module/target/surefire-reports"
  started=$(date +%s)
  # The test phase, not surefire:test alone: without a compile in the same session Maven resolves
  # the sibling modules from ~/.m2 (stale jars: NoSuchMethodError, child JVMs that exit 1). The
  # compile is incremental (nothing changed since the build above); upstream modules match no test.
  status=0
  mvn -B -ntp -q $offline -pl "$module" -am test -Dtest="$classes" \
    -Dsurefire.failIfNoSpecifiedTests=false -Dsurefire.rerunFailingTestsCount=0 \
    >"$out/mvn-$run.log" 2>&1 || status=$?
  if [ -d "$module/target/surefire-reports" ]; then
    cp -r "$module/target/surefire-reports" "$out/run-$run"
  else
    mkdir -p "$out/run-$run"
  fi
  loads+=("$(load)")
  echo "run $run/$runs: maven status $status, $(( $(date +%s) - started )) s, load $(load)"
  made=$run
done
stop_hogs
hog_pids=()

[ "$made" -gt 0 ] || exit 1
python3 - "$out" "$made" "$classes" "${loads[@]}" <<'EOF'
import glob, os, sys
import xml.etree.ElementTree as ET

out, runs, classes, loads = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4:]
passes = {}
seen = {}
failures = []
for run in range(1, runs + 1):
    found = set()
    for path in glob.glob(os.path.join(out, "run-%d" % run, "TEST-*.xml")):
        suite = ET.parse(path).getroot()
        name = suite.get("name").rsplit(".", 1)[-1]
        found.add(name)
        failed = []
        for case in suite.iter("testcase"):
            for problem in list(case.findall("failure")) + list(case.findall("error")):
                message = (problem.get("message") or problem.get("type") or "").strip().splitlines()
                failed.append("%s.%s: %s" % (name, case.get("name"), message[0][:300] if message else "(no message)"))
        seen[name] = seen.get(name, 0) + 1
        if not failed:
            passes[name] = passes.get(name, 0) + 1
        failures += ["run %d: %s" % (run, f) for f in failed]
    for requested in classes:
        simple = requested.split("#")[0]
        if simple not in found:
            failures.append("run %d: %s: no report (the JVM died, the build failed, or no such class; see mvn-%d.log)"
                            % (run, simple, run))

names = sorted(set(seen) | {c.split("#")[0] for c in classes})
width = max(len(n) for n in names)
print()
print("%-*s  passes/runs" % (width, "class"))
for n in names:
    print("%-*s  %d/%d" % (width, n, passes.get(n, 0), runs))
print("load average (1, 5, 15 min) after each run: %s" % "; ".join(loads))
if failures:
    print()
    print("failures:")
    for f in failures:
        print("  " + f)
EOF
