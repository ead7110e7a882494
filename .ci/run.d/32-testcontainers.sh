#!/usr/bin/env bash
# testcontainers (issue 14): docs/container/testcontainers/test_modelstub.py, which
# docs/container.md shows verbatim, runs with pytest against the image built from the Dockerfile,
# through podman's Docker-compatible API on a socket of its own. Host networking
# (TESTCONTAINERS_HOST_NETWORK=1) and no Ryuk (testcontainers' reaper is an image on Docker Hub):
# the host's network is left as it was, and the step checks so. Ends with "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."
t0=$SECONDS
. .ci/container/podman-env.sh
dir=docs/container/testcontainers
image=localhost/modelstub-ci-testcontainers:latest
venv=.cache/testcontainers-venv
work="$(mktemp -d)"
service=""
cleanup() {
  if [ -n "$service" ]; then kill "$service" 2>/dev/null || true; wait "$service" 2>/dev/null || true; fi
  podman rmi -f "$image" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
totals() { echo "testcontainers: step took $(( SECONDS - t0 )) s"; echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; }

# The page shows the file that runs here, character for character.
if node -e '
  const fs = require("fs");
  const [page, file] = process.argv.slice(1);
  const marker = "<!-- not run: .ci/run.d/32-testcontainers.sh runs this file, " + file + ", with pytest -->\n```python\n";
  const md = fs.readFileSync(page, "utf8"), at = md.indexOf(marker);
  const block = at < 0 ? null : md.slice(at + marker.length, md.indexOf("```\n", at + marker.length));
  process.exit(block !== null && block === fs.readFileSync(file, "utf8") ? 0 : 1);
' docs/container.md "$dir/test_modelstub.py"; then
  ok "docs/container.md shows $dir/test_modelstub.py verbatim"
else
  bad "docs/container.md does not show $dir/test_modelstub.py verbatim after its marker line"
fi

base="$(bash .ci/container/make-base.sh)"
# --layers=false: no intermediate stage images are kept, so removing the image by name removes all it made.
if podman build --format docker --pull=never --network=host --layers=false --build-arg NODE_IMAGE="$base" -t "$image" . > "$work/build.log" 2>&1; then
  ok "podman build of the Dockerfile as $image"
else
  tail -n 20 "$work/build.log"; bad "podman build"; totals; exit 1
fi

# A venv of the page's pinned requirements, rebuilt when they change.
if ! { [ -x "$venv/bin/pytest" ] && cmp -s "$dir/requirements.txt" "$venv/requirements.txt"; }; then
  rm -rf "$venv" && python3 -m venv "$venv" && "$venv/bin/pip" install -q -r "$dir/requirements.txt" && cp "$dir/requirements.txt" "$venv/requirements.txt"
fi

links_before="$(ip -o link | cut -d: -f2 | sort)"; rules_before="$(iptables -S 2>/dev/null; iptables -t nat -S 2>/dev/null)"
containers_before="$(podman ps -aq | sort)"
podman system service --time=0 "unix://$work/podman.sock" > "$work/service.log" 2>&1 &
service=$!
for _ in $(seq 200); do [ -S "$work/podman.sock" ] && break; sleep 0.05; done
if DOCKER_HOST="unix://$work/podman.sock" TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_NETWORK=1 MODELSTUB_IMAGE="$image" \
  "$venv/bin/pytest" -q -p no:cacheprovider "$dir/test_modelstub.py" --junitxml="$work/junit.xml"; then :; fi
if [ -f "$work/junit.xml" ]; then
  read -r t f < <(python3 -c 'import sys, xml.etree.ElementTree as E; s = E.parse(sys.argv[1]).getroot(); s = s if s.tag == "testsuite" else s[0]; print(int(s.get("tests")) - int(s.get("skipped", 0)), int(s.get("failures")) + int(s.get("errors")))' "$work/junit.xml")
  passed=$((passed + t - f)); failed=$((failed + f))
  [ "$t" -gt 0 ] || bad "pytest collected no test"
else
  bad "pytest wrote no report"
fi
[ "$(podman ps -aq | sort)" = "$containers_before" ] && ok "every container the tests started is gone" || bad "containers left behind: $(podman ps -a --format '{{.Names}}')"
[ "$(ip -o link | cut -d: -f2 | sort)" = "$links_before" ] && [ "$(iptables -S 2>/dev/null; iptables -t nat -S 2>/dev/null)" = "$rules_before" ] \
  && ok "the host's links and iptables rules are as they were" || bad "the host's network changed"
totals
