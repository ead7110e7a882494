// The cross-references part of manifest-check (see main.go for what the whole check covers).
package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func crossCheck(all *objects) {
	podLabels := map[string]map[string]string{}
	ports := map[string]bool{}
	for _, d := range all.deployments {
		name := "Deployment " + d.Name
		if d.Spec.Selector == nil || !selects(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
			check(name+": its selector matches its pod labels", fmt.Errorf("selector %v, labels %v", d.Spec.Selector, d.Spec.Template.Labels))
		} else {
			check(name+": its selector matches its pod labels", nil)
		}
		podLabels[d.Name] = d.Spec.Template.Labels
		volumes := map[string]corev1.Volume{}
		for _, v := range d.Spec.Template.Spec.Volumes {
			volumes[v.Name] = v
		}
		var problems []string
		for _, c := range d.Spec.Template.Spec.Containers {
			cports := map[int32]bool{}
			for _, p := range c.Ports {
				cports[p.ContainerPort] = true
				ports[p.Name] = true
			}
			for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
				if p == nil {
					continue
				}
				if p.GRPC != nil && !cports[p.GRPC.Port] {
					problems = append(problems, fmt.Sprintf("container %s: gRPC probe port %d is not a container port", c.Name, p.GRPC.Port))
				}
				if p.HTTPGet != nil && p.HTTPGet.Port.StrVal != "" && !ports[p.HTTPGet.Port.StrVal] {
					problems = append(problems, fmt.Sprintf("container %s: probe port %q is not a named port", c.Name, p.HTTPGet.Port.StrVal))
				}
			}
			for _, m := range c.VolumeMounts {
				if _, ok := volumes[m.Name]; !ok {
					problems = append(problems, fmt.Sprintf("container %s mounts %q, which is no volume", c.Name, m.Name))
				}
			}
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					fmt.Printf("note Deployment %s: needs Secret %s (key %s), not shipped here\n", d.Name, e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key)
				}
			}
		}
		for _, v := range volumes {
			if v.ConfigMap != nil && !hasConfigMap(all, v.ConfigMap.Name) {
				problems = append(problems, fmt.Sprintf("volume %s: ConfigMap %s is not defined", v.Name, v.ConfigMap.Name))
			}
			if v.PersistentVolumeClaim != nil && !hasClaim(all, v.PersistentVolumeClaim.ClaimName) {
				problems = append(problems, fmt.Sprintf("volume %s: claim %s is not defined", v.Name, v.PersistentVolumeClaim.ClaimName))
			}
		}
		check(name+": probe ports, volume mounts, ConfigMaps and claims resolve", joinErr(problems))
	}
	for _, s := range all.services {
		var problems []string
		var owner string
		for n, l := range podLabels {
			if selects(s.Spec.Selector, l) {
				owner = n
			}
		}
		if owner == "" {
			problems = append(problems, fmt.Sprintf("selector %v matches no Deployment's pods", s.Spec.Selector))
		}
		for _, p := range s.Spec.Ports {
			if p.TargetPort.StrVal != "" && !ports[p.TargetPort.StrVal] {
				problems = append(problems, fmt.Sprintf("port %s: targetPort %q is no container's named port", p.Name, p.TargetPort.StrVal))
			}
		}
		check("Service "+s.Name+": selects "+owner+"'s pods, its target ports exist", joinErr(problems))
	}
	for _, p := range all.pdbs {
		var owner string
		for n, l := range podLabels {
			if p.Spec.Selector != nil && selects(p.Spec.Selector.MatchLabels, l) {
				owner = n
			}
		}
		var err error
		if owner == "" {
			err = fmt.Errorf("selector matches no Deployment's pods")
		}
		check("PodDisruptionBudget "+p.Name+": selects "+owner+"'s pods", err)
	}
}

func hasConfigMap(all *objects, name string) bool {
	for _, c := range all.configMaps {
		if c.Name == name {
			return true
		}
	}
	return false
}

func hasClaim(all *objects, name string) bool {
	for _, c := range all.claims {
		if c.Name == name {
			return true
		}
	}
	return false
}
