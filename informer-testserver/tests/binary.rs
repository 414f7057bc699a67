//! The `informer-testserver` binary: first line, seed file, serving, kill.

mod support;

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::process::Stdio;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Starts the binary with `args` and reads the address from its first line.
async fn start(args: &[&OsStr]) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_informer-testserver"))
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .await
        .expect("first line");
    let url = first
        .trim()
        .strip_prefix("listening on http://")
        .expect("listening line");
    (child, url.parse().expect("address"))
}

#[tokio::test]
async fn binary_prints_its_url_and_serves_the_seed() {
    let seed = std::env::temp_dir().join(format!("informer-testserver-seed-{}.yaml", std::process::id()));
    std::fs::write(
        &seed,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: seeded\n  namespace: demo\nspec:\n  containers: []\n---\n\
         apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n",
    )
    .expect("write seed");
    let (mut child, addr) = start(&[
        "--port".as_ref(),
        "0".as_ref(),
        "--seed".as_ref(),
        seed.as_os_str(),
    ])
    .await;
    assert_eq!(addr.ip().to_string(), "127.0.0.1");

    let pods = support::get(addr, "/api/v1/pods").await;
    assert_eq!(pods.status, 200);
    let list = pods.json();
    assert_eq!(list["kind"], "PodList");
    assert_eq!(list["items"][0]["metadata"]["name"], "seeded");
    assert_eq!(list["items"][0]["metadata"]["namespace"], "demo");

    child.kill().await.expect("kill");
    let _ = std::fs::remove_file(&seed);
}

#[tokio::test]
async fn binary_refuses_missing_namespaces_unless_asked_to_create_them() {
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
    let (mut strict, addr) = start(&["--port".as_ref(), "0".as_ref()]).await;
    let refused = support::post(addr, "/api/v1/namespaces/fresh/configmaps", &config_map).await;
    assert_eq!(refused.status, 404);
    assert_eq!(refused.json()["message"], "namespaces \"fresh\" not found");
    strict.kill().await.expect("kill");

    let (mut lenient, addr) = start(&[
        "--port".as_ref(),
        "0".as_ref(),
        "--auto-create-namespaces".as_ref(),
    ])
    .await;
    let created = support::post(addr, "/api/v1/namespaces/fresh/configmaps", &config_map).await;
    assert_eq!(created.status, 201);
    let namespace = support::get(addr, "/api/v1/namespaces/fresh").await;
    assert_eq!(namespace.status, 200);
    assert_eq!(namespace.json()["status"]["phase"], "Active");
    lenient.kill().await.expect("kill");
}

#[tokio::test]
async fn binary_runs_a_kubelet_with_nodes() {
    let (mut child, addr) = start(&["--port".as_ref(), "0".as_ref(), "--nodes".as_ref(), "2".as_ref()]).await;
    let nodes = support::get(addr, "/api/v1/nodes").await;
    assert_eq!(nodes.status, 200);
    let names: Vec<String> = nodes.json()["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|n| n["metadata"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(names, ["node-1", "node-2"]);
    child.kill().await.expect("kill");
}
