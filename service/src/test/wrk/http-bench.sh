#!/usr/bin/env bash
# HTTP load on loopback with wrk (Debian package "wrk"): starts the service from the fat jar on
# the in-memory embedded engine, then measures intern (10 new strings per request) and lookup
# (10 ids per request) with 32 connections for 10 s each. Run from the repository root after
# `mvn -B -ntp -q package -DskipTests`.
set -euo pipefail
jar=$(ls service/target/vertx-fdb-coordination-service-*-fat.jar)
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
python3 - "$work/config.json" <<'PY'
import json, sys
c = json.load(open("conf/config.json"))
c["store"]["dataDirectory"] = None
json.dump(c, open(sys.argv[1], "w"))
PY
java -jar "$jar" "$work/config.json" > "$work/service.log" 2>&1 &
pid=$!
for _ in $(seq 1 50); do curl -sf http://127.0.0.1:8080/health > /dev/null && break; sleep 0.2; done
echo "== intern, 10 new strings per request"
wrk -t2 -c32 -d10s --latency -s service/src/test/wrk/intern.lua http://127.0.0.1:8080
ids=$(curl -s -X POST http://127.0.0.1:8080/interners/bench/intern -H 'content-type: application/json' \
  -d '{"strings":["l1","l2","l3","l4","l5","l6","l7","l8","l9","l10"]}' \
  | python3 -c 'import json, sys; print(",".join("\"%s\"" % i for i in json.load(sys.stdin)["ids"]))')
{ echo "IDS = {$ids}"; cat service/src/test/wrk/lookup.lua; } > "$work/lookup.lua"
echo "== lookup, 10 ids per request"
wrk -t2 -c32 -d10s --latency -s "$work/lookup.lua" http://127.0.0.1:8080
