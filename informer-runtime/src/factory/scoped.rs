//! The factory's scoped informers: default scopes, the scopes a factory narrows, and the
//! informer of each namespace of a scope.

use std::{any::TypeId, sync::Arc};

use super::{InformerKey, SharedInformerFactory, TypedResource};

use crate::informer;
use crate::{
    cache::namespace_indexers,
    informer::SharedIndexInformer,
    scope::{Scope, ScopedInformer},
    source::ListOptions,
    source::{ApiScope, KubeListerWatcher, TweakListOptions},
};

/// The description of an informer of `K`: its resource (`pods`, `pods (metadata)`), and for a
/// scoped one what restricts it: `namespace` (when it is not the factory's), selectors and
/// transform (`configmaps (namespace source, labels replicate=true)`).
pub(super) fn describe<K: TypedResource>(namespace: Option<&str>, scope: Option<&Scope<K>>) -> String {
    let mut parts = Vec::new();
    if K::metadata_api() {
        parts.push("metadata".to_owned());
    }
    if let Some(namespace) = namespace {
        parts.push(format!("namespace {namespace}"));
    }
    if let Some(scope) = scope {
        if !scope.selected_labels().selects_all() {
            parts.push(format!("labels {}", scope.selected_labels()));
        }
        if !scope.selected_fields().selects_all() {
            parts.push(format!("fields {}", scope.selected_fields()));
        }
        if scope.is_transformed() {
            parts.push("transformed".to_owned());
        }
    }
    let plural = K::plural(&());
    if parts.is_empty() {
        plural.into_owned()
    } else {
        format!("{plural} ({})", parts.join(", "))
    }
}

/// The factory's list tweak followed by a scope's selectors, joined to what the tweak set
/// (both must match).
pub(super) fn join_tweaks(
    factory: Option<TweakListOptions>,
    selectors: Option<(String, String)>,
) -> Option<TweakListOptions> {
    let Some((labels, fields)) =
        selectors.filter(|(labels, fields)| !labels.is_empty() || !fields.is_empty())
    else {
        return factory;
    };
    Some(Arc::new(move |options: &mut ListOptions| {
        if let Some(factory) = &factory {
            factory(options);
        }
        join_selector(&mut options.label_selector, &labels);
        join_selector(&mut options.field_selector, &fields);
    }))
}

pub(super) fn join_selector(selector: &mut Option<String>, more: &str) {
    if more.is_empty() {
        return;
    }
    *selector = Some(match selector.take().filter(|s| !s.is_empty()) {
        Some(existing) => format!("{existing},{more}"),
        None => more.to_owned(),
    });
}

