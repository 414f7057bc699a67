//! The cluster IP and node ports of Services, as kube-apiserver's service registry allocates
//! them: a free IP of the service range for every Service but `ExternalName` and headless
//! ones, a free port of the node port range for each port of a `NodePort` or `LoadBalancer`
//! Service, and a health check port for a `LoadBalancer` with `Local` traffic; a value the
//! body gives must be free. An update keeps what was allocated when it leaves it out.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use serde_json::{Value, json};

use crate::admission::context::WriteContext;
use crate::admission::plugin::Plugin;
use crate::registry::ResourceType;
use crate::status::{ApiError, FieldCause};
use crate::storage::state::State;
use crate::storage::store::{meta_str, object_key};

/// The service IP range, kube-apiserver's default `--service-cluster-ip-range`.
const SERVICE_RANGE: (Ipv4Addr, u32) = (Ipv4Addr::new(10, 96, 0, 0), 12);
/// The node port range, kube-apiserver's default `--service-node-port-range`.
const NODE_PORTS: std::ops::RangeInclusive<u16> = 30000..=32767;

/// Service IP and port allocation as a write plugin.
pub(crate) struct ServiceAllocation;

impl Plugin for ServiceAllocation {
    fn admit_create(
        &self,
        state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        if !rt.is_core("Service") || !object["spec"].is_object() {
            return Ok(());
        }
        allocate(state, rt, object)
    }

    fn admit_update(
        &self,
        state: &State,
        _context: &mut WriteContext,
        rt: &ResourceType,
        old: &Value,
        new: &mut Value,
    ) -> Result<(), ApiError> {
        if !rt.is_core("Service") || !new["spec"].is_object() {
            return Ok(());
        }
        keep_allocated(&old["spec"], &mut new["spec"]);
        allocate(state, rt, new)
    }
}

/// What the other Services hold: their cluster IPs and node ports.
#[derive(Default)]
struct Allocated {
    ips: BTreeSet<String>,
    ports: BTreeSet<i64>,
}

impl Allocated {
    fn of_others(state: &State, rt: &ResourceType, service: &Value) -> Self {
        let mut allocated = Self::default();
        let key = object_key(service);
        for (other_key, other) in state.store.objects(rt) {
            if *other_key == key {
                continue;
            }
            let spec = &other["spec"];
            allocated.ips.extend(cluster_ips(spec));
            allocated.ports.extend(node_ports(spec));
        }
        allocated
    }
}

fn cluster_ips(spec: &Value) -> Vec<String> {
    let ips = spec["clusterIPs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    ips.chain(spec["clusterIP"].as_str())
        .filter(|ip| !ip.is_empty() && *ip != "None")
        .map(str::to_owned)
        .collect()
}

fn node_ports(spec: &Value) -> Vec<i64> {
    let ports = spec["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["nodePort"].as_i64());
    ports
        .chain(spec["healthCheckNodePort"].as_i64())
        .filter(|p| *p != 0)
        .collect()
}

/// Allocates what the Service lacks and checks what it gives.
fn allocate(state: &State, rt: &ResourceType, service: &mut Value) -> Result<(), ApiError> {
    let mut allocated = Allocated::of_others(state, rt, service);
    let name = meta_str(service, "name").unwrap_or_default().to_owned();
    let spec = &mut service["spec"];
    let kind = spec["type"].as_str().unwrap_or("ClusterIP").to_owned();
    if kind == "ExternalName" {
        return Ok(());
    }
    cluster_ip(spec, &mut allocated).map_err(|cause| ApiError::invalid_causes(rt, &name, &[cause]))?;
    let balancer = kind == "LoadBalancer";
    let wants_ports = kind == "NodePort" || (balancer && spec["allocateLoadBalancerNodePorts"] != false);
    let mut causes = Vec::new();
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for (index, port) in ports.iter_mut().enumerate().filter(|(_, port)| port.is_object()) {
            let field = format!("spec.ports[{index}].nodePort");
            if let Err(cause) = node_port(port, "nodePort", &field, wants_ports, &mut allocated) {
                causes.push(cause);
            }
        }
    }
    let health_check = balancer && spec["externalTrafficPolicy"] == "Local";
    if let Err(cause) = node_port(
        spec,
        "healthCheckNodePort",
        "spec.healthCheckNodePort",
        health_check,
        &mut allocated,
    ) {
        causes.push(cause);
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid_causes(rt, &name, &causes))
    }
}

/// The Service's cluster IP: the one it gives when free, else a new one; none for a headless
/// Service. Sets `clusterIPs`, `ipFamilies` and `ipFamilyPolicy` to match.
fn cluster_ip(spec: &mut Value, allocated: &mut Allocated) -> Result<(), FieldCause> {
    let given = spec["clusterIP"]
        .as_str()
        .filter(|ip| !ip.is_empty())
        .or_else(|| spec["clusterIPs"][0].as_str())
        .map(str::to_owned);
    let ip = match given {
        Some(ip) if ip == "None" => {
            headless(spec);
            return Ok(());
        }
        Some(ip) => free_given(ip, allocated)?,
        None => free_ip(&allocated.ips),
    };
    allocated.ips.insert(ip.clone());
    spec["clusterIP"] = json!(ip);
    spec["clusterIPs"] = json!([ip]);
    default_field(spec, "ipFamilyPolicy", json!("SingleStack"));
    default_field(spec, "ipFamilies", json!(["IPv4"]));
    Ok(())
}

