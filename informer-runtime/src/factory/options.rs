//! What a factory's [`Builder`](super::Builder) sets, read by every informer it makes.

use std::{
    any::{Any, TypeId},
    collections::HashMap,
    sync::Arc,
    time::Duration,
};

use kube::core::ObjectMeta;

use crate::{
    reflector,
    source::ListOptions,
    source::{Encoding, FieldPath, TweakListOptions},
};

pub(super) type MetadataTransform = Arc<dyn Fn(&mut ObjectMeta) + Send + Sync>;

pub(super) struct Options {
    pub(super) namespace: Option<String>,
    pub(super) tweak_list_options: Option<TweakListOptions>,
    pub(super) default_resync: Duration,
    pub(super) custom_resync: HashMap<TypeId, Duration>,
    pub(super) metadata_transform: Option<MetadataTransform>,
    pub(super) transforms: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    /// The default scope of each type given one (a `Scope<K>`).
    pub(super) default_scopes: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    /// Label selectors every informer of a resource carries, by group and plural.
    pub(super) resource_labels: Vec<ResourceLabels>,
    /// The label and field selectors `tweak_list_options` sets, read once when the factory is
    /// built: every informer holds only what they select, so every scope includes them.
    pub(super) tweaked: Option<TweakedSelectors>,
    pub(super) compact_objects: bool,
    pub(super) watch_error_handler: Option<reflector::WatchErrorHandler>,
    /// Where the informers run.
    pub(super) runtime: InformerRuntime,
    /// What the informers ask the API server for.
    pub(super) encoding: Encoding,
    /// Fields every informer skips as it reads objects.
    pub(super) skip_fields: Arc<[FieldPath]>,
}

/// What a factory's list tweak selects ([`Builder::tweak_list_options`](super::Builder::tweak_list_options)).
#[derive(Debug, Clone)]
pub(super) struct TweakedSelectors {
    pub(super) labels: kube::core::Selector,
    pub(super) fields: crate::selector::FieldSelector,
}

impl TweakedSelectors {
    /// The selectors `tweak` sets on default list options; `None` if it sets none, or if they
    /// do not parse or the tweak panics (logged: the cache then holds what the tweak lets in,
    /// while scopes do not know it).
    pub(super) fn read(tweak: &TweakListOptions) -> Option<Self> {
        let options = crate::user_panic::catch(|| {
            let mut options = ListOptions::default();
            tweak(&mut options);
            options
        });
        let options = match options {
            Ok(options) => options,
            Err(panic) => {
                tracing::warn!(%panic, "the factory's list tweak panicked on default list options; scopes do not include its selectors");
                return None;
            }
        };
        let labels = options.label_selector.unwrap_or_default();
        let fields = options.field_selector.unwrap_or_default();
        if labels.is_empty() && fields.is_empty() {
            return None;
        }
        let parsed = crate::selector::parse_label_selector(&labels)
            .and_then(|labels| Ok((labels, crate::selector::parse_field_selector(&fields)?)));
        match parsed {
            Ok((labels, fields)) => Some(Self { labels, fields }),
            Err(error) => {
                tracing::warn!(%error, %labels, %fields, "the factory's list tweak sets selectors that do not parse; scopes do not include them");
                None
            }
        }
    }
}

/// A label selector every informer of one resource carries ([`Builder::resource_labels`](super::Builder::resource_labels)).
pub(super) struct ResourceLabels {
    pub(super) group: String,
    pub(super) plural: String,
    pub(super) selector: String,
    pub(super) parsed: kube::core::Selector,
}

/// Where a factory's informers run ([`Builder::runtime`](super::Builder::runtime)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InformerRuntime {
    /// A thread of the factory's own (a current-thread runtime), started by the first
    /// [`start`](super::SharedInformerFactory::start): half the CPU per event of a multi-thread
    /// runtime (see [`SharedInformerFactory`](super::SharedInformerFactory)).
    #[default]
    OwnThread,
    /// The runtime that calls [`start`](super::SharedInformerFactory::start), each informer in a
    /// task of its own: for tests under tokio's paused clock (the informers' timers then follow
    /// it), or to keep every task on one runtime. At high event rates this costs about twice
    /// the CPU per event on a multi-thread runtime.
    Caller,
}
