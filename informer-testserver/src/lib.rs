//! An in-memory Kubernetes API server for integration tests and demos.
//!
//! It speaks enough of the Kubernetes API over plain HTTP that `kube::Client`, `kubectl` and
//! client-go work against it: discovery, create/get/list/update/patch/delete, label and field
//! selectors, `limit`/`continue` paging over consistent snapshots, watches (replay from a
//! resourceVersion, bookmarks, `sendInitialEvents`, 410 `Expired` after compaction),
//! CustomResourceDefinitions, and fault injection for tests.
//!
//! ```
//! use informer_testserver::TestServer;
//! use k8s_openapi::api::core::v1::Pod;
//! use kube::api::{Api, ListParams, PostParams};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = TestServer::start().await?;
//! let pods: Api<Pod> = Api::namespaced(server.client()?, "default");
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web", "labels": {"app": "web"}},
//!     "spec": {"containers": [{"name": "c", "image": "nginx"}]},
//! }))?;
//! pods.create(&PostParams::default(), &pod).await?;
//! let listed = pods.list(&ListParams::default().labels("app=web")).await?;
//! assert_eq!(listed.items.len(), 1);
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! [`ResetProxy`] sits between a client and the server and resets the connections carrying
//! watches (at once, after some bytes of each response, or as they are opened), to test how
//! clients survive what load balancers and API server drains do to long watches.
//!
//! The `informer-testserver` binary (feature `cli`) serves the same server on a port.

mod crd;
mod discovery;
mod faults;
mod handler;
mod list;
mod openapi;
mod options;
mod patch;
mod proxy;
mod registry;
mod routes;
mod seed;
mod selector;
mod server;
mod state;
mod status;
mod storage;
mod watch;

pub use faults::Failure;
pub use proxy::{ProxyError, ProxyStats, ResetProxy};
pub use registry::{ResourceType, builtin_types};
pub use seed::{SeedError, parse as parse_seed};
pub use selector::{SelectorError, parse_label_selector};
pub use server::{RequestRecord, ServerError, TestServer, TestServerBuilder};
pub use status::ApiError;
