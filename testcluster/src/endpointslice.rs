//! The EndpointSlice controller: for each Service with a selector, EndpointSlices of at most
//! 100 endpoints per address type and port set, owned by the service and labelled
//! `kubernetes.io/service-name` and `endpointslice.kubernetes.io/managed-by`; a service
//! without endpoints keeps one empty placeholder slice (kube's `pkg/controller/endpointslice`).
//! Slices are updated in place where their address type and ports match, created and
//! deleted otherwise; kube's topology hints and its packing heuristics are not implemented.

use std::{collections::BTreeMap, sync::Arc};

use futures::future::join_all;
use informer_runtime::{Action, Controller, Manager, ObjectKey, ScopedLister, scope};
use k8s_openapi::api::{
    core::v1::{Pod, Service},
    discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice},
};
use kube::{Api, ResourceExt, api::PostParams, core::Selector};
use serde_json::json;

use crate::{api, owner, pod, service};

/// The controller's name in logs.
pub(crate) const NAME: &str = "endpointslice";

/// The label naming a slice's service.
pub(crate) const SERVICE_NAME: &str = "kubernetes.io/service-name";
/// The label naming who manages a slice, and this controller's value of it.
pub(crate) const MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
/// See [`MANAGED_BY`].
pub(crate) const CONTROLLER: &str = "endpointslice-controller.k8s.io";
/// The most endpoints a slice holds (kube's `--max-endpoints-per-slice` default).
const MAX_ENDPOINTS: usize = 100;

/// What fails a reconcile of a service's slices.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// A cache refused the question.
    #[error("failed to read the cache: {0}")]
    Cache(#[from] scope::Error),
    /// A slice write failed.
    #[error("failed to {action} endpoint slice of service {service}: {source}")]
    Write {
        /// What was done: create, update, delete.
        action: &'static str,
        /// The service.
        service: String,
        /// The API's answer.
        source: kube::Error,
    },
}

struct Context {
    client: kube::Client,
    pods: ScopedLister<Pod>,
    slices: ScopedLister<EndpointSlice>,
    services: ScopedLister<Service>,
}

/// Adds the controller to `manager`.
pub(crate) fn register(manager: &mut Manager) {
    let factory = manager.factory().clone();
    let services = factory.informer::<Service>().lister();
    let selecting = services.clone();
    let controller = Controller::<Service>::new(&factory)
        .name(NAME)
        .owns::<EndpointSlice>()
        .watches::<Pod, _>(move |pod| service::services_of(&selecting, pod))
        .concurrency(2);
    let slices = factory.informer::<EndpointSlice>().lister();
    let of_service = slices.clone();
    let cleanup = Controller::<EndpointSlice>::new(&factory)
        .name("endpointslice-cleanup")
        .watches::<Service, _>(move |svc| slices_of(&of_service, svc));
    let context = Arc::new(Context {
        client: manager.client(),
        pods: factory.informer::<Pod>().lister(),
        slices,
        services,
    });
    manager.add_controller(controller, reconcile, api::retry, Arc::clone(&context));
    manager.add_controller(cleanup, delete_orphan, api::retry, context);
}

/// The keys of the slices this controller manages for `svc`.
fn slices_of(slices: &ScopedLister<EndpointSlice>, svc: &Service) -> Vec<ObjectKey> {
    let namespace = svc.namespace().unwrap_or_default();
    let found = slices
        .by_namespace(&namespace)
        .list(&managed_by_us(&svc.name_any()))
        .unwrap_or_default();
    found
        .iter()
        .map(|slice| ObjectKey::new(&namespace, &slice.name_any()))
        .collect()
}

/// The labels of the slices this controller manages for the service `name`.
fn managed_by_us(name: &str) -> Selector {
    [
        (SERVICE_NAME.to_owned(), name.to_owned()),
        (MANAGED_BY.to_owned(), CONTROLLER.to_owned()),
    ]
    .into_iter()
    .collect()
}

