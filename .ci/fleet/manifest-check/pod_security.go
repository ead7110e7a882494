// The Pod Security part of manifest-check (see main.go for what the whole check covers): every
// Deployment's pod template against the Pod Security Standards' "restricted" profile (which
// includes "baseline"), as the PodSecurity admission controller checks it at
// `pod-security.kubernetes.io/enforce: restricted`, version 1.25 and later
// (kubernetes.io/docs/concepts/security/pod-security-standards). Plus the project's own rules
// beyond the profile: a read-only root filesystem, and a memory limit on every container.
package main

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// restrictedVolumes are the volume types "restricted" allows.
func restrictedVolume(v corev1.Volume) bool {
	s := v.VolumeSource
	return s.ConfigMap != nil || s.CSI != nil || s.DownwardAPI != nil || s.EmptyDir != nil || s.Ephemeral != nil ||
		s.PersistentVolumeClaim != nil || s.Projected != nil || s.Secret != nil
}

// safeSysctls are the sysctls "baseline" allows.
var safeSysctls = map[string]bool{
	"kernel.shm_rmid_forced": true, "net.ipv4.ip_local_port_range": true, "net.ipv4.ip_unprivileged_port_start": true,
	"net.ipv4.tcp_syncookies": true, "net.ipv4.ping_group_range": true, "net.ipv4.ip_local_reserved_ports": true,
	"net.ipv4.tcp_keepalive_time": true, "net.ipv4.tcp_fin_timeout": true, "net.ipv4.tcp_keepalive_intvl": true,
	"net.ipv4.tcp_keepalive_probes": true,
}

// podSecurityProblems lists what "restricted" (and the project's own rules) refuse in a pod spec.
func podSecurityProblems(spec corev1.PodSpec) []string {
	var p []string
	add := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	pod := spec.SecurityContext
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	// baseline
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		add("hostNetwork, hostPID and hostIPC must be unset or false")
	}
	for _, s := range pod.Sysctls {
		if !safeSysctls[s.Name] {
			add("sysctl %s is not a safe sysctl", s.Name)
		}
	}
	if pod.SELinuxOptions != nil && (pod.SELinuxOptions.User != "" || pod.SELinuxOptions.Role != "") {
		add("pod seLinuxOptions may not set user or role")
	}
	if pod.WindowsOptions != nil && pod.WindowsOptions.HostProcess != nil && *pod.WindowsOptions.HostProcess {
		add("pod windowsOptions.hostProcess must be false")
	}
	// restricted, pod level
	for _, v := range spec.Volumes {
		if !restrictedVolume(v) {
			add("volume %s: only configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected and secret volumes are allowed", v.Name)
		}
	}
	if pod.RunAsUser != nil && *pod.RunAsUser == 0 {
		add("pod runAsUser must not be 0")
	}
	podSeccomp := pod.SeccompProfile
	if podSeccomp != nil && podSeccomp.Type != corev1.SeccompProfileTypeRuntimeDefault && podSeccomp.Type != corev1.SeccompProfileTypeLocalhost {
		add("pod seccompProfile.type must be RuntimeDefault or Localhost, not %s", podSeccomp.Type)
	}
	all := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	for _, e := range spec.EphemeralContainers {
		all = append(all, corev1.Container(e.EphemeralContainerCommon))
	}
	for _, c := range all {
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		where := "container " + c.Name
		// baseline, container level
		if sc.Privileged != nil && *sc.Privileged {
			add("%s: privileged must be false", where)
		}
		for _, port := range c.Ports {
			if port.HostPort != 0 {
				add("%s: hostPort %d is not allowed", where, port.HostPort)
			}
		}
		if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
			add("%s: procMount must be Default", where)
		}
		if sc.SELinuxOptions != nil && (sc.SELinuxOptions.User != "" || sc.SELinuxOptions.Role != "") {
			add("%s: seLinuxOptions may not set user or role", where)
		}
		// restricted, container level
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			add("%s: allowPrivilegeEscalation must be false", where)
		}
		nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) || (sc.RunAsNonRoot == nil && pod.RunAsNonRoot != nil && *pod.RunAsNonRoot)
		if !nonRoot {
			add("%s: runAsNonRoot must be true (on the container or the pod)", where)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			add("%s: runAsUser must not be 0", where)
		}
		seccomp := sc.SeccompProfile
		if seccomp == nil {
			seccomp = podSeccomp
		}
		if seccomp == nil {
			add("%s: seccompProfile.type must be RuntimeDefault or Localhost (on the container or the pod)", where)
		} else if seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault && seccomp.Type != corev1.SeccompProfileTypeLocalhost {
			add("%s: seccompProfile.type must be RuntimeDefault or Localhost, not %s", where, seccomp.Type)
		}
		dropsAll := false
		if sc.Capabilities != nil {
			for _, d := range sc.Capabilities.Drop {
				if d == "ALL" {
					dropsAll = true
				}
			}
			for _, a := range sc.Capabilities.Add {
				if a != "NET_BIND_SERVICE" {
					add("%s: capability %s may not be added (only NET_BIND_SERVICE)", where, a)
				}
			}
		}
		if !dropsAll {
			add("%s: capabilities.drop must hold ALL", where)
		}
		// the project's own
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			add("%s: readOnlyRootFilesystem must be true (mount an emptyDir where it writes)", where)
		}
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
			add("%s: no memory limit", where)
		}
	}
	return p
}

