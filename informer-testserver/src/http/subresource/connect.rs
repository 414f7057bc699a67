//! The subresources a kubelet or a backend answers (`pods/log`, `pods/exec`, `pods/attach`,
//! `pods/portforward`, and the `proxy` of pods, nodes and services), answered as kube-apiserver
//! answers when nothing is listening: it finds the object and the address it would connect to
//! exactly as kube-apiserver does (so a missing pod, container, node, host or endpoint gives
//! its error), then answers the error of a refused connection to that address.
//!
//! - `log` of a pod without a node: an empty log (200), as kube-apiserver streams nothing;
//!   with a node: 500 `Get "https://<node>:<kubelet port>/containerLogs/...": dial tcp ...`.
//! - `exec`, `attach`, `portforward` of a pod without a node: 400 `pod <name> does not have a
//!   host assigned`; with one: 400 `Upgrade request required` for a request that is not an
//!   upgrade, else 500 `error dialing backend: dial tcp ...`.
//! - `proxy` of a pod without an IP: 400 `address not allowed`; of a service without
//!   endpoints: 503 `no endpoints available for service "<name>"`; else 503
//!   `error trying to reach service: dial tcp ...`.
//!
//! The node's address is the first of its `status.addresses` by kube-apiserver's default
//! preference (Hostname, InternalDNS, InternalIP, ExternalDNS, ExternalIP), its port the
//! kubelet's (`status.daemonEndpoints.kubeletEndpoint.Port`, 10250 by default).

use std::net::IpAddr;

use http::Method;
use serde_json::Value;

use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::State;

use super::call::{Call, only, plain_error};

/// The kubelet port when a node does not report one.
const DEFAULT_KUBELET_PORT: i64 = 10250;
/// kube-apiserver's default `--kubelet-preferred-address-types`.
const PREFERRED_ADDRESS_TYPES: [&str; 5] = [
    "Hostname",
    "InternalDNS",
    "InternalIP",
    "ExternalDNS",
    "ExternalIP",
];
const PROXY_METHODS: [Method; 7] = [
    Method::GET,
    Method::POST,
    Method::PUT,
    Method::PATCH,
    Method::DELETE,
    Method::HEAD,
    Method::OPTIONS,
];

/// Answers a connect subresource of `rt`.
pub(crate) fn serve(
    state: &State,
    rt: &ResourceType,
    name: &str,
    call: &Call<'_>,
) -> Result<String, ApiError> {
    let ns = call.namespace;
    match (rt.plural.as_str(), name) {
        ("pods", "log") => {
            only(call.method, &[Method::GET])?;
            pod_log(state, rt, ns, call)
        }
        ("pods", "exec" | "attach" | "portforward") => {
            only(call.method, &[Method::GET, Method::POST])?;
            pod_stream(state, rt, ns, name, call)
        }
        ("pods", "proxy") => {
            only(call.method, &PROXY_METHODS)?;
            pod_proxy(state, rt, ns, call.name)
        }
        ("nodes", "proxy") => {
            only(call.method, &PROXY_METHODS)?;
            node_proxy(state, call.name)
        }
        ("services", "proxy") => {
            only(call.method, &PROXY_METHODS)?;
            service_proxy(state, rt, ns, call.name)
        }
        _ => Err(ApiError::unknown_path()),
    }
}

fn pod_log(
    state: &State,
    pods: &ResourceType,
    ns: Option<&str>,
    call: &Call<'_>,
) -> Result<String, ApiError> {
    let pod = state.get(pods, ns, call.name)?;
    let container = container_of(&pod, call.query.get("container"))?;
    let Some(node) = node_name(&pod) else {
        return Ok(String::new());
    };
    let (host, port) = kubelet_address(state, node)?;
    let mut params: Vec<(&str, &String)> = [
        "follow",
        "limitBytes",
        "previous",
        "sinceSeconds",
        "sinceTime",
        "tailLines",
        "timestamps",
    ]
    .iter()
    .filter_map(|key| call.query.get(*key).map(|value| (*key, value)))
    .filter(|(key, value)| {
        !matches!(
            (*key, value.as_str()),
            ("follow" | "previous" | "timestamps", "false")
        )
    })
    .collect();
    params.sort();
    let query: String = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params)
        .finish();
    let query = if query.is_empty() {
        query
    } else {
        format!("?{query}")
    };
    let pod_name = &call.name;
    let ns = ns.unwrap_or_default();
    Err(plain_error(
        500,
        format!(
            "Get \"https://{}/containerLogs/{ns}/{pod_name}/{container}{query}\": {}",
            join_host_port(&host, port),
            refused(&host, port)
        ),
    ))
}

