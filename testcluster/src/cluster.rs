//! [`TestCluster`]: an in-memory API server with the controllers running against it.

use informer_testserver::kubelet::Kubelet;
use informer_testserver::{ServerError, TestServer, TestServerBuilder};

use crate::controllers::{self, ControllerKind, Controllers, RunningControllers};

/// The simulated nodes of a cluster's default server.
pub const DEFAULT_NODES: usize = 3;

/// What fails starting or stopping a cluster.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API server did not start, or gave no client.
    #[error("failed to start the API server: {0}")]
    Server(#[from] ServerError),
    /// The controllers did not start or stop cleanly.
    #[error("failed to run the controllers: {0}")]
    Controllers(#[from] controllers::Error),
}

/// Configures a [`TestCluster`]: see [`TestCluster::builder`].
#[derive(Debug, Default)]
pub struct TestClusterBuilder {
    server: Option<TestServerBuilder>,
    controllers: Controllers,
}

impl TestClusterBuilder {
    /// Starts the API server from `server` (a port, resource types, the history size, what it
    /// simulates, ...) instead of [`TestClusterBuilder::default_server`]. Without a
    /// [`kubelet`](TestServerBuilder::kubelet) nothing runs the pods the controllers create:
    /// a test then sets their status itself.
    pub fn server(mut self, server: TestServerBuilder) -> Self {
        self.server = Some(server);
        self
    }

    /// Runs `controllers` instead of all of them.
    pub fn controllers(mut self, controllers: Controllers) -> Self {
        self.controllers = controllers;
        self
    }

    /// The server a cluster starts unless given another: a default [`TestServer`] with a
    /// simulated kubelet of [`DEFAULT_NODES`] nodes, which schedules and runs the pods the
    /// controllers create (Job pods complete; see [`informer_testserver::kubelet`]).
    pub fn default_server() -> TestServerBuilder {
        TestServer::builder().kubelet(Kubelet::with_nodes(DEFAULT_NODES))
    }

    /// Does not run the controller of `kind`.
    pub fn without(mut self, kind: ControllerKind) -> Self {
        self.controllers = self.controllers.without(kind);
        self
    }

    /// Starts the server, then the controllers against it over HTTP, in tasks of the current
    /// Tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::Server`] if the server does not start; [`Error::Controllers`] if the
    /// controllers cannot be set up.
    pub async fn start(self) -> Result<TestCluster, Error> {
        let server = self.server.unwrap_or_else(Self::default_server).start().await?;
        let client = server.client()?;
        let controllers = self.controllers.start(server.client()?)?;
        Ok(TestCluster {
            server,
            client,
            controllers,
        })
    }
}

/// An in-memory API server ([`TestServer`]) with kube-controller-manager's core controllers
/// running against it: Deployments make ReplicaSets; ReplicaSets, StatefulSets, DaemonSets and
/// Jobs make pods; CronJobs make Jobs; Services get Endpoints and EndpointSlices. The default
/// server's simulated kubelet schedules and runs the pods (see the [crate documentation](crate)).
pub struct TestCluster {
    server: TestServer,
    client: kube::Client,
    controllers: RunningControllers,
}

impl std::fmt::Debug for TestCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCluster")
            .field("server", &self.server)
            .field("controllers", &self.controllers)
            .finish_non_exhaustive()
    }
}

impl TestCluster {
    /// A cluster of the default server (with a simulated kubelet of [`DEFAULT_NODES`] nodes)
    /// and every controller.
    ///
    /// # Errors
    ///
    /// See [`TestClusterBuilder::start`].
    pub async fn start() -> Result<Self, Error> {
        Self::builder().start().await
    }

    /// A builder: every controller and the default server unless told otherwise.
    pub fn builder() -> TestClusterBuilder {
        TestClusterBuilder::default()
    }

    /// A client of the server, whose default namespace is `default`.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The API server, for its Rust API (objects, faults, requests).
    pub fn server(&self) -> &TestServer {
        &self.server
    }

    /// The controllers that run.
    pub fn controllers(&self) -> impl Iterator<Item = ControllerKind> + '_ {
        self.controllers.kinds()
    }

    /// Stops the controllers (running reconciles finish), then the server.
    ///
    /// # Errors
    ///
    /// [`Error::Controllers`] if the controllers ended with an error; the server is stopped
    /// anyway.
    pub async fn shutdown(self) -> Result<(), Error> {
        let stopped = self.controllers.shutdown().await;
        self.server.shutdown().await;
        Ok(stopped?)
    }
}
