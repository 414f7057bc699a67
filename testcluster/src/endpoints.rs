//! The Endpoints controller: for each Service with a selector, an Endpoints object of the
//! same name listing its pods' IPs, ready ones in `addresses` and the others in
//! `notReadyAddresses`, grouped by the ports they serve (kube's `pkg/controller/endpoint`).
//! Services without a selector, such as `default/kubernetes`, are left alone; Endpoints whose
//! Service is gone are deleted.

use std::{collections::BTreeMap, sync::Arc};

use informer_runtime::{Action, Controller, Manager, ObjectKey, ScopedLister, scope};
use k8s_openapi::api::core::v1::{EndpointAddress, EndpointPort, EndpointSubset, Endpoints, Pod, Service};
use kube::{Api, ResourceExt, api::PostParams};
use serde_json::json;

use crate::{api, service};

/// The controller's name in logs.
pub(crate) const NAME: &str = "endpoints";

/// What fails a reconcile of a service's endpoints.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A cache refused the question.
    #[error("failed to read the cache: {0}")]
    Cache(#[from] scope::Error),
    /// The write of the endpoints failed.
    #[error("failed to {action} endpoints {name}: {source}")]
    Write {
        /// What was done: create, update, delete.
        action: &'static str,
        /// The endpoints.
        name: String,
        /// The API's answer.
        source: kube::Error,
    },
}

struct Context {
    client: kube::Client,
    pods: ScopedLister<Pod>,
    endpoints: ScopedLister<Endpoints>,
    services: ScopedLister<Service>,
}

/// Adds the controller, and the one that deletes endpoints of deleted services, to `manager`.
pub(crate) fn register(manager: &mut Manager) {
    let factory = manager.factory().clone();
    let services = factory.informer::<Service>().lister();
    let selecting = services.clone();
    let controller = Controller::<Service>::new(&factory)
        .name(NAME)
        .watches::<Pod, _>(move |pod| service::services_of(&selecting, pod))
        .watches::<Endpoints, _>(|endpoints| [same_name(endpoints)])
        .concurrency(2);
    let cleanup = Controller::<Endpoints>::new(&factory)
        .name("endpoints-cleanup")
        .watches::<Service, _>(|service| [same_name(service)]);
    let context = Arc::new(Context {
        client: manager.client(),
        pods: factory.informer::<Pod>().lister(),
        endpoints: factory.informer::<Endpoints>().lister(),
        services,
    });
    manager.add_controller(controller, reconcile, api::retry, Arc::clone(&context));
    manager.add_controller(cleanup, delete_orphan, api::retry, context);
}

fn same_name(object: &impl ResourceExt) -> ObjectKey {
    ObjectKey::new(&object.namespace().unwrap_or_default(), &object.name_any())
}

async fn reconcile(svc: Arc<Service>, context: Arc<Context>) -> Result<Action, Error> {
    if service::selector(&svc).is_none() || svc.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let pods = service::pods(&context.pods, &svc, false)?;
    let subsets = subsets(&svc, &pods);
    let labels = labels(&svc);
    let namespace = svc.namespace().unwrap_or_default();
    let api: Api<Endpoints> = Api::namespaced(context.client.clone(), &namespace);
    let name = svc.name_any();
    let write_error = |action| {
        let name = name.clone();
        move |source| Error::Write { action, name, source }
    };
    match context.endpoints.by_namespace(&namespace).get(&name)? {
        Some(current) => {
            if api::same(
                &(&current.subsets, current.metadata.labels.as_ref()),
                &(&Some(subsets.clone()), Some(&labels)),
            ) {
                return Ok(Action::await_change());
            }
            let patch = json!({"metadata": {"labels": labels}, "subsets": subsets});
            api::merge(&api, &name, &patch)
                .await
                .map_err(write_error("update"))?;
        }
        None => {
            let endpoints = Endpoints {
                metadata: kube::api::ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(namespace),
                    labels: Some(labels),
                    ..Default::default()
                },
                subsets: Some(subsets),
            };
            api.create(&PostParams::default(), &endpoints)
                .await
                .map_err(write_error("create"))?;
        }
    }
    Ok(Action::await_change())
}

