//! [`Builder`]: a factory's options, set before it is built.

use std::{any::TypeId, sync::Arc, time::Duration};

use kube::{Client, core::ObjectMeta};

use super::{
    TypedResource,
    options::{InformerRuntime, Options, ResourceLabels},
};

use crate::{
    cache::delta_fifo::Transform,
    factory::thread::InformerThread,
    reflector,
    scope::Scope,
    source::ListOptions,
    source::{Encoding, FieldPath},
};

/// Builds a [`SharedInformerFactory`](super::SharedInformerFactory) (client-go's `SharedInformerOption`s).
pub struct Builder {
    pub(super) client: Client,
    pub(super) options: Options,
    pub(super) thread: Option<InformerThread>,
}

impl Builder {
    /// Watch only `namespace` (default: all namespaces).
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.options.namespace = Some(namespace.into());
        self
    }

    /// Change every list and watch request, for example to add a label selector.
    #[must_use]
    pub fn tweak_list_options(mut self, tweak: impl Fn(&mut ListOptions) + Send + Sync + 'static) -> Self {
        self.options.tweak_list_options = Some(Arc::new(tweak));
        self
    }

    /// The default resync period of the informers (zero: none).
    #[must_use]
    pub fn resync(mut self, period: Duration) -> Self {
        self.options.default_resync = period;
        self
    }

    /// The resync period of `K`'s informer.
    #[must_use]
    pub fn resync_for<K: 'static>(mut self, period: Duration) -> Self {
        self.options.custom_resync.insert(TypeId::of::<K>(), period);
        self
    }

    /// Applies `transform` to the metadata of every object of every informer before it is
    /// cached, for example to drop `managedFields`.
    #[must_use]
    pub fn transform_metadata(mut self, transform: impl Fn(&mut ObjectMeta) + Send + Sync + 'static) -> Self {
        self.options.metadata_transform = Some(Arc::new(transform));
        self
    }

    /// Applies `transform` to every object of `K`'s informer before it is cached (after
    /// [`transform_metadata`](Self::transform_metadata)).
    #[must_use]
    pub fn transform<K: Send + Sync + 'static>(
        mut self,
        transform: impl Fn(&mut K) + Send + Sync + 'static,
    ) -> Self {
        let transform: Transform<K> = Arc::new(transform);
        self.options
            .transforms
            .insert(TypeId::of::<K>(), Arc::new(transform));
        self
    }

    /// The default scope of `K` (controller-runtime's `ByObject`): the namespaces, selectors and
    /// transform of the cache of `K` that [`informer`](super::SharedInformerFactory::informer)
    /// returns and that controllers read for `K` ([`Controller::new`](crate::controller::Controller::new),
    /// `owns::<K>()`, `watches::<K>()`). [`unscoped_informer::<K>()`](super::SharedInformerFactory::unscoped_informer)
    /// still means every `K` (see the [`scope`](crate::scope) module). The last call for a type
    /// wins.
    ///
    /// ```no_run
    /// # fn example(client: kube::Client) -> Result<(), informer_runtime::scope::Error> {
    /// use informer_runtime::{SharedInformerFactory, scope::Scope};
    /// use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    ///
    /// let factory = SharedInformerFactory::builder(client)
    ///     .scope(Scope::<ConfigMap>::all().namespace("source")?.labels("replicate=true")?)
    ///     .scope(Scope::<Secret>::all().labels("app.kubernetes.io/managed-by=replicator")?)
    ///     .build();
    /// let config_maps = factory.informer::<ConfigMap>();
    /// # let _ = config_maps;
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn scope<K: TypedResource>(mut self, scope: Scope<K>) -> Self {
        self.options
            .default_scopes
            .insert(TypeId::of::<K>(), Arc::new(scope));
        self
    }

    /// Restricts the factory to the objects of the resource `plural` in API group `group`
    /// (empty for the core group) that the label `selector` selects, whatever the Rust type (a
    /// typed informer and its metadata-only one alike), as controller-runtime's cache
    /// `ByObject` label selector does: every informer of the resource the factory hands out
    /// lists and watches with the selector. [`informer`](super::SharedInformerFactory::informer),
    /// [`metadata_informer`](super::SharedInformerFactory::metadata_informer), generated accessors
    /// and `for_resource` return the informer of the selected objects; scopes given to
    /// [`informer_in`](super::SharedInformerFactory::informer_in) (and controllers'
    /// `Controller::new_in`, `Owns::scope`, `Watches::scope`) are narrowed by it, and so is
    /// [`default_scope`](super::SharedInformerFactory::default_scope).
    /// [`informer_for`](super::SharedInformerFactory::informer_for), whose constructor could list
    /// anything, refuses the resource. A shard restricts its manager's factory this way to the
    /// objects assigned to it (see
    /// [`sharding::Shard::restrict_factory`](crate::sharding::Shard::restrict_factory)).
    /// Called again for the same resource, both selectors apply.
    ///
    /// ```no_run
    /// # fn example(client: kube::Client) -> Result<(), informer_runtime::scope::Error> {
    /// use informer_runtime::factory::SharedInformerFactory;
    /// use k8s_openapi::api::apps::v1::Deployment;
    ///
    /// let factory = SharedInformerFactory::builder(client)
    ///     .resource_labels("apps", "deployments", "team=payments")?
    ///     .build();
    /// assert_eq!(factory.default_scope::<Deployment>().selected_labels().to_string(), "team=payments");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`scope::Error::Selector`](crate::scope::Error::Selector) if `selector` does not parse.
    pub fn resource_labels(
        mut self,
        group: &str,
        plural: &str,
        selector: &str,
    ) -> Result<Self, crate::scope::Error> {
        let parsed = crate::selector::parse_label_selector(selector)?;
        self.options.resource_labels.push(ResourceLabels {
            group: group.to_string(),
            plural: plural.to_string(),
            selector: selector.to_string(),
            parsed,
        });
        Ok(self)
    }

    /// Re-allocates every object once before it is cached (after the transforms), so that its
    /// lists and maps hold exactly their elements, for a deep copy of each object (about a
    /// third more CPU per event on top of decoding it). Objects decoded by
    /// [`KubeListerWatcher`](crate::source::KubeListerWatcher) (every informer of a factory) already have every list at its
    /// exact size: compact them only when a transform leaves lists with room to spare (it
    /// removed elements) or when another lister-watcher decodes them. The copy is made before
    /// the object is shared, so nothing is copied twice.
    ///
    /// ```no_run
    /// # fn example(client: kube::Client) {
    /// use informer_runtime::factory::SharedInformerFactory;
    ///
    /// let factory = SharedInformerFactory::builder(client)
    ///     .transform_metadata(|meta| meta.managed_fields = None)
    ///     .compact_objects(true)
    ///     .build();
    /// # let _ = factory;
    /// # }
    /// ```
    #[must_use]
    pub fn compact_objects(mut self, compact: bool) -> Self {
        self.options.compact_objects = compact;
        self
    }

    /// What the factory's informers ask the API server for: [`Encoding::Protobuf`] (the
    /// default: protobuf for built-in types, as client-go's controllers read them, JSON for
    /// custom resources), [`Encoding::Cbor`] (protobuf for built-in types, CBOR for custom
    /// resources and metadata-only informers) or [`Encoding::Json`] (JSON only; see
    /// [`Encoding`] for what each costs). Informers made
    /// by [`informer_for`](super::SharedInformerFactory::informer_for) build their own lister-watcher:
    /// pass it [`InformerContext::encoding`](super::InformerContext::encoding).
    ///
    /// ```no_run
    /// # fn example(client: kube::Client) {
    /// use informer_runtime::{factory::SharedInformerFactory, source::Encoding};
    ///
    /// let factory = SharedInformerFactory::builder(client).encoding(Encoding::Json).build();
    /// # let _ = factory;
    /// # }
    /// ```
    #[must_use]
    pub fn encoding(mut self, encoding: Encoding) -> Self {
        self.options.encoding = encoding;
        self
    }

    /// Fields every informer of the factory skips as it reads objects, without parsing or
    /// allocating them (see [`FieldPath`] and
    /// [`KubeListerWatcher::skip_fields`](crate::source::KubeListerWatcher::skip_fields)): cheaper than a transform that drops them, since
    /// they are never decoded. Where objects are read in protobuf (built-in types and
    /// metadata-only informers, by default) and in JSON (parsed, never built). A path applies
    /// to every type that has the field it names, and skips nothing in the others (over
    /// protobuf a warning names the path and the type). Informers made by
    /// [`informer_for`](super::SharedInformerFactory::informer_for) build their own lister-watcher:
    /// pass it [`InformerContext::skip_fields`](super::InformerContext::skip_fields).
    ///
    /// ```no_run
    /// # fn example(client: kube::Client) {
    /// use informer_runtime::{factory::SharedInformerFactory, source::FieldPath};
    ///
    /// let factory = SharedInformerFactory::builder(client)
    ///     .skip_fields([FieldPath::managed_fields(), FieldPath::last_applied_configuration()])
    ///     .build();
    /// # let _ = factory;
    /// # }
    /// ```
    #[must_use]
    pub fn skip_fields(mut self, paths: impl IntoIterator<Item = FieldPath>) -> Self {
        self.options.skip_fields = paths.into_iter().collect();
        self
    }

    /// Reports the errors every informer recovers from, with the informer's description.
    #[must_use]
    pub fn watch_error_handler(
        mut self,
        handler: impl Fn(&str, &reflector::Error) + Send + Sync + 'static,
    ) -> Self {
        self.options.watch_error_handler = Some(Arc::new(handler));
        self
    }

    /// Where the informers run: on a thread of the factory's own ([`InformerRuntime::OwnThread`],
    /// the default), or on the runtime that calls [`start`](super::SharedInformerFactory::start)
    /// ([`InformerRuntime::Caller`]). The client's connections are where the client was made
    /// either way: a builder from
    /// [`builder_on_own_thread`](super::SharedInformerFactory::builder_on_own_thread) keeps its
    /// client on the factory's thread, whatever runs the informers.
    #[must_use]
    pub fn runtime(mut self, runtime: InformerRuntime) -> Self {
        self.options.runtime = runtime;
        self
    }
}
