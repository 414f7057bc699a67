//! `informer-testserver`: an in-memory Kubernetes API server on 127.0.0.1.
//!
//! Prints `listening on http://127.0.0.1:PORT` as its first line and serves until Ctrl-C.

use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use informer_testserver::TestServer;
use informer_testserver::kubelet::Kubelet;

/// An in-memory Kubernetes API server for tests and demos.
#[derive(Debug, Parser)]
#[command(name = "informer-testserver", version, about)]
struct Args {
    /// Port to listen on at 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Objects to create at start: YAML or JSON, a `List` or several `---` documents.
    #[arg(long)]
    seed: Option<PathBuf>,
    /// Create a missing namespace when an object is created in it (without this, such a create
    /// is refused with 404, as kube-apiserver refuses it).
    #[arg(long)]
    auto_create_namespaces: bool,
    /// Run a simulated kubelet and scheduler with this many Ready nodes (`node-1`, ...): pods
    /// are scheduled, run and become Ready, and deleting one is graceful.
    #[arg(long)]
    nodes: Option<usize>,
    /// The log of a container the simulated kubelet runs, as `NAMESPACE/POD/CONTAINER=FILE`
    /// (repeatable; needs `--nodes`): `kubectl logs` of that container prints the file.
    #[arg(long = "pod-log", value_name = "NAMESPACE/POD/CONTAINER=FILE", value_parser = parse_pod_log)]
    pod_logs: Vec<PodLog>,
    /// What every simulated node can allocate of a resource, as `RESOURCE=QUANTITY`
    /// (repeatable; needs `--nodes`; default `cpu=4`, `memory=16Gi`, `pods=110`,
    /// `ephemeral-storage=100Gi`): pods are scheduled where their requests fit.
    #[arg(long = "node-allocatable", value_name = "RESOURCE=QUANTITY", value_parser = parse_allocatable)]
    node_allocatable: Vec<(String, String)>,
}

/// Parses `RESOURCE=QUANTITY` (the quantity is checked when the server starts).
fn parse_allocatable(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((resource, quantity)) if !resource.is_empty() && !quantity.is_empty() => {
            Ok((resource.to_owned(), quantity.to_owned()))
        }
        _ => Err(format!(
            "failed to read --node-allocatable {text:?}: expected RESOURCE=QUANTITY, as cpu=2"
        )),
    }
}

/// A `--pod-log` registration: whose log, and the file it is read from.
#[derive(Debug, Clone)]
struct PodLog {
    namespace: String,
    pod: String,
    container: String,
    file: PathBuf,
}

/// Parses `NAMESPACE/POD/CONTAINER=FILE`.
fn parse_pod_log(text: &str) -> Result<PodLog, String> {
    let usage = || format!("failed to read --pod-log {text:?}: expected NAMESPACE/POD/CONTAINER=FILE");
    let (who, file) = text.split_once('=').ok_or_else(usage)?;
    let parts: Vec<&str> = who.split('/').collect();
    match parts[..] {
        [namespace, pod, container]
            if !namespace.is_empty() && !pod.is_empty() && !container.is_empty() && !file.is_empty() =>
        {
            Ok(PodLog {
                namespace: namespace.to_owned(),
                pod: pod.to_owned(),
                container: container.to_owned(),
                file: PathBuf::from(file),
            })
        }
        _ => Err(usage()),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let mut builder = TestServer::builder()
        .port(args.port)
        .auto_create_namespaces(args.auto_create_namespaces);
    if let Some(nodes) = args.nodes {
        let kubelet = args
            .node_allocatable
            .iter()
            .fold(Kubelet::with_nodes(nodes), |kubelet, (resource, quantity)| {
                kubelet.allocatable(resource, quantity)
            });
        builder = builder.kubelet(kubelet);
    }
    if !args.pod_logs.is_empty() && args.nodes.is_none() {
        return Err("failed to register --pod-log: it needs the simulated kubelet (--nodes N)".into());
    }
    if !args.node_allocatable.is_empty() && args.nodes.is_none() {
        return Err("failed to set --node-allocatable: it needs the simulated kubelet (--nodes N)".into());
    }
    let server = builder.start().await?;
    if let Some(kubelet) = server.kubelet() {
        for log in &args.pod_logs {
            let text = std::fs::read_to_string(&log.file)
                .map_err(|e| format!("failed to read the --pod-log file {}: {e}", log.file.display()))?;
            kubelet.set_logs(&log.namespace, &log.pod, &log.container, &text);
        }
    }
    if let Some(seed) = &args.seed {
        server.seed_file(seed)?;
    }
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on {}", server.url())?;
    stdout.flush()?;
    tokio::signal::ctrl_c().await?;
    server.shutdown().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_logs_name_a_container_and_a_file() {
        let log = parse_pod_log("default/web/main=/tmp/web.log").expect("valid");
        assert_eq!(
            (log.namespace.as_str(), log.pod.as_str(), log.container.as_str()),
            ("default", "web", "main")
        );
        assert_eq!(log.file, PathBuf::from("/tmp/web.log"));
        for bad in [
            "default/web=/tmp/x",
            "default/web/main",
            "a/b/c/d=f",
            "default//main=f",
            "a/b/c=",
        ] {
            let error = parse_pod_log(bad).expect_err(bad);
            assert!(error.contains("expected NAMESPACE/POD/CONTAINER=FILE"), "{error}");
        }
    }

    #[test]
    fn node_allocatable_names_a_resource_and_a_quantity() {
        assert_eq!(
            parse_allocatable("nvidia.com/gpu=1"),
            Ok(("nvidia.com/gpu".to_owned(), "1".to_owned()))
        );
        for bad in ["cpu", "=2", "cpu="] {
            let error = parse_allocatable(bad).expect_err(bad);
            assert!(error.contains("expected RESOURCE=QUANTITY"), "{error}");
        }
    }
}
