//! [`TestCluster`]: an in-memory API server with the controllers running against it.

use informer_testserver::{ServerError, TestServer, TestServerBuilder};

use crate::controllers::{self, ControllerKind, Controllers, RunningControllers};

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
    /// Starts the API server from `server` (a port, resource types, the history size, ...)
    /// instead of [`TestServer::builder`]'s defaults.
    pub fn server(mut self, server: TestServerBuilder) -> Self {
        self.server = Some(server);
        self
    }

    /// Runs `controllers` instead of all of them.
    pub fn controllers(mut self, controllers: Controllers) -> Self {
        self.controllers = controllers;
        self
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
        let server = self.server.unwrap_or_else(TestServer::builder).start().await?;
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
/// Jobs make pods; CronJobs make Jobs; Services get Endpoints and EndpointSlices. Nothing runs
/// pods: a test sets their status (see the [crate documentation](crate)).
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
    /// A cluster of a default server and every controller.
    ///
    /// # Errors
    ///
    /// See [`TestClusterBuilder::start`].
    pub async fn start() -> Result<Self, Error> {
        Self::builder().start().await
    }

    /// A builder: every controller and a default server unless told otherwise.
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
