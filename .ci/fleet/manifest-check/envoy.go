// The Envoy part of manifest-check (see main.go for what the whole check covers).
package main

import (
	"fmt"
	"strings"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/health_check/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/encoding/protojson"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// checkEnvoy decodes an Envoy bootstrap strictly and runs its proto validation rules, then the
// fleet's own expectations: every route hashes on x-modelstub-session into a RING_HASH cluster
// that resolves the headless Service.
func checkEnvoy(name string, text string, services []corev1.Service) {
	js, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		check(name+": is YAML", err)
		return
	}
	var b bootstrapv3.Bootstrap
	if err := (protojson.UnmarshalOptions{}).Unmarshal(js, &b); err != nil {
		check(name+": decodes strictly as an Envoy v3 Bootstrap", err)
		return
	}
	check(name+": decodes strictly as an Envoy v3 Bootstrap (typed_config included)", nil)
	check(name+": passes the Bootstrap proto's validation rules (ValidateAll)", b.ValidateAll())

	clusters := map[string]*clusterv3.Cluster{}
	for _, c := range b.GetStaticResources().GetClusters() {
		clusters[c.GetName()] = c
	}
	var problems []string
	routes := 0
	for _, l := range b.GetStaticResources().GetListeners() {
		for _, fc := range l.GetFilterChains() {
			for _, f := range fc.GetFilters() {
				var hcm hcmv3.HttpConnectionManager
				if err := f.GetTypedConfig().UnmarshalTo(&hcm); err != nil {
					problems = append(problems, fmt.Sprintf("filter %s: %v", f.GetName(), err))
					continue
				}
				for _, vh := range hcm.GetRouteConfig().GetVirtualHosts() {
					for _, r := range vh.GetRoutes() {
						routes++
						ra := r.GetRoute()
						hashed := false
						for _, h := range ra.GetHashPolicy() {
							if h.GetHeader().GetHeaderName() == "x-modelstub-session" {
								hashed = true
							}
						}
						if !hashed {
							problems = append(problems, fmt.Sprintf("a route to %s does not hash x-modelstub-session", ra.GetCluster()))
						}
						c := clusters[ra.GetCluster()]
						if c == nil {
							problems = append(problems, fmt.Sprintf("route to undefined cluster %s", ra.GetCluster()))
						} else if c.GetLbPolicy() != clusterv3.Cluster_RING_HASH {
							problems = append(problems, fmt.Sprintf("cluster %s balances %s, not RING_HASH", c.GetName(), c.GetLbPolicy()))
						}
					}
				}
			}
		}
	}
	if routes == 0 {
		problems = append(problems, "no routes")
	}
	for _, c := range clusters {
		for _, e := range c.GetLoadAssignment().GetEndpoints() {
			for _, lb := range e.GetLbEndpoints() {
				addr := lb.GetEndpoint().GetAddress().GetSocketAddress().GetAddress()
				svc := strings.Split(addr, ".")[0]
				found := false
				for _, s := range services {
					if s.Name == svc && s.Spec.ClusterIP == corev1.ClusterIPNone {
						found = true
					}
				}
				if !found {
					problems = append(problems, fmt.Sprintf("cluster %s resolves %s, not a headless Service defined here", c.GetName(), addr))
				}
			}
		}
	}
	check(name+": every route hashes x-modelstub-session into a RING_HASH cluster on the headless Service", joinErr(problems))
	admin := b.GetAdmin().GetAddress().GetSocketAddress().GetAddress()
	var adminErr error
	if admin != "127.0.0.1" && admin != "::1" {
		adminErr = fmt.Errorf("admin listens on %q: it can drain listeners and dump the config; bind 127.0.0.1", admin)
	}
	check(name+": the admin API listens on loopback only", adminErr)
}
