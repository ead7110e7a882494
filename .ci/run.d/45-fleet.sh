#!/usr/bin/env bash
# The fleet (issue 18): three modelstub instances behind HAProxy, 60 sessions from three client
# processes, one instance stopped (test/fleet/fleet-test.mjs, on deploy/haproxy/haproxy.cfg as
# shipped). Issue 28: every session whose calls move (SIGTERM, a restart, a flapping health
# check, SIGKILL) sees a new x-modelstub-episode; the HAProxy run starts with FLEET_BUSY busy
# loops (default 18: with the fleet's own processes, a load of about 20 on 2 cores) and fails on
# any DOWN transition of a healthy instance; the same test then runs behind nginx
# (deploy/nginx/nginx.conf). Each run prints what clients saw when an instance was killed
# mid-call. Then the deployment files: `haproxy -c` on both HAProxy configs, `nginx -t`, the Kubernetes
# manifests and the Envoy config through .ci/fleet/manifest-check (Go: strict decoding into the
# Kubernetes and Envoy types, Envoy's proto validation rules, cross-references; its header says
# what it does not check), the ConfigMap's script through `modelstub validate`, and the checker
# itself fed misspelt and Pod-Security-violating copies, which it must refuse. Installs haproxy
# and nginx with apt-get when missing.
# Ends with "N passed, N failed" (every check of every part).
set -uo pipefail
cd "$(dirname "$0")/../.."
t0=$SECONDS
passed=0
failed=0
tmp="$(mktemp -d /tmp/modelstub-fleet-ci.XXXXXX)"
fleet_pid=""
# The fleet test stops its instances and HAProxy itself, on its way out and on SIGTERM/SIGINT;
# if this step is interrupted, pass the signal on and wait for it to do so.
cleanup() { if [ -n "$fleet_pid" ]; then kill "$fleet_pid" 2>/dev/null; wait "$fleet_pid" 2>/dev/null; fi; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
add() { # adds the totals of the last "N passed, N failed" line of a log
  local line
  line="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1" | tail -n 1)"
  if [ -z "$line" ]; then failed=$(( failed + 1 )); return; fi
  read -r p _ f _ <<<"$line"
  passed=$(( passed + p )); failed=$(( failed + f ))
}
one() { # one check of this script: name, then the command
  local name="$1"; shift
  if "$@" >"$tmp/one.log" 2>&1; then passed=$(( passed + 1 )); echo "ok   $name"
  else failed=$(( failed + 1 )); echo "FAIL $name"; sed 's/^/     /' "$tmp/one.log"; fi
}
refuses() { ! "$@"; }

missing=()
command -v haproxy >/dev/null || missing+=(haproxy)
command -v nginx >/dev/null || missing+=(nginx)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "fleet: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# HTTP/2 to servers over cleartext (proto h2) and tcp-check send-binary need HAProxy 2.2 or later.
hv="$(haproxy -v | sed -nE '1s/.*version ([0-9]+\.[0-9]+).*/\1/p')"
one "haproxy $hv is 2.2 or later" awk -v v="$hv" 'BEGIN { split(v, a, "."); exit !(a[1] > 2 || (a[1] == 2 && a[2] >= 2)) }'
[ -f dist/src/port/grpc-port.js ] || flock /tmp/modelstub-build.lock npm run build --silent

fleet_run() { # the proxy, then the fleet test's own options
  local proxy="$1" t1=$SECONDS
  shift
  echo "== the fleet behind $proxy"
  : >"$tmp/fleet-$proxy.log" # there before tail looks for it
  node test/fleet/fleet-test.mjs --proxy "$proxy" "$@" >"$tmp/fleet-$proxy.log" 2>&1 &
  fleet_pid=$!
  tail -f --pid="$fleet_pid" -n +1 "$tmp/fleet-$proxy.log" &
  wait "$fleet_pid"
  fleet_pid=""
  wait
  add "$tmp/fleet-$proxy.log"
  echo "fleet: the fleet test behind $proxy took $(( SECONDS - t1 )) s"
}
fleet_run haproxy --busy "${FLEET_BUSY:-18}"
fleet_run nginx

echo "== the deployment files"
cfg_env=(FLEET_BIND=127.0.0.1:1 FLEET_ADMIN_SOCKET="$tmp/admin.sock" MS1_GRPC=127.0.0.1:2 MS1_HTTP=127.0.0.1:3 MS2_GRPC=127.0.0.1:4 MS2_HTTP=127.0.0.1:5 MS3_GRPC=127.0.0.1:6 MS3_HTTP=127.0.0.1:7)
one "haproxy -c deploy/haproxy/haproxy.cfg" env "${cfg_env[@]}" haproxy -c -q -f deploy/haproxy/haproxy.cfg
one "haproxy -c deploy/haproxy/haproxy-k8s.cfg" env FLEET_ADMIN_SOCKET="$tmp/admin.sock" haproxy -c -q -f deploy/haproxy/haproxy-k8s.cfg
# nginx reads no environment: render the ${...} names as the file's header says, then nginx -t.
mkdir -p "$tmp/nginx"
sed -e "s|\${FLEET_GRPC_BIND}|127.0.0.1:1|; s|\${FLEET_HTTP_BIND}|127.0.0.1:2|; s|\${NGINX_PREFIX}|$tmp/nginx|g" \
    -e 's|\${MS\([1-3]\)_GRPC}|127.0.0.1:1\1|; s|\${MS\([1-3]\)_HTTP}|127.0.0.1:2\1|' deploy/nginx/nginx.conf > "$tmp/nginx/nginx.conf"
