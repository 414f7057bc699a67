//! An in-memory Kubernetes API server to run controller and client tests against.
//!
//! [`TestServer`] is a real HTTP server on 127.0.0.1, started inside the test process: no
//! cluster, container or binary to install. It speaks enough of the Kubernetes API that
//! `kube::Client`, client-go and `kubectl` work against it:
//!
//! - discovery (legacy and aggregated), `/version` and the little OpenAPI v3 kubectl reads;
//! - every group version kube-apiserver 1.37 serves by default (the GA ones), with its
//!   discovery: resources, kinds, short names, categories, scope, verbs, the `status`
//!   subresources, and the order of `/apis` (`kubectl api-resources` looks like a cluster's);
//!   the built-in APIServices (`v1.apps`, `v1.`, ...; `Available`, reason `Local`);
//! - the review APIs (TokenReview, SelfSubjectReview, SubjectAccessReview,
//!   SelfSubjectAccessReview, LocalSubjectAccessReview, SelfSubjectRulesReview) answered as by
//!   an allow-all authorizer (see [Reviews](#reviews)); CertificateSigningRequests' `approval`
//!   subresource; core `bindings`; read-only `componentstatuses`;
//! - create, get, list, update (with optimistic concurrency), patch (JSON merge, JSON patch,
//!   strategic merge and server-side apply with field ownership in `managedFields`, conflicts
//!   and `force`), delete and delete-collection, the `status` subresource,
//!   `pods/eviction` (honouring PodDisruptionBudgets), `pods/binding`,
//!   `pods/ephemeralcontainers`, `pods/resize`, `serviceaccounts/token`,
//!   `generateName`, finalizers and preconditions;
//! - `Table` answers (`as=Table` in `Accept`, what `kubectl get` prints) with the standard
//!   columns of the common kinds and CRD `additionalPrinterColumns`, for lists, objects and
//!   watches, and for the answers of creates, updates, patches and deletes;
//! - metadata-only answers (`as=PartialObjectMetadata` in `Accept`) to every verb that returns
//!   an object, as client-go's metadata client asks for them; kube-apiserver's `406` for an
//!   `Accept` it cannot serve;
//! - objects of built-in kinds stored as kube-apiserver stores them (decoded into Go's types,
//!   kept in protobuf): empty lists and maps and zero values of `omitempty` fields are in no
//!   answer, so the JSON and the protobuf answers of an object decode alike;
//! - answers in JSON, YAML, protobuf (built-in kinds) or CBOR as `Accept` chooses, written with
//!   kube-apiserver's key order (Go's struct order for built-in types: `kind`, `apiVersion`,
//!   `metadata`, `spec`, `status`; sorted keys for custom resources);
//! - CBOR (`application/cbor`) as kube-apiserver 1.37 speaks it with `CBORServingAndStorage`
//!   (KEP-4222), for built-in kinds and custom resources: objects, lists, metadata-only
//!   answers and `Status` errors in apimachinery's encoding mode (one data item in the
//!   self-described tag, byte strings, keys in bytewise order, shortest integers and floats,
//!   `[]byte` fields of built-in kinds in the base64 tag); watches as `application/cbor-seq`
//!   (a CBOR sequence of `WatchEvent`s) when `Accept` asks for `application/cbor`; CBOR bodies
//!   of creates, updates, deletes and `application/apply-patch+cbor` applies, checked as
//!   apimachinery's decoding mode checks them (well-formedness, duplicate and non-string keys,
//!   UTF-8, NaN and infinities, bignums, `int64` range), with kube-apiserver's `400` messages;
//! - label selectors, and field selectors with each type's field labels and Go's zero values
//!   for unset fields (`spec.unschedulable=false` selects a node without the field);
//!   `limit`/`continue` paging over consistent snapshots,
//!   `resourceVersion`/`resourceVersionMatch` semantics;
//! - watches: replay from a resourceVersion, bookmarks, `sendInitialEvents`, `timeoutSeconds`,
//!   and `410 Expired` once the history has been compacted;
//! - what a fresh kube-apiserver holds: the namespaces `default`, `kube-system`, `kube-public`
//!   and `kube-node-lease`, the `default/kubernetes` Service with its endpoints, and the
//!   bootstrap RBAC roles and bindings for users;
//! - namespaces that must exist: creating in a missing one is `404 namespaces "x" not found`
//!   as in kube-apiserver ([`TestServer::create_namespace`] creates one,
//!   [`TestServerBuilder::auto_create_namespaces`] creates them on demand), creating in a
//!   terminating one is `403`, deleting one deletes its objects;
//! - CustomResourceDefinitions: creating one serves its resource types, deleting it removes
//!   them;
//! - the `scale` subresource of Deployments, ReplicaSets, StatefulSets,
//!   ReplicationControllers and custom resources whose CRD declares it (`kubectl scale`);
//! - garbage collection of dependents through `ownerReferences`: background, foreground
//!   (`foregroundDeletion`, `blockOwnerDeletion`) and orphan propagation;
//! - [faults](#fault-injection) for the paths that real clusters rarely take on demand;
//! - opt-in, a [simulated kubelet and scheduler](#a-simulated-kubelet) in the manner of KWOK:
//!   Ready nodes, pods scheduled, run and made Ready, graceful pod deletion, and the logs,
//!   exec and attach answers a test registers.
//!
//! Each server has its own store and revision counter, so tests running in parallel each start
//! their own.
//!
//! # What differs from kube-apiserver
//!
//! It implements the API's storage, admission and wire semantics, not a cluster. Each row is a
//! difference a test should not rely on:
//!
//! | What differs | What a test should not rely on |
//! |------|--------------------------------|
//! | No controllers. Garbage collection and namespace deletion run within the delete request; deletion is immediate unless finalizers hold the object (no grace period) | Objects a controller would write (replica sets of deployments, pods of jobs, endpoints of services); dependents or namespace contents still there after the delete answered |
//! | No scheduler or kubelet unless [`TestServerBuilder::kubelet`] asks for the [simulated one](#a-simulated-kubelet): without it pods never get a node or a status, deleting a pod is immediate, and connect subresources (`log`, `exec`, `attach`, `portforward`, `proxy`) answer kube-apiserver's errors for an unreachable kubelet. With it, scheduling knows node selectors, required node affinity, taints, the pod count and resource requests against each node's [allocatable](kubelet::Kubelet::allocatable) only; containers do what the test's stages say, logs and exec answer what it registers; `portforward`, `proxy`, SPDY streams, probes and containers' use of resources (limits, OOM kills) are not simulated; node Leases are renewed every [`Kubelet::lease_renewal`](kubelet::Kubelet::lease_renewal), but the nodes' status (its conditions' `lastHeartbeatTime`) is written once, at start | Pending pods you did not make unschedulable; scheduling by pod (anti-)affinity or topology spread; preemption of lower-priority pods; a node going NotReady or evicting pods; fresh node status heartbeats; port-forwarding; exec over SPDY (kubectl before 1.30) |
//! | Plain HTTP with no authentication, authorization or priority and fairness: the caller is whoever its credentials name, unchecked, and every review allows; requested tokens carry a random signature | `403`s from RBAC (inject them with [`TestServer::fail_next`]); a review that denies; authenticating with a requested token |
//! | The GA group versions of Kubernetes 1.37 only; `componentstatuses` are always healthy; OpenAPI v3 without schemas, no `/openapi/v2` | Beta or alpha APIs; `kubectl explain`; unhealthy components |
//! | At start: the system namespaces, `default/kubernetes` and the bootstrap RBAC roles and bindings for users, with `admin`, `edit` and `view` aggregated once | The roles of nodes, components and controllers; priority classes, flow schemas, the API server's lease; a role labelled later joining `admin`, `edit` or `view` |
//! | Admission is [`admission::plugins`](#contributing-how-a-request-flows-and-where-to-change-it): names and owner references, namespace lifecycle, custom resource schemas, field ownership, CRDs, CSRs and garbage collection. Built-in objects get kube-apiserver's defaults on every write (a pod's `restartPolicy`, its containers' `imagePullPolicy`, a Deployment's `strategy`, a Service's `targetPort`, ...: the `SetDefaults_*` of every served kind), so a controller that writes its desired object without them changes nothing, as against a real cluster. A new pod is `Pending` with its QoS class and gets what the default admission plugins add: its `default` service account and token volume, the not-ready and unreachable tolerations, its PriorityClass's priority (an unknown class is a `403`), its namespace's LimitRanges' default requests and limits (a container outside their `min`, `max` or ratio is a `403`), its RuntimeClass's overhead and scheduling (an unknown class is a `403`). Every active namespace has its `default` ServiceAccount, created with it and again when deleted, as the serviceaccounts controller keeps it; a pod whose service account does not exist is a `403`. Services get a cluster IP from `10.96.0.0/12` and node ports from 30000-32767 (a taken one is a `422`), new Jobs a selector on their uid; claims and Ingresses that name no class get the default StorageClass or IngressClass; claims and volumes get their protection finalizers, removed from a deleted one once no scheduled pod uses it (a claim) or it is not `Bound` (a volume). A client's create cannot set the status of a kind with a status subresource (a custom resource's is dropped, a built-in one is its kind's zero status); the in-process `create` and seeds keep it, as fixtures. Built-in specs are not validated beyond their metadata's names and owner references | Webhooks, quotas, `LimitRanger`'s `Pod` and `PersistentVolumeClaim` items, pod security; the `kube-root-ca.crt` ConfigMap of every namespace; the default class given later to claims created before one existed; pod-level resources' defaults; dual-stack Services; `422`s for invalid built-in specs |
//! | CRD schemas prune and check types, `nullable`, `required`, `enum`, bounds and lengths; not `pattern`, `format`, CEL rules, defaults or list uniqueness; versions share objects without conversion | Custom resources refused by `pattern`, `format` or CEL, or defaulted; conversion webhooks |
//! | Lists in strategic merge patches and `managedFields` are keyed by k8s-openapi's one merge key per list; `managedFields` record leaves only, for writes over HTTP; duplicate fields are found in JSON bodies only | Items of lists keyed by several fields owned apart; duplicate YAML fields reported |
//! | Protobuf only for the kinds k8s-pb 0.9 has (not the six newest: ClusterTrustBundle, PodCertificateRequest, MutatingAdmissionPolicy and its binding, DeviceTaintRule, StorageVersionMigration), holding what the JSON form holds; CBOR for every kind, always on (kube-apiserver needs `CBORServingAndStorage`), written from the JSON form (the `[]byte` fields of those six kinds are text strings of base64; a CBOR float that is whole stays a float); CBOR bodies nested deeper than 256 levels are refused (10000 in kube-apiserver), and `fieldValidation` reports their unknown fields of built-in kinds as for JSON (`unknown field "spec.x"`, where kube-apiserver's CBOR decoder gives the field's index in its map); discovery is never `406` | Protobuf answers of those kinds; zero values of non-pointer fields in protobuf; `null` for an empty list or map of a field without `omitempty` (left out here); `415` for CBOR from a cluster without the feature; the text of CBOR unknown-field errors; `406` for discovery |
//! | Tables have the columns and cells of kube-apiserver's printers for the built-in kinds `kubectl get` users look at, CRD printer columns, `Name` and `Created At` for the others | The printer columns of IP addresses and storage version migrations |
//! | Label selectors have no numeric `>` and `<`; types registered without a CRD are selected by `metadata.name` and `metadata.namespace` only | `>`/`<` in `labelSelector`; an aggregated API's own field labels |
//!
//! # Reviews
//!
//! The review APIs are never stored: the answer is the request with its `status` filled (code
//! 201, no `resourceVersion`); GET and the other verbs are `405`. Every access review is
//! allowed (SelfSubjectRulesReview: every verb on every resource and URL), so
//! `kubectl auth can-i` says `yes`. Who someone is, the server reads from the credentials
//! without checking them:
//!
//! - no `Authorization` header: `system:anonymous` in `system:unauthenticated` (what
//!   `kubectl auth whoami` prints against [`TestServer::client`]);
//! - a bearer token that is a JWT (a service account token): the user of its `sub` claim, with
//!   the service account groups for `system:serviceaccount:NS:NAME`;
//! - another bearer token: the user of that name (token `alice` is user `alice`); basic
//!   authentication: its user name.
//!
//! Authenticated users are in `system:authenticated` too. A TokenReview reviews `spec.token`
//! by the same rules: every non-empty token is authenticated.
//!
//! # Start, connect, create, read back
//!
//! [`TestServer::start`] binds a free port and serves from tasks of the current Tokio runtime
//! (a `#[tokio::test]`'s runtime is enough). [`TestServer::client`] gives a `kube::Client` for
//! it, whose default namespace is `default`.
//!
//! ```
//! use informer_testserver::TestServer;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = TestServer::start().await?;
//! let config_maps: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
//!
//! let settings: ConfigMap = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "settings"},
//!     "data": {"mode": "fast"},
//! }))?;
//! let created = config_maps.create(&PostParams::default(), &settings).await?;
//! // The server filled in what kube-apiserver fills in.
//! assert!(created.metadata.uid.is_some());
//! assert_eq!(created.metadata.resource_version, Some(server.resource_version().to_string()));
//!
//! let read = config_maps.get("settings").await?;
//! assert_eq!(read.data.unwrap_or_default()["mode"], "fast");
//!
//! // The Rust API reads the same store, without a request.
//! let stored = server.get("v1", "ConfigMap", Some("default"), "settings")?;
//! assert_eq!(stored["data"]["mode"], "fast");
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Objects and resource types
//!
//! Tests usually set the scene without going through HTTP:
//!
//! - [`TestServer::create`], [`update`](TestServer::update), [`get`](TestServer::get),
//!   [`list`](TestServer::list) and [`delete`](TestServer::delete) take and give JSON objects
//!   (the `_typed` variants take k8s-openapi or `kube::CustomResource` types). They change the
//!   store exactly as the matching request would: open watches see the events, errors are the
//!   [`ApiError`] a request would get. Faults do not apply to them, and they are not recorded
//!   in [`TestServer::requests`].
//! - [`TestServer::seed_str`] and [`seed_file`](TestServer::seed_file) create the objects of a
//!   YAML or JSON document (several `---` documents, or a `List`), CustomResourceDefinitions
//!   first, then namespaces, then the rest in order.
//!
//! A resource type is served from the start (the built-in table of [`registry::builtin_types`]
//! and the types given to [`TestServerBuilder::resource`]), once registered
//! ([`TestServer::register`], or [`register_type`](TestServer::register_type) for a type
//! implementing `kube::Resource`), or once a CustomResourceDefinition defining it is created:
//!
//! ```
//! use informer_testserver::{ResourceType, TestServer};
//! use kube::api::{Api, DynamicObject};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = TestServer::start().await?;
//! server.seed_str(
//!     r#"
//! apiVersion: apiextensions.k8s.io/v1
//! kind: CustomResourceDefinition
//! metadata:
//!   name: widgets.example.com
//! spec:
//!   group: example.com
//!   scope: Namespaced
//!   names: {plural: widgets, singular: widget, kind: Widget}
//!   versions:
//!     - name: v1
//!       served: true
//!       storage: true
//!       schema:
//!         openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
//! ---
//! apiVersion: example.com/v1
//! kind: Widget
//! metadata: {name: w1, namespace: default}
//! spec: {size: 3}
//! "#,
//! )?;
//!
//! let widget = ResourceType::new("example.com", "v1", "Widget", "widgets", true);
//! let widgets: Api<DynamicObject> =
//!     Api::namespaced_with(server.client()?, "default", &widget.api_resource());
//! assert_eq!(widgets.get("w1").await?.data["spec"]["size"], 3);
//!
//! // A type served without a CRD, as an aggregated API would add it.
//! server.register(ResourceType::new("metrics.example.com", "v1beta1", "Sample", "samples", false));
//! server.create(serde_json::json!({
//!     "apiVersion": "metrics.example.com/v1beta1",
//!     "kind": "Sample",
//!     "metadata": {"name": "s1"},
//! }))?;
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Fault injection
//!
//! The server fails, delays or cuts what a test asks for, so the retry and recovery paths of a
//! client run in ordinary tests:
//!
//! - [`TestServer::fail_next`] answers the next matching requests with an error [`Failure`]
//!   (500, 429 with `Retry-After`, 403, ...), by verb and resource (`kube::Client` retries
//!   429, 503 and 504 answers by itself, so those fail a kube request only once they outnumber
//!   its retries);
//!   [`stall_next`](TestServer::stall_next) holds the next matching requests for a while
//!   ([`Stall`]); [`set_delay`](TestServer::set_delay) delays every response;
//!   [`set_watch_lag`](TestServer::set_watch_lag) holds back the live watch events of a
//!   resource, so caches trail the server (a controller acting on a stale cache);
//!   [`clear_faults`](TestServer::clear_faults) disarms them all;
//! - [`named_client`](TestServer::named_client) makes a client whose requests the rules can
//!   single out ([`Failure::client`], [`Stall::client`]), e.g. one replica of several;
//! - [`drop_watches`](TestServer::drop_watches) and
//!   [`drop_watches_after`](TestServer::drop_watches_after) end watches cleanly, as their
//!   timeout does; [`send_malformed_watch_line`](TestServer::send_malformed_watch_line)
//!   writes a line that is not JSON;
//! - [`compact`](TestServer::compact) drops the history, so older resourceVersions and
//!   continue tokens get `410 Expired`; [`restart`](TestServer::restart) closes every watch
//!   and connection, keeping the data;
//! - [`requests`](TestServer::requests), [`request_count`](TestServer::request_count) and
//!   [`watch_count`](TestServer::watch_count) tell what the client did.
//!
//! ```
//! use informer_testserver::{Failure, TestServer};
//! use k8s_openapi::api::core::v1::Pod;
//! use kube::api::{Api, ListParams};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = TestServer::start().await?;
//! let pods: Api<Pod> = Api::default_namespaced(server.client()?);
//!
//! server.fail_next(Failure::new(500).verb("list").resource("pods"));
//! match pods.list(&ListParams::default()).await {
//!     Err(kube::Error::Api(status)) => assert_eq!(status.code, 500),
//!     other => panic!("expected a 500, got {other:?}"),
//! }
//! // The rule is used up: the next list succeeds.
//! assert!(pods.list(&ListParams::default()).await?.items.is_empty());
//! assert_eq!(server.request_count("list", "pods"), 2);
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! Connection resets are not something an HTTP server can send: [`ResetProxy`] is a TCP proxy
//! to put between the client and the server. It knows which connections carry watches and
//! resets them with a TCP RST on demand: all at once, after some bytes of each response, or as
//! the next ones are being opened. See the [`proxy`] module.
//!
//! # A simulated kubelet
//!
//! [`TestServerBuilder::kubelet`] with a [`Kubelet`](kubelet::Kubelet) runs, inside the
//! server, what a cluster's scheduler and kubelets would do to pods, as KWOK does for a real
//! API server:
//!
//! - nodes `node-1` .. `node-N` are registered at start, Ready (with capacity, addresses,
//!   node info, the kubelet's port and labels), each with its Lease in `kube-node-lease`,
//!   renewed every [`Kubelet::lease_renewal`](kubelet::Kubelet::lease_renewal);
//! - a pod without `spec.nodeName` (for the default scheduler) is bound to the node that fits
//!   with the fewest pods (node selector, required node affinity, taints and tolerations,
//!   `spec.unschedulable`, the `pods` allocatable, and its resource requests beside those of
//!   the node's pods within what the node can
//!   [allocate](kubelet::Kubelet::allocatable)); when none fits it stays Pending with
//!   `PodScheduled=False` (reason `Unschedulable`, kube-scheduler's message) and a
//!   `FailedScheduling` Event, and is tried again after every change;
//! - a pod bound to a simulated node starts: sandbox, init containers one after the other,
//!   then its containers, each step a status write (phase, addresses, start time, QoS class,
//!   conditions, container statuses) that watches see, tens of milliseconds apart;
//! - what each container does next is its [`Stage`](kubelet::Stage): ready (the default), not
//!   ready, complete or fail, restarted as `restartPolicy` says (a crash loop counts
//!   `restartCount`, waiting in `CrashLoopBackOff`); pods owned by a Job complete;
//! - deleting a pod on a simulated node is graceful, by kube-apiserver's rules for pods
//!   (`gracePeriodSeconds`, else `spec.terminationGracePeriodSeconds`, else 30 s; at once for
//!   an unscheduled or finished pod): it gets a `deletionTimestamp`, its containers stop, and
//!   the kubelet removes it after the shorter of the grace period and
//!   [`Kubelet::stop_time`](kubelet::Kubelet::stop_time) (as if its processes exited on
//!   SIGTERM);
//! - `pods/log` answers the text registered for the container (with `tailLines`,
//!   `timestamps`, `limitBytes`, `sinceSeconds`, `previous`, and `follow`, which streams what
//!   is appended), `pods/exec` runs a registered function of the command, `pods/attach`
//!   sends registered output, over the WebSocket protocol kube-rs and kubectl 1.30+ use.
//!
//! Tests change stages and register logs and exec answers on [`TestServer::kubelet`]:
//!
//! ```
//! use informer_testserver::TestServer;
//! use informer_testserver::kubelet::{ExecOutput, Kubelet, PodMatch, Stage};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = TestServer::builder().kubelet(Kubelet::with_nodes(2)).start().await?;
//! let kubelet = server.kubelet().expect("a kubelet");
//! // Pods labelled app=db never become ready; those of app=batch fail with exit code 2.
//! kubelet.set_stage(PodMatch::labels("app=db")?, Stage::NotReady);
//! kubelet.set_stage(PodMatch::labels("app=batch")?, Stage::Fail { exit_code: 2 });
//! kubelet.set_logs("default", "web-0", "app", "started\n");
//! kubelet.on_exec(PodMatch::named("default", "web-0"), |run| match run.command.as_slice() {
//!     [cmd, ..] if cmd == "hostname" => ExecOutput::stdout("web-0\n"),
//!     _ => ExecOutput::stderr("command not found\n").exit_code(127),
//! });
//! # Ok(())
//! # }
//! ```
//!
//! # Replicas of a sharded controller
//!
//! `informer_runtime::replicas` (the runtime's `replicas` feature) runs N replicas of
//! a sharded manager and a sharder against a [`TestServer`], each replica with its
//! [named client](TestServer::named_client), and waits until the ring has settled.
//!
//! # Modules
//!
//! The entry points are at the root; the modules hold what goes with them:
//!
//! - [`kubelet`]: the simulated kubelet's configuration ([`kubelet::Kubelet`]), its handle
//!   ([`kubelet::KubeletHandle`]), stages, exec answers and errors;
//! - [`proxy`]: [`ResetProxy`], its counters ([`proxy::ProxyStats`]) and its errors;
//! - [`registry`]: [`ResourceType`] and the built-in types every server serves;
//! - [`seed`]: the parser behind [`TestServer::seed_str`], for tests that want the objects
//!   without a server;
//! - [`selector`]: the label selector parser the server uses (`informer-runtime`'s, with
//!   kube-apiserver's grammar, into a `kube::core::Selector`);
//! - [`wait`]: [`eventually`](wait::eventually) and [`eventually_async`](wait::eventually_async),
//!   for a test that waits for what a controller or an informer does in the background.
//!
//! # Contributing: how a request flows, and where to change it
//!
//! The crate's folders follow a request, and each imports only the ones after it (checked by
//! `cargo xtask module-cycles`):
//!
//! 1. **`http/`** parses and routes. `handler.rs` reads the headers and the query once,
//!    negotiates `Accept` once (`encoding/transform.rs`'s `Negotiated`, which every answer of
//!    the request reads, errors included), records the request, applies the faults and reads
//!    the body (`body.rs`); `routes.rs` parses the path; `resource.rs` looks the type up and
//!    hands the request ([`RequestRecord`]'s verb, a `ResourceRequest`) to one handler per
//!    verb in `verbs/` (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
//!    `delete_collection`), to the handler of a subresource (`subresource/`: `scale`,
//!    `approval`, `eviction`, `binding`, the connect subresources, ...) or, for a computed
//!    resource (the reviews, `componentstatuses`), to `computed.rs`. A write handler builds
//!    the request's `WriteContext` (field manager, `force`, `fieldValidation`, `dryRun`) and
//!    answers through `shape.rs` (as stored, `PartialObjectMetadata`, `Table`) and
//!    `response.rs` (JSON, YAML, protobuf or CBOR, `Warning` headers). Discovery and OpenAPI
//!    documents are `discovery.rs` and `openapi.rs`.
//! 2. **`kubelet/`** (after `http/`, which serves its logs and exec; before `write/`, which
//!    it writes through) is the simulated kubelet and scheduler: `config.rs` and `handle.rs` are
//!    its public face, `run.rs` its loop (woken by every write, through `Store::changes`),
//!    `scheduler.rs`, `tracker.rs` (each pod's containers) and `pod_status.rs` what it
//!    decides and writes; the graceful deletion of its pods is an admission plugin
//!    (`admission/graceful_pod_deletion.rs`), its HTTP answers `http/subresource/pod_logs.rs`
//!    and `pod_streams.rs`.
//! 3. **`write/`** holds the verbs that change objects, as methods of a `WriteSession` (the
//!    locked state and the request's context): `create.rs`, `update.rs`, `patch.rs` (with
//!    `patch_document.rs` and `strategic_merge.rs`), `apply.rs`, `delete.rs`, `scale.rs`. Each
//!    sets the server-owned metadata and calls the admission plugins at its steps.
//! 4. **`admission/`** holds what checks and changes objects on the way in, and what a write
//!    sets off: each feature is a `Plugin` (`plugin.rs`: admit a create, admit an update, hold
//!    a deleted object, take a deletion over, act once stored or removed), listed in order in
//!    `admission::plugins()`: object names and owner references, namespace lifecycle, custom
//!    resource schemas, field ownership, CRDs, CSRs, the graceful deletion of the simulated
//!    kubelet's pods, garbage collection. Cascades (a namespace's
//!    contents, an owner's dependents) write through the `Cascade` trait, so they run every
//!    plugin too.
//! 5. **`encoding/`** turns stored objects into what `Accept` asks for: negotiation
//!    (`accept.rs`; `transform.rs` for kube-apiserver's `406` and the shape of every verb's
//!    answer), protobuf, CBOR (`cbor/`: the encoding mode, and the decoding mode's checks in three
//!    steps, `wellformed.rs`, `interpret.rs` for the body's kind, then `decode.rs`), metadata-only objects, tables. JSON answers and watch events are
//!    written with the key order of `key_order.rs` (Go's struct order of built-in types, from
//!    a generated table).
//! 6. **`storage/`** holds the state (served types and objects behind one lock), the store with
//!    its history and resourceVersions, lists, watches, list options and field labels (the
//!    values an object shows to field selectors in `selector/field_values.rs`);
//!    [`registry`] holds the served resource types.
//! 7. **`builtin/`** describes what kube-apiserver serves built in, one named description per
//!    resource in a file per API group (`builtin/core.rs`'s `POD`, `builtin/apps.rs`'s
//!    `DEPLOYMENT`, ...): scope, short names, categories, verbs, whether it is stored or
//!    computed, its subresources and their handlers, and its strategy's generation rule. The
//!    registry, discovery, routing and writes all read it; `builtin/priority.rs` orders the
//!    groups in discovery.
//!
//! To add:
//!
//! - **a built-in type:** a description in its group's file of `builtin/`, listed in
//!   `builtin::ALL` (its group version's priority in `builtin/priority.rs` if the group is
//!   new); its field selectors in `selector/field_values.rs`, its table columns in
//!   `encoding/table/` (a file per area); protobuf and field validation come from the
//!   generated tables;
//! - **a subresource:** a `Subresource` with a new `Handler` in `builtin/subresource.rs`,
//!   listed by the descriptions of the resources that serve it (discovery and routing read it
//!   there), and the handler's branch in `http/subresource/mod.rs`, writing through a
//!   `WriteSession` method under `write/`;
//! - **an admission rule, a default or a strategy:** a `Plugin` in a file of `admission/`,
//!   added to `admission::plugins()` where it must run; tests beside it on a `State` (see
//!   `write/tests.rs`) and over HTTP in `tests/`.
//!
//! # The binary
//!
//! With the `cli` feature, the `informer-testserver` binary serves the same server on a port
//! (`--port`, default any free port), creates the objects of a `--seed` file, prints
//! `listening on http://127.0.0.1:PORT` as its first line and serves until Ctrl-C: `kubectl`
//! and programs in other languages can use it. `--nodes N` runs the simulated kubelet with N
//! nodes, `--node-allocatable RESOURCE=QUANTITY` sets what each can allocate, and
//! `--pod-log NAMESPACE/POD/CONTAINER=FILE` registers a container's log.

mod admission;
mod bootstrap;
mod builtin;
mod defaults;
mod encoding;
mod faults;
mod http;
mod key_order;
pub mod kubelet;
pub mod proxy;
pub mod registry;
pub mod seed;
pub mod selector;
mod server;
mod status;
mod storage;
pub mod wait;
mod write;

pub use faults::{Failure, Stall};
pub use proxy::ResetProxy;

pub use http::shared::{CLIENT_NAME_HEADER, RequestRecord};
pub use registry::{ResourceType, ScaleSubresource};
pub use seed::SeedError;
pub use server::{ServerError, TestServer, TestServerBuilder};
pub use status::ApiError;
