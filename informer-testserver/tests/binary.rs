//! The `informer-testserver` binary: first line, seed file, serving, kill.

mod support;

use std::net::SocketAddr;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

#[tokio::test]
async fn binary_prints_its_url_and_serves_the_seed() {
    let seed = std::env::temp_dir().join(format!("informer-testserver-seed-{}.yaml", std::process::id()));
    std::fs::write(
        &seed,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: seeded\n  namespace: demo\nspec:\n  containers: []\n---\n\
         apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n",
    )
    .expect("write seed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_informer-testserver"))
        .args(["--port", "0", "--seed"])
        .arg(&seed)
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
    let addr: SocketAddr = url.parse().expect("address");
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