fn pod_stream(
    state: &State,
    pods: &ResourceType,
    ns: Option<&str>,
    subresource: &str,
    call: &Call<'_>,
) -> Result<String, ApiError> {
    let pod = state.get(pods, ns, call.name)?;
    if subresource != "portforward" {
        container_of(&pod, call.query.get("container"))?;
    }
    let Some(node) = node_name(&pod) else {
        return Err(ApiError::bad_request(format!(
            "pod {} does not have a host assigned",
            call.name
        )));
    };
    let (host, port) = kubelet_address(state, node)?;
    if !call.upgrade {
        return Err(ApiError::bad_request("Upgrade request required"));
    }
    Err(plain_error(
        500,
        format!("error dialing backend: {}", refused(&host, port)),
    ))
}

fn pod_proxy(state: &State, pods: &ResourceType, ns: Option<&str>, id: &str) -> Result<String, ApiError> {
    let (scheme, name, port) = split_scheme_name_port(id)
        .ok_or_else(|| ApiError::bad_request(format!("invalid pod request {id:?}")))?;
    let pod = state.get(pods, ns, name)?;
    let port = match port {
        "" => first_container_port(&pod),
        port => port.parse().ok(),
    };
    let ip = pod["status"]["podIPs"][0]["ip"]
        .as_str()
        .and_then(|ip| ip.parse::<IpAddr>().ok())
        .filter(is_global_unicast)
        .ok_or_else(|| ApiError::bad_request("address not allowed"))?;
    let port = port.unwrap_or(if scheme == "https" { 443 } else { 80 });
    Err(unreachable(&ip.to_string(), port))
}

fn node_proxy(state: &State, id: &str) -> Result<String, ApiError> {
    let (_, name, port) = split_scheme_name_port(id)
        .ok_or_else(|| ApiError::bad_request(format!("invalid node request {id:?}")))?;
    let (host, kubelet_port) = kubelet_address(state, name)?;
    let port = port.parse().unwrap_or(kubelet_port);
    Err(unreachable(&host, port))
}

fn service_proxy(
    state: &State,
    services: &ResourceType,
    ns: Option<&str>,
    id: &str,
) -> Result<String, ApiError> {
    let (_, name, port) = split_scheme_name_port(id)
        .ok_or_else(|| ApiError::bad_request(format!("invalid service request {id:?}")))?;
    let mut port_name = port.to_string();
    if let Ok(number) = port.parse::<i64>() {
        let service = state.get(services, ns, name)?;
        let declared = service["spec"]["ports"]
            .as_array()
            .and_then(|ports| ports.iter().find(|p| p["port"].as_i64() == Some(number)))
            .ok_or_else(|| {
                ApiError::new(
                    503,
                    "ServiceUnavailable",
                    format!("no service port {number} found for service {name:?}"),
                )
            })?;
        port_name = declared["name"].as_str().unwrap_or_default().to_string();
    }
    let endpoints_type = state
        .registry
        .get("", "v1", "endpoints")
        .cloned()
        .ok_or_else(ApiError::unknown_path)?;
    let endpoints = state.get(&endpoints_type, ns, name)?;
    let no_endpoints = |of: &str| {
        ApiError::new(
            503,
            "ServiceUnavailable",
            format!("no endpoints available for service {of:?}"),
        )
    };
    let subsets = endpoints["subsets"].as_array().cloned().unwrap_or_default();
    if subsets.is_empty() {
        return Err(no_endpoints(name));
    }
    for subset in &subsets {
        let Some(port) = subset["ports"]
            .as_array()
            .and_then(|ports| {
                ports
                    .iter()
                    .find(|p| p["name"].as_str().unwrap_or_default() == port_name)
            })
            .and_then(|p| p["port"].as_i64())
        else {
            continue;
        };
        let addresses = subset["addresses"].as_array().cloned().unwrap_or_default();
        if let Some(ip) = addresses
            .iter()
            .find(|a| is_valid_address(state, ns, a))
            .and_then(|a| a["ip"].as_str())
        {
            return Err(unreachable(ip, port));
        }
    }
    Err(no_endpoints(id))
}

/// An endpoint address kube-apiserver proxies to: one whose target is a pod of the namespace
/// that has that IP.
fn is_valid_address(state: &State, ns: Option<&str>, address: &Value) -> bool {
    let target = &address["targetRef"];
    if target["kind"] != "Pod" || target["namespace"].as_str() != ns {
        return false;
    }
    let Some(pods) = state.registry.get("", "v1", "pods") else {
        return false;
    };
    let Ok(pod) = state.get(pods, ns, target["name"].as_str().unwrap_or_default()) else {
        return false;
    };
    pod["status"]["podIPs"]
        .as_array()
        .is_some_and(|ips| ips.iter().any(|ip| ip["ip"] == address["ip"]))
}