/// A headless Service's families: both for one without a selector (its endpoints are anyone's),
/// else the cluster's one.
fn headless(spec: &mut Value) {
    let selectorless = spec["selector"].as_object().is_none_or(|s| s.is_empty());
    let (policy, families) = if selectorless {
        ("RequireDualStack", json!(["IPv4", "IPv6"]))
    } else {
        ("SingleStack", json!(["IPv4"]))
    };
    default_field(spec, "ipFamilyPolicy", json!(policy));
    default_field(spec, "ipFamilies", families);
    spec["clusterIPs"] = json!(["None"]);
}

/// The IP a Service gives, when it is in the range and free.
fn free_given(ip: String, allocated: &Allocated) -> Result<String, FieldCause> {
    let in_service_range = ip.parse::<Ipv4Addr>().is_ok_and(in_range);
    let problem = if !in_service_range {
        let (network, bits) = SERVICE_RANGE;
        format!(
            "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {network}/{bits}"
        )
    } else if allocated.ips.contains(&ip) {
        "provided IP is already allocated".to_owned()
    } else {
        return Ok(ip);
    };
    Err(FieldCause::invalid_json(
        "spec.clusterIPs",
        &format!("[]string{{{ip:?}}}"),
        &format!("failed to allocate IP {ip}: {problem}"),
    ))
}

fn default_field(spec: &mut Value, field: &str, value: Value) {
    if spec[field].is_null() {
        spec[field] = value;
    }
}

fn in_range(address: Ipv4Addr) -> bool {
    let mask = u32::MAX << (32 - SERVICE_RANGE.1);
    u32::from(address) & mask == u32::from(SERVICE_RANGE.0)
}

/// A random free IP of the range (neither its network nor its broadcast address).
fn free_ip(taken: &BTreeSet<String>) -> String {
    let size = 1u32 << (32 - SERVICE_RANGE.1);
    let base = u32::from(SERVICE_RANGE.0);
    loop {
        let ip = Ipv4Addr::from(base + fastrand::u32(1..size - 1)).to_string();
        if !taken.contains(&ip) {
            return ip;
        }
    }
}

/// The node port at `holder[field]`: when `wanted`, the one given when free, else a new one;
/// when not wanted, what was given is still checked and kept.
fn node_port(
    holder: &mut Value,
    field: &str,
    path: &str,
    wanted: bool,
    allocated: &mut Allocated,
) -> Result<(), FieldCause> {
    match holder[field].as_i64().filter(|p| *p != 0) {
        Some(port) => {
            if !NODE_PORTS.contains(&u16::try_from(port).unwrap_or(0)) {
                return Err(FieldCause::invalid_json(
                    path,
                    &port.to_string(),
                    &format!(
                        "provided port is not in the valid range. The range of valid ports is {}-{}",
                        NODE_PORTS.start(),
                        NODE_PORTS.end()
                    ),
                ));
            }
            if !allocated.ports.insert(port) {
                return Err(FieldCause::invalid_json(
                    path,
                    &port.to_string(),
                    "provided port is already allocated",
                ));
            }
        }
        None if wanted => {
            let free = (0..)
                .map(|_| i64::from(fastrand::u16(NODE_PORTS)))
                .find(|p| !allocated.ports.contains(p))
                .unwrap_or_default();
            allocated.ports.insert(free);
            holder[field] = json!(free);
        }
        None => {}
    }
    Ok(())
}

/// An update that leaves the cluster IP, IP families or node ports out keeps the old ones
/// (ports matched by name), unless the Service became an `ExternalName`.
fn keep_allocated(old: &Value, new: &mut Value) {
    if new["type"] == "ExternalName" {
        return;
    }
    let mut kept = vec!["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"];
    if new["type"] == "LoadBalancer" {
        kept.push("healthCheckNodePort");
    }
    for field in kept {
        if new[field].is_null() && !old[field].is_null() {
            new[field] = old[field].clone();
        }
    }
    let old_ports = old["ports"].as_array().cloned().unwrap_or_default();
    if !matches!(new["type"].as_str(), Some("NodePort" | "LoadBalancer")) {
        return;
    }
    let ports = new.get_mut("ports").and_then(Value::as_array_mut);
    for port in ports.into_iter().flatten().filter(|p| p.is_object()) {
        if port["nodePort"].as_i64().unwrap_or(0) != 0 {
            continue;
        }
        let name = port["name"].as_str().unwrap_or_default().to_owned();
        if let Some(old_port) = old_ports
            .iter()
            .find(|p| p["name"].as_str().unwrap_or_default() == name)
            && let Some(node_port) = old_port["nodePort"].as_i64()
        {
            port["nodePort"] = json!(node_port);
        }
    }
}
