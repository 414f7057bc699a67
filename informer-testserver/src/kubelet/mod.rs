//! A simulated kubelet and a minimal scheduler, in the manner of KWOK: opt-in per server
//! ([`TestServerBuilder::kubelet`](crate::TestServerBuilder::kubelet) with a [`Kubelet`]).
//!
//! With it, a server registers Ready nodes (`node-1` .. `node-N`, with their Leases in
//! `kube-node-lease`, renewed every [`Kubelet::lease_renewal`]), binds the pods that wait for a node to one that fits (`scheduler.rs`),
//! and runs the pods bound to its nodes: Pending, then Running with addresses, conditions and
//! container statuses as a kubelet writes them (`tracker.rs`, `pod_status.rs`), each step a
//! write the watches see. Deleting such a pod is graceful: it is marked, its containers stop,
//! and the kubelet removes it after the shorter of its grace period and
//! [`Kubelet::stop_time`]. What the containers do ([`Stage`]), their logs, and the answers of
//! exec and attach are registered on the running server's [`KubeletHandle`]
//! ([`TestServer::kubelet`](crate::TestServer::kubelet)).
//!
//! ```
//! use informer_testserver::TestServer;
//! use informer_testserver::kubelet::Kubelet;
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = TestServer::builder().kubelet(Kubelet::with_nodes(2)).start().await?;
//! server.create(json!({
//!     "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
//!     "spec": {"containers": [{"name": "app", "image": "nginx"}]},
//! }))?;
//! let mut pod = json!(null);
//! for _ in 0..200 {
//!     pod = server.get("v1", "Pod", Some("default"), "web")?;
//!     if pod["status"]["phase"] == "Running" { break }
//!     tokio::time::sleep(std::time::Duration::from_millis(10)).await;
//! }
//! assert_eq!(pod["status"]["phase"], "Running");
//! assert!(pod["spec"]["nodeName"].as_str().is_some_and(|n| n.starts_with("node-")));
//! # Ok(())
//! # }
//! ```

mod config;
mod error;
mod exec;
mod handle;
pub(crate) mod logs;
mod node;
mod pod_status;
mod resources;
pub(crate) mod run;
mod scheduler;
mod stage;
mod tracker;

pub use config::Kubelet;
pub use error::KubeletError;
pub(crate) use exec::ExecHandler;
pub use exec::{ExecOutput, ExecRequest};
pub use handle::KubeletHandle;
pub use stage::{PodMatch, Stage};