one "the rendered deploy/nginx/nginx.conf leaves no \${...} unrendered" bash -c "! grep -v '^ *#' $tmp/nginx/nginx.conf | grep -n '[$]{'"
one "nginx -t deploy/nginx/nginx.conf" nginx -t -q -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e stderr
mkdir -p "$tmp/scripts"
(cd .ci/fleet/manifest-check && go run . -scripts "$tmp/scripts" ../../../deploy/k8s/*.yaml) 2>&1 | tee "$tmp/manifests.log"
add "$tmp/manifests.log"
for s in "$tmp"/scripts/*.yaml; do one "modelstub validate ConfigMap script $(basename "$s")" node bin/modelstub.js validate "$s"; done
# The checker must refuse what is wrong: a misspelt probe field, an Envoy field that does not
# exist, and a route that hashes another header.
sed 's/readinessProbe:/readinesProbe:/' deploy/k8s/deployment.yaml > "$tmp/bad-deployment.yaml"
sed 's/stream_idle_timeout:/stream_idle_timeout_ms:/' deploy/k8s/envoy.yaml > "$tmp/bad-envoy-field.yaml"
sed 's/header_name: x-modelstub-session/header_name: x-session/' deploy/k8s/envoy.yaml > "$tmp/bad-envoy-hash.yaml"
for bad in bad-deployment bad-envoy-field bad-envoy-hash; do
  one "manifest-check refuses $bad.yaml" refuses bash -c "cd .ci/fleet/manifest-check && go run . $tmp/$bad.yaml"
done
# Pod Security "restricted" and the memory arithmetic (issue 28, item 7): each copy below breaks
# one rule in an otherwise whole set of manifests, and the checker must fail, on that alone
# (every FAIL line matches the pattern given).
( cd .ci/fleet/manifest-check && go build -o "$tmp/manifest-check" . )
refuses_one() { # name, file, sed expression, pattern (grep -E) every failure must match
  local set="$tmp/set-$1"
  mkdir -p "$set" && cp deploy/k8s/*.yaml "$set/"
  sed -e "$3" "deploy/k8s/$2" > "$set/$2"
  cmp -s "deploy/k8s/$2" "$set/$2" && { echo "the edit '$3' changed nothing in $2"; return 1; }
  "$tmp/manifest-check" "$set"/*.yaml > "$set.log" 2>&1 && { echo "accepted"; return 1; }
  grep -q '^FAIL' "$set.log" && ! grep '^FAIL' "$set.log" | grep -vqE "$4" || { cat "$set.log"; return 1; }
}
one "manifest-check refuses a container that may escalate privileges" refuses_one escalate deployment.yaml 's/allowPrivilegeEscalation: false/allowPrivilegeEscalation: true/' "allowPrivilegeEscalation must be false"
one "manifest-check refuses a misspelt readOnlyRootFilesystem" refuses_one misspelt deployment.yaml '0,/readOnlyRootFilesystem:/s//readOnlyRootFileSystem:/' 'unknown field "[^"]*readOnlyRootFileSystem"|matches no Deployment'
one "manifest-check refuses capabilities that keep all but NET_RAW" refuses_one caps deployment.yaml 's/drop: \["ALL"\]/drop: ["NET_RAW"]/' "capabilities.drop must hold ALL"
one "manifest-check refuses a pod without a seccomp profile" refuses_one seccomp deployment.yaml '/seccompProfile:/,+1d' "seccompProfile.type must be RuntimeDefault"
one "manifest-check refuses episode caps past the memory limit (the image's 64 MiB per episode)" refuses_one caps-memory deployment.yaml 's/value: "2097152"/value: "67108864"/' "over the 1Gi limit"
one "manifest-check refuses running as root" refuses_one root deployment.yaml 's/runAsNonRoot: true/runAsNonRoot: false/g; s/runAsUser: 1000/runAsUser: 0/g' "runAsNonRoot must be true|not the image's 1000"
one "manifest-check refuses Envoy's admin on every interface" refuses_one envoy-admin envoy.yaml 's/address: 127.0.0.1, port_value: 9901/address: 0.0.0.0, port_value: 9901/' "admin API listens on loopback only"

echo "fleet: step took $(( SECONDS - t0 )) s"
printf '%s passed, %s failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