impl SharedInformerFactory {
    /// The informer of `scope`: every namespace of the scope (or the factory's namespace when
    /// it has none) listed and watched with the scope's selectors, objects transformed by the
    /// scope's transform after the factory's (see the [`scope`](crate::scope) module).
    ///
    /// Informers are shared: a namespace of the scope whose informer the factory already holds
    /// with equal selectors and the same transform (from another scope, or from
    /// [`informer`](Self::informer) for a scope of every object) is not watched twice. New
    /// informers start with the next [`start`](Self::start).
    ///
    /// ```no_run
    /// # async fn example(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use informer_runtime::{SharedInformerFactory, scope::Scope};
    /// use k8s_openapi::api::core::v1::Pod;
    /// use informer_runtime::selector::parse_label_selector;
    ///
    /// let factory = SharedInformerFactory::new(client);
    /// let web = factory.informer_in(&Scope::<Pod>::all().namespace("prod")?.labels("app=web")?);
    /// factory.start();
    /// factory.wait_for_cache_sync().await;
    /// for pod in web.lister().by_namespace("prod").list(&parse_label_selector("app=web,tier=fe")?)? {
    ///     println!("{:?}", pod.metadata.name);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn informer_in<K: TypedResource>(&self, scope: &Scope<K>) -> ScopedInformer<K> {
        let scope = self
            .restrict(scope.clone())
            .within(self.watched_namespace::<K>().map(str::to_owned));
        let namespaces: Vec<Option<String>> = if scope.selected_namespaces().is_empty() {
            vec![None]
        } else {
            scope.selected_namespaces().iter().cloned().map(Some).collect()
        };
        let parts = namespaces
            .into_iter()
            .map(|namespace| {
                let informer = self.informer_of_scope(namespace.as_deref(), &scope);
                (namespace, informer)
            })
            .collect();
        ScopedInformer::new(K::plural(&()).into(), scope, parts)
    }

    /// The informer of `K` as the factory is configured to cache it: `K`'s default scope
    /// ([`Builder::scope`](super::Builder::scope)), or every `K` when the type has none, narrowed
    /// by the factory's list tweak and, on a sharded manager's factory, to the shard's objects.
    /// What [`Controller::new`](crate::controller::Controller::new), `owns` and `watches` read;
    /// the one accessor most code needs. Its [lister](ScopedInformer::lister) refuses
    /// questions outside the scope instead of answering them wrongly.
    ///
    /// The explicit forms: [`informer_in`](Self::informer_in) for a scope of your own, and
    /// [`unscoped_informer`](Self::unscoped_informer) for every object the factory watches, as
    /// one `SharedIndexInformer`.
    ///
    /// ```no_run
    /// # async fn example(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use informer_runtime::{Scope, SharedInformerFactory};
    /// use k8s_openapi::api::core::v1::Pod;
    ///
    /// let factory = SharedInformerFactory::builder(client)
    ///     .scope(Scope::<Pod>::all().labels("app=web")?)
    ///     .build();
    /// let pods = factory.informer::<Pod>(); // only the web pods are listed, watched and cached
    /// factory.start();
    /// factory.wait_for_cache_sync().await;
    /// let web = pods.lister().by_namespace("prod").get("web-0")?;
    /// # let _ = web;
    /// # Ok(())
    /// # }
    /// ```
    pub fn informer<K: TypedResource>(&self) -> ScopedInformer<K> {
        self.informer_in(&self.default_scope::<K>())
    }

    /// `K`'s default scope ([`Builder::scope`](super::Builder::scope), or [`Scope::all`] when it has none) narrowed by
    /// its resource's [labels](super::Builder::resource_labels).
    pub fn default_scope<K: TypedResource>(&self) -> Scope<K> {
        self.restrict(self.declared_scope::<K>().unwrap_or_default())
    }

    /// The scope given to [`Builder::scope`](super::Builder::scope) for `K`.
    pub(super) fn declared_scope<K: TypedResource>(&self) -> Option<Scope<K>> {
        self.inner
            .options
            .default_scopes
            .get(&TypeId::of::<K>())
            .and_then(|scope| scope.downcast_ref::<Scope<K>>())
            .cloned()
    }

    /// `scope` narrowed by the [labels](super::Builder::resource_labels) of `K`'s resource and the
    /// selectors the [list tweak](super::Builder::tweak_list_options) sets.
    pub(super) fn restrict<K: TypedResource>(&self, scope: Scope<K>) -> Scope<K> {
        let options = &self.inner.options;
        let scope = match &options.tweaked {
            Some(tweaked) => scope
                .and_labels(tweaked.labels.clone())
                .field_selector(&tweaked.fields),
            None => scope,
        };
        options
            .resource_labels
            .iter()
            .filter(|rule| rule.group == K::group(&()) && rule.plural == K::plural(&()))
            .fold(scope, |scope, rule| scope.and_labels(rule.parsed.clone()))
    }

    /// The label selectors given to [`Builder::resource_labels`](super::Builder::resource_labels) for the resource `plural` in
    /// `group`, as written.
    pub fn resource_labels(&self, group: &str, plural: &str) -> Vec<&str> {
        self.inner
            .options
            .resource_labels
            .iter()
            .filter(|rule| rule.group == group && rule.plural == plural)
            .map(|rule| rule.selector.as_str())
            .collect()
    }

    /// The factory's namespace if `K` is namespaced (cluster-scoped objects have none).
    pub(super) fn watched_namespace<K: TypedResource>(&self) -> Option<&str> {
        if <K::Scope as ApiScope>::NAMESPACED {
            self.namespace()
        } else {
            None
        }
    }

    /// The informer of `scope` in `namespace`, shared with any equal one.
    pub(super) fn informer_of_scope<K: TypedResource>(
        &self,
        namespace: Option<&str>,
        scope: &Scope<K>,
    ) -> SharedIndexInformer<K> {
        let key = if scope.selected_labels().selects_all()
            && scope.selected_fields().selects_all()
            && scope.transform_fn().is_none()
            && namespace == self.watched_namespace::<K>()
        {
            // the unscoped informer, whoever made it
            InformerKey::unscoped::<K>()
        } else {
            InformerKey::scoped::<K>(namespace, scope)
        };
        if let Some(existing) = self.existing::<K>(&key) {
            return existing;
        }
        let informer = self.new_informer::<K>(namespace, Some(scope));
        self.insert(key, informer).unwrap_or_else(|existing| existing)
    }

    /// A new informer of `K` in `namespace` (`None`: every namespace), restricted to `scope`.
    pub(super) fn new_informer<K: TypedResource>(
        &self,
        namespace: Option<&str>,
        scope: Option<&Scope<K>>,
    ) -> SharedIndexInformer<K> {
        let description = describe::<K>(namespace.filter(|ns| Some(*ns) != self.namespace()), scope);
        let transform = scope.and_then(|scope| scope.transform_fn().cloned());
        let selectors = scope.map(|scope| {
            (
                scope.selected_labels().to_string(),
                scope.selected_fields().to_string(),
            )
        });
        self.create(
            |context| {
                let api = <K::Scope as ApiScope>::api::<K>(context.client().clone(), namespace);
                let tweak = join_tweaks(context.tweak_list_options(), selectors);
                let lister_watcher = KubeListerWatcher::new(api)
                    .shared_tweak_list_options(tweak)
                    .encoding(context.encoding())
                    .skip_fields(context.skip_fields().iter().cloned());
                SharedIndexInformer::new(
                    lister_watcher,
                    informer::Config {
                        resync_period: context.resync_period(),
                        indexers: namespace_indexers(),
                        description: Some(description),
                        ..informer::Config::default()
                    },
                )
            },
            transform,
        )
    }
}