/// Deletes a managed slice whose service is gone: one written by a reconcile that raced the
/// service's deletion, which the server's garbage collection (run within the delete request)
/// does not see.
async fn delete_orphan(slice: Arc<EndpointSlice>, context: Arc<Context>) -> Result<Action, Error> {
    if slice.labels().get(MANAGED_BY).map(String::as_str) != Some(CONTROLLER) {
        return Ok(Action::await_change());
    }
    let Some(owner) = owner::controller_of(&slice.metadata).filter(|o| o.kind == "Service") else {
        return Ok(Action::await_change());
    };
    let namespace = slice.namespace().unwrap_or_default();
    let owns = |svc: &Service| svc.uid().as_deref() == Some(owner.uid.as_str());
    if context
        .services
        .by_namespace(&namespace)
        .get(&owner.name)?
        .is_some_and(|svc| owns(&svc))
    {
        return Ok(Action::await_change());
    }
    // the service cache may trail the slice's: only the server says the service is gone
    let services: Api<Service> = Api::namespaced(context.client.clone(), &namespace);
    let current = services
        .get_opt(&owner.name)
        .await
        .map_err(|source| Error::Write {
            action: "read the service of an",
            service: owner.name.clone(),
            source,
        })?;
    if current.is_some_and(|svc| owns(&svc)) {
        return Ok(Action::await_change());
    }
    let api: Api<EndpointSlice> = Api::namespaced(context.client.clone(), &namespace);
    api::delete(&api, &slice.name_any())
        .await
        .map_err(|source| Error::Write {
            action: "delete",
            service: owner.name.clone(),
            source,
        })?;
    Ok(Action::await_change())
}

/// What a slice holds: its address type, ports, endpoints.
#[derive(Debug, Clone, PartialEq)]
struct Desired {
    address_type: String,
    ports: Vec<EndpointPort>,
    endpoints: Vec<Endpoint>,
}

async fn reconcile(svc: Arc<Service>, context: Arc<Context>) -> Result<Action, Error> {
    if service::selector(&svc).is_none() || svc.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let pods = service::pods(&context.pods, &svc, true)?;
    let mut desired = desired_slices(&svc, &pods);
    if desired.is_empty() {
        desired.push(Desired {
            address_type: "IPv4".into(),
            ports: Vec::new(),
            endpoints: Vec::new(),
        });
    }
    let namespace = svc.namespace().unwrap_or_default();
    let uid = svc.uid().unwrap_or_default();
    let selector = managed_by_us(&svc.name_any());
    let mut existing: Vec<Arc<EndpointSlice>> = context.slices.by_namespace(&namespace).list(&selector)?;
    existing.retain(|slice| owner::controller_of(&slice.metadata).is_some_and(|o| o.uid == uid));
    existing.sort_by_key(|slice| slice.name_any());
    let api: Api<EndpointSlice> = Api::namespaced(context.client.clone(), &namespace);
    let write = Writer {
        svc: &svc,
        api: &api,
        labels: labels(&svc),
    };
    for slice in desired {
        match existing
            .iter()
            .position(|e| e.address_type == slice.address_type && same_ports(e, &slice.ports))
        {
            Some(index) => write.update(&existing.remove(index), slice).await?,
            None => write.create(slice).await?,
        }
    }
    write.delete(&existing).await?;
    Ok(Action::await_change())
}

/// The slices of `pods`: grouped by address type and resolved ports, at most
/// [`MAX_ENDPOINTS`] each.
fn desired_slices(svc: &Service, pods: &[Arc<Pod>]) -> Vec<Desired> {
    let mut groups: BTreeMap<(String, String), (Vec<EndpointPort>, Vec<Endpoint>)> = BTreeMap::new();
    for pod in pods {
        let Some(ports) = pod_ports(svc, pod) else {
            continue;
        };
        let ip = service::pod_ip(pod).unwrap_or_default();
        let address_type = if ip.contains(':') { "IPv6" } else { "IPv4" };
        let key = (
            address_type.to_owned(),
            serde_json::to_string(&ports).unwrap_or_default(),
        );
        groups
            .entry(key)
            .or_insert_with(|| (ports, Vec::new()))
            .1
            .push(endpoint(svc, pod, ip));
    }
    groups
        .into_iter()
        .flat_map(|((address_type, _), (ports, endpoints))| {
            let chunks: Vec<Vec<Endpoint>> = endpoints
                .chunks(MAX_ENDPOINTS)
                .map(<[Endpoint]>::to_vec)
                .collect();
            chunks.into_iter().map(move |endpoints| Desired {
                address_type: address_type.clone(),
                ports: ports.clone(),
                endpoints,
            })
        })
        .collect()
}

