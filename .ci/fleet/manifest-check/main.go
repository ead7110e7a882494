// manifest-check: an offline check of deploy/k8s/*.yaml (issue 18), where no cluster, kubeconform
// schema download or envoy binary is available. What it checks, and only that:
//
//   - every document decodes strictly into its Kubernetes Go type (k8s.io/api, the types the API
//     server itself uses), case-sensitively as the API server does: an unknown or misspelt field
//     (a wrong case included), a duplicate field, a wrong type or a kind it does not know fails. It is not the API server's validation (no defaulting, no admission, no value rules
//     such as label syntax or port ranges beyond the types).
//   - the objects agree with each other: Deployment selectors match their pod labels, Services and
//     PodDisruptionBudgets select some Deployment's pods, named targetPorts and probe ports exist
//     in the containers, every volume mount has a volume, and every ConfigMap and claim a volume
//     names is defined. Secrets are not shipped: the ones referenced are listed.
//   - a ConfigMap key ending in envoy.yaml decodes strictly into Envoy's Bootstrap proto
//     (go-control-plane, with the typed_config types it uses registered) and passes the proto's
//     own validation rules (protoc-gen-validate's ValidateAll): not Envoy's runtime checks
//     (`envoy --mode validate` would also resolve names and check cross-field semantics). Plus:
//     every route hashes on x-modelstub-session into a RING_HASH cluster, and the clusters
//     resolve the headless Service.
//   - every Deployment's pod template meets Pod Security "restricted" (pod_security.go), runs with
//     a read-only root filesystem and a memory limit per container; modelstub's container runs
//     as the image's uid 1000 and its session and episode caps fit its memory limit.
//   - ConfigMap keys ending in .yaml other than envoy.yaml are written to -scripts DIR for
//     `modelstub validate` (the CI step runs it).
//
// Prints one "ok"/"FAIL" line per check and "N passed, N failed"; exits 1 on a failure.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

var passed, failed int

func check(name string, err error) {
	if err == nil {
		passed++
		fmt.Printf("ok   %s\n", name)
		return
	}
	failed++
	fmt.Printf("FAIL %s: %v\n", name, err)
}

type objects struct {
	deployments []appsv1.Deployment
	services    []corev1.Service
	pdbs        []policyv1.PodDisruptionBudget
	configMaps  []corev1.ConfigMap
	claims      []corev1.PersistentVolumeClaim
}

// splitDocs splits a YAML stream on lines that are exactly "---".
func splitDocs(data []byte) [][]byte {
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		if strings.TrimSpace(regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(d, "")) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func decode(file string, doc []byte, all *objects) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	// Case-sensitive, as the API server decodes (sigs.k8s.io/json): Go's encoding/json, under
	// sigs.k8s.io/yaml's UnmarshalStrict, matches field names in any case, so it took
	// `readOnlyRootFileSystem` for readOnlyRootFilesystem, a field the API server drops.
	strict := func(into any) error {
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return err
		}
		strictErrs, err := kjson.UnmarshalStrict(js, into)
		if err != nil {
			return err
		}
		if len(strictErrs) > 0 {
			return errors.Join(strictErrs...)
		}
		return nil
	}
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 Deployment":
		var o appsv1.Deployment
		if err := strict(&o); err != nil {
			return err
		}
		all.deployments = append(all.deployments, o)
	case "v1 Service":
		var o corev1.Service
		if err := strict(&o); err != nil {
			return err
		}
		all.services = append(all.services, o)
	case "policy/v1 PodDisruptionBudget":
		var o policyv1.PodDisruptionBudget
		if err := strict(&o); err != nil {
			return err
		}
		all.pdbs = append(all.pdbs, o)
	case "v1 ConfigMap":
		var o corev1.ConfigMap
		if err := strict(&o); err != nil {
			return err
		}
		all.configMaps = append(all.configMaps, o)
	case "v1 PersistentVolumeClaim":
		var o corev1.PersistentVolumeClaim
		if err := strict(&o); err != nil {
			return err
		}
		all.claims = append(all.claims, o)
	default:
		return fmt.Errorf("kind %q %q is not one this check knows", head.APIVersion, head.Kind)
	}
	return nil
}

func joinErr(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(problems, "; "))
}

func main() {
	scriptsDir := flag.String("scripts", "", "write ConfigMap scripts (keys ending .yaml) here")
	flag.Parse()
	all := &objects{}
	for _, file := range flag.Args() {
		data, err := os.ReadFile(file)
		if err != nil {
			check(file, err)
			continue
		}
		for i, doc := range splitDocs(data) {
			check(fmt.Sprintf("%s[%d]: decodes strictly into its Kubernetes type", file, i), decode(file, doc, all))
		}
	}
	crossCheck(all)
	checkPodSecurity(all)
	for _, c := range all.configMaps {
		keys := make([]string, 0, len(c.Data))
		for k := range c.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch {
			case k == "envoy.yaml":
				checkEnvoy(fmt.Sprintf("ConfigMap %s %s", c.Name, k), c.Data[k], all.services)
			case strings.HasSuffix(k, ".yaml") && *scriptsDir != "":
				out := filepath.Join(*scriptsDir, c.Name+"."+k)
				check(fmt.Sprintf("ConfigMap %s %s: written to %s for modelstub validate", c.Name, k, out), os.WriteFile(out, bytes.TrimSpace([]byte(c.Data[k])), 0o644))
			}
		}
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
