# Sourced by the container scripts: installs what a real container build needs when missing and
# points podman at settings of its own (nothing under /etc is edited). Why each setting, found
# by trying on these machines (Debian 12, root without CAP_SYS_RESOURCE, hybrid cgroups, no
# systemd): see /work/shared/notes/real-container-build.md and docs/container.md.
#  - runc, not crun: crun 1.8 refuses hybrid cgroups even with --cgroups=disabled;
#  - default_ulimits within this shell's hard limits: podman's default nofile is above them and
#    runc then fails with "error setting rlimit type 7" (nproc above 32768: "type 6");
#  - cgroupfs and a file events log: there is no systemd;
#  - host networking by default: any other mode makes podman add a bridge, iptables rules and
#    ip_forward=1 on the host (tried: even a run that then fails leaves them behind).
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  echo "container: installing podman, runc and debootstrap"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends podman runc debootstrap >/dev/null
fi
mkdir -p .cache/container
nofile="$(ulimit -Hn)"
[ "$nofile" = unlimited ] && nofile=1048576
nproc="$(ulimit -Hu)"
{ [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
cat > .cache/container/containers.conf <<CONF
[containers]
netns = "host"
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
export CONTAINERS_CONF="$PWD/.cache/container/containers.conf"