/// The container a request names, or the only one; the 400 of kube-apiserver otherwise.
pub(super) fn container_of(pod: &Value, asked: Option<&String>) -> Result<String, ApiError> {
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or_default();
    let names: Vec<&str> = ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .filter_map(|list| pod["spec"][list].as_array())
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    if let Some(asked) = asked.filter(|c| !c.is_empty()) {
        if names.contains(&asked.as_str()) {
            return Ok(asked.clone());
        }
        return Err(ApiError::bad_request(format!(
            "container {asked} is not valid for pod {pod_name}"
        )));
    }
    let containers = pod["spec"]["containers"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    match containers {
        [only] => Ok(only["name"].as_str().unwrap_or_default().to_string()),
        [] => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {pod_name}"
        ))),
        _ => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {pod_name}, choose one of: [{}]",
            names.join(" ")
        ))),
    }
}

fn node_name(pod: &Value) -> Option<&str> {
    pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty())
}

/// The kubelet's host and port of a node, or the error kube-apiserver gives when the node is
/// missing (404) or has no address (500).
fn kubelet_address(state: &State, node: &str) -> Result<(String, i64), ApiError> {
    let nodes = state
        .registry
        .get("", "v1", "nodes")
        .cloned()
        .ok_or_else(ApiError::unknown_path)?;
    let node = state.get(&nodes, None, node)?;
    let addresses = node["status"]["addresses"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let host = PREFERRED_ADDRESS_TYPES
        .iter()
        .find_map(|kind| addresses.iter().find(|a| a["type"] == *kind))
        .and_then(|a| a["address"].as_str())
        .ok_or_else(|| {
            let known: Vec<String> = addresses
                .iter()
                .map(|a| {
                    format!(
                        "{{{} {}}}",
                        a["type"].as_str().unwrap_or_default(),
                        a["address"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            plain_error(
                500,
                format!(
                    "no preferred addresses found; known addresses: [{}]",
                    known.join(" ")
                ),
            )
        })?;
    let port = node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"]
        .as_i64()
        .filter(|p| *p > 0)
        .unwrap_or(DEFAULT_KUBELET_PORT);
    Ok((host.to_string(), port))
}

/// The proxy's 503 for a backend that refused the connection.
fn unreachable(host: &str, port: i64) -> ApiError {
    ApiError::new(
        503,
        "ServiceUnavailable",
        format!("error trying to reach service: {}", refused(host, port)),
    )
}

/// Go's error for a refused connection to an IP, or an unknown host name.
fn refused(host: &str, port: i64) -> String {
    if host.parse::<IpAddr>().is_ok() {
        format!(
            "dial tcp {}: connect: connection refused",
            join_host_port(host, port)
        )
    } else {
        format!("dial tcp: lookup {host}: no such host")
    }
}

fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

fn first_container_port(pod: &Value) -> Option<i64> {
    pod["spec"]["containers"]
        .as_array()?
        .iter()
        .find_map(|c| c["ports"][0]["containerPort"].as_i64())
}

fn is_global_unicast(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_unspecified()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_broadcast())
        }
        IpAddr::V6(v6) => {
            !(v6.is_unspecified()
                || v6.is_loopback()
                || v6.is_multicast()
                || (v6.segments()[0] & 0xffc0) == 0xfe80)
        }
    }
}

/// `name`, `name:port` or `scheme:name:port` (scheme `http` or `https`), as kube-apiserver
/// splits the name of a proxy URL.
fn split_scheme_name_port(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] if matches!(*scheme, "http" | "https") => (*scheme, *name, *port),
        _ => return None,
    };
    (!name.is_empty()).then_some((scheme, name, port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn proxy_names_split_as_kube_apiserver_splits_them() {
        assert_eq!(split_scheme_name_port("web"), Some(("", "web", "")));
        assert_eq!(split_scheme_name_port("web:8080"), Some(("", "web", "8080")));
        assert_eq!(
            split_scheme_name_port("https:web:443"),
            Some(("https", "web", "443"))
        );
        assert_eq!(split_scheme_name_port("ftp:web:21"), None);
        assert_eq!(split_scheme_name_port(":80"), None);
    }

    #[test]
    fn containers_are_named_or_the_only_one() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let err = container_of(&pod, None).expect_err("two");
        assert_eq!(
            err.message,
            "a container name must be specified for pod p, choose one of: [a b]"
        );
        let err = container_of(&pod, Some(&"c".to_string())).expect_err("unknown");
        assert_eq!(err.message, "container c is not valid for pod p");
        assert_eq!(container_of(&pod, Some(&"b".to_string())).expect("named"), "b");
    }
}
