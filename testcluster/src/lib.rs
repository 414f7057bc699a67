//! kube-controller-manager's core controllers, built on `informer-runtime`, running against
//! the in-memory API server of `informer-testserver`.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod api;
mod clock;
mod cluster;
mod controllers;
mod deployment;
mod endpoints;
mod endpointslice;
mod hash;
mod job;
mod owner;
mod pod;
mod replicaset;
mod service;

pub use cluster::{Error, TestCluster, TestClusterBuilder};
pub use controllers::{ControllerKind, Controllers, Error as ControllersError, RunningControllers};