/// The endpoint of `pod`: ready when it serves and is not terminating (kube's conditions).
fn endpoint(svc: &Service, pod: &Pod, ip: &str) -> Endpoint {
    let serving = service::serves(svc, pod);
    let terminating = pod.metadata.deletion_timestamp.is_some();
    Endpoint {
        addresses: vec![ip.to_owned()],
        conditions: Some(EndpointConditions {
            ready: Some(serving && !terminating),
            serving: Some(serving),
            terminating: Some(terminating),
        }),
        hostname: service::hostname(svc, pod),
        node_name: pod.spec.as_ref().and_then(|spec| spec.node_name.clone()),
        target_ref: Some(service::pod_reference(pod)),
        ..Endpoint::default()
    }
}

/// The ports the pod serves for the service; `None` when it serves none of them.
fn pod_ports(svc: &Service, pod: &Pod) -> Option<Vec<EndpointPort>> {
    let ports: Vec<EndpointPort> = service::ports(svc)
        .iter()
        .filter_map(|port| {
            Some(EndpointPort {
                name: Some(port.name.clone().unwrap_or_default()),
                port: Some(service::target_port(port, pod)?),
                protocol: Some(port.protocol.clone().unwrap_or_else(|| "TCP".into())),
                app_protocol: port.app_protocol.clone(),
            })
        })
        .collect();
    (service::ports(svc).is_empty() || !ports.is_empty()).then_some(ports)
}

fn same_ports(slice: &EndpointSlice, ports: &[EndpointPort]) -> bool {
    api::same(&slice.ports.as_deref().unwrap_or_default(), &ports)
}

/// The labels of the service's slices: the service's own, its name, the manager, and the
/// headless label for a headless service.
fn labels(svc: &Service) -> BTreeMap<String, String> {
    let mut labels = svc.labels().clone();
    labels.insert(SERVICE_NAME.to_owned(), svc.name_any());
    labels.insert(MANAGED_BY.to_owned(), CONTROLLER.to_owned());
    if service::is_headless(svc) {
        labels.insert(service::HEADLESS.to_owned(), String::new());
    }
    labels
}

/// The writes of one reconcile.
struct Writer<'a> {
    svc: &'a Service,
    api: &'a Api<EndpointSlice>,
    labels: BTreeMap<String, String>,
}

impl Writer<'_> {
    fn error(&self, action: &'static str) -> impl FnOnce(kube::Error) -> Error + '_ {
        move |source| Error::Write {
            action,
            service: self.svc.name_any(),
            source,
        }
    }

    async fn create(&self, desired: Desired) -> Result<(), Error> {
        let slice = EndpointSlice {
            metadata: kube::api::ObjectMeta {
                generate_name: Some(pod::generate_name(&self.svc.name_any())),
                namespace: self.svc.namespace(),
                labels: Some(self.labels.clone()),
                owner_references: Some(vec![owner::controller_reference(self.svc)]),
                ..Default::default()
            },
            address_type: desired.address_type,
            endpoints: Some(desired.endpoints),
            ports: Some(desired.ports),
        };
        self.api
            .create(&PostParams::default(), &slice)
            .await
            .map(drop)
            .map_err(self.error("create"))
    }

    async fn update(&self, current: &EndpointSlice, desired: Desired) -> Result<(), Error> {
        let current_state = (
            current.endpoints.as_deref().unwrap_or_default(),
            current.metadata.labels.as_ref(),
        );
        if api::same(
            &current_state,
            &(desired.endpoints.as_slice(), Some(&self.labels)),
        ) {
            return Ok(());
        }
        let patch = json!({"metadata": {"labels": self.labels}, "endpoints": desired.endpoints});
        api::merge(self.api, &current.name_any(), &patch)
            .await
            .map(drop)
            .map_err(self.error("update"))
    }

    async fn delete(&self, slices: &[Arc<EndpointSlice>]) -> Result<(), Error> {
        let deletes = slices
            .iter()
            .map(|slice| async move { api::delete(self.api, &slice.name_any()).await });
        let results: Vec<kube::Result<()>> = join_all(deletes).await;
        results
            .into_iter()
            .collect::<kube::Result<Vec<()>>>()
            .map(drop)
            .map_err(self.error("delete"))
    }
}