/// Deletes endpoints whose service no longer exists (kube deletes them when it syncs a
/// deleted service).
async fn delete_orphan(endpoints: Arc<Endpoints>, context: Arc<Context>) -> Result<Action, Error> {
    let namespace = endpoints.namespace().unwrap_or_default();
    let name = endpoints.name_any();
    if context.services.by_namespace(&namespace).get(&name)?.is_some() {
        return Ok(Action::await_change());
    }
    let write_error = |action| {
        let name = name.clone();
        move |source| Error::Write { action, name, source }
    };
    // the service cache may trail the endpoints' (a service and its endpoints written
    // together): only the server says the service is gone
    let services: Api<Service> = Api::namespaced(context.client.clone(), &namespace);
    if services
        .get_opt(&name)
        .await
        .map_err(write_error("find the service of"))?
        .is_some()
    {
        return Ok(Action::await_change());
    }
    let api: Api<Endpoints> = Api::namespaced(context.client.clone(), &namespace);
    api::delete(&api, &name).await.map_err(write_error("delete"))?;
    Ok(Action::await_change())
}

/// The service's labels, and the headless label for a headless service.
fn labels(svc: &Service) -> BTreeMap<String, String> {
    let mut labels = svc.labels().clone();
    labels.remove(service::HEADLESS);
    if service::is_headless(svc) {
        labels.insert(service::HEADLESS.to_owned(), String::new());
    }
    labels
}

/// A port a pod serves for a service: name, number, protocol.
type PodPort = (String, i32, String);

/// The ready and the not-ready addresses of a subset.
type Addresses = (Vec<EndpointAddress>, Vec<EndpointAddress>);

/// The subsets of `pods`: one per set of ports, with the pods serving exactly those ports
/// (kube's `RepackSubsets`), addresses sorted by IP.
fn subsets(svc: &Service, pods: &[Arc<Pod>]) -> Vec<EndpointSubset> {
    let mut groups: BTreeMap<Vec<PodPort>, Addresses> = BTreeMap::new();
    for pod in pods {
        let Some(ports) = pod_ports(svc, pod) else {
            continue;
        };
        let address = EndpointAddress {
            ip: service::pod_ip(pod).unwrap_or_default().to_owned(),
            hostname: service::hostname(svc, pod),
            node_name: pod.spec.as_ref().and_then(|spec| spec.node_name.clone()),
            target_ref: Some(service::pod_reference(pod)),
        };
        let (ready, not_ready) = groups.entry(ports).or_default();
        if service::serves(svc, pod) {
            ready.push(address)
        } else {
            not_ready.push(address)
        }
    }
    let app_protocols: BTreeMap<String, Option<String>> = service::ports(svc)
        .iter()
        .map(|port| (port.name.clone().unwrap_or_default(), port.app_protocol.clone()))
        .collect();
    groups
        .into_iter()
        .map(|(ports, (ready, not_ready))| EndpointSubset {
            addresses: Some(ready).filter(|a| !a.is_empty()),
            not_ready_addresses: Some(not_ready).filter(|a| !a.is_empty()),
            ports: Some(
                ports
                    .into_iter()
                    .map(|(name, port, protocol)| EndpointPort {
                        app_protocol: app_protocols.get(&name).cloned().flatten(),
                        name: Some(name).filter(|n| !n.is_empty()),
                        port,
                        protocol: Some(protocol),
                    })
                    .collect::<Vec<_>>(),
            )
            .filter(|p| !p.is_empty()),
        })
        .collect()
}

/// The ports the pod serves for the service, as (name, number, protocol); `None` when it
/// serves none although the service has ports (kube skips such pods), or when a service
/// without ports is not headless.
fn pod_ports(svc: &Service, pod: &Pod) -> Option<Vec<PodPort>> {
    let ports = service::ports(svc);
    if ports.is_empty() {
        return service::is_headless(svc).then(Vec::new);
    }
    let resolved: Vec<PodPort> = ports
        .iter()
        .filter_map(|port| {
            let number = service::target_port(port, pod)?;
            Some((
                port.name.clone().unwrap_or_default(),
                number,
                port.protocol.clone().unwrap_or_else(|| "TCP".into()),
            ))
        })
        .collect();
    (!resolved.is_empty()).then_some(resolved)
}