// checkPodSecurity checks every Deployment; for modelstub's own containers (args start with
// "serve"), that they run as the image's user, 1000, and that the memory limit holds the caps.
func checkPodSecurity(all *objects) {
	for _, d := range all.deployments {
		check("Deployment "+d.Name+": passes Pod Security \"restricted\", a read-only root filesystem and a memory limit per container",
			joinErr(podSecurityProblems(d.Spec.Template.Spec)))
		for _, c := range d.Spec.Template.Spec.Containers {
			if len(c.Args) == 0 || c.Args[0] != "serve" {
				continue
			}
			check(fmt.Sprintf("Deployment %s container %s: runs as the image's user 1000 and its episode caps fit its memory limit", d.Name, c.Name), modelstubFits(d, c))
		}
	}
}

// modelstubFits: uid 1000 (the image's `node`, owner of /episodes), and max-sessions times
// max-episode-bytes (recorded bytes, outside V8's heap) plus V8's heap limit plus 128 MiB for
// Node itself within the container's memory limit.
func modelstubFits(d appsv1.Deployment, c corev1.Container) error {
	var problems []string
	uid := d.Spec.Template.Spec.SecurityContext
	user := int64(-1)
	if uid != nil && uid.RunAsUser != nil {
		user = *uid.RunAsUser
	}
	if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
		user = *c.SecurityContext.RunAsUser
	}
	if user != 1000 {
		problems = append(problems, fmt.Sprintf("runs as uid %d, not the image's 1000", user))
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	num := func(name string, def int64) int64 {
		var n int64
		if v, ok := env[name]; ok {
			if _, err := fmt.Sscan(v, &n); err != nil {
				problems = append(problems, fmt.Sprintf("%s=%q is not a number", name, v))
			}
			return n
		}
		return def
	}
	sessions := num("MODELSTUB_MAX_SESSIONS", 1000)
	episode := num("MODELSTUB_MAX_EPISODE_BYTES", 64<<20)
	heap := int64(0)
	for _, f := range strings.Fields(env["NODE_OPTIONS"]) {
		if strings.HasPrefix(f, "--max-old-space-size=") {
			fmt.Sscan(strings.TrimPrefix(f, "--max-old-space-size="), &heap)
		}
	}
	if heap == 0 {
		problems = append(problems, "NODE_OPTIONS sets no --max-old-space-size: V8 sizes its heap from the node's memory, not the limit")
	}
	limit, ok := c.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		problems = append(problems, "no memory limit")
	} else if need := sessions*episode + heap<<20 + 128<<20; need > limit.Value() {
		problems = append(problems, fmt.Sprintf("%d sessions x %d episode bytes + %d MiB heap + 128 MiB = %d MiB, over the %s limit", sessions, episode, heap, need>>20, limit.String()))
	}
	return joinErr(problems)
}
