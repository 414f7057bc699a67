//! Where an informer's typed parts meet its erased core: the lister-watcher whose objects the
//! core receives, the cache the core writes, and the handlers and streams the core notifies.
//! Each is a small adapter compiled per object type; everything between them is compiled once
//! (see [`ErasedObject`]).

use std::{marker::PhantomData, sync::Arc};

use futures::{StreamExt, future::BoxFuture};
use kube::{
    Resource,
    core::{ObjectList, WatchEvent},
};

use crate::{
    cache::{DeletedFinalStateUnknown, MaybeTombstone, Store, Writer, delta_fifo::KnownObjects},
    informer::{
        erased_object::ErasedObject,
        handler::{Notification, ResourceEventHandler},
    },
    key::ObjectKey,
    source::{self, ListOptions, ListerWatcher, WatchStream},
};

/// A typed lister-watcher, giving the core erased objects.
pub(crate) struct ErasingListerWatcher<K>(pub(crate) Arc<dyn ListerWatcher<K>>);

impl<K: Resource + Clone + Send + Sync + 'static> ListerWatcher<ErasedObject> for ErasingListerWatcher<K> {
    fn list(&self, options: &ListOptions) -> BoxFuture<'_, source::Result<ObjectList<ErasedObject>>> {
        let list = self.0.list(options);
        Box::pin(async move {
            let list = list.await?;
            Ok(ObjectList {
                types: list.types,
                metadata: list.metadata,
                items: list.items.into_iter().map(ErasedObject::new).collect(),
            })
        })
    }

    fn watch(&self, options: &ListOptions) -> BoxFuture<'_, source::Result<WatchStream<ErasedObject>>> {
        let watch = self.0.watch(options);
        Box::pin(async move {
            let events = watch.await?;
            Ok(events.map(|event| event.map(erase_event)).boxed())
        })
    }
}

fn erase_event<K: Resource + Clone + Send + Sync + 'static>(
    event: WatchEvent<K>,
) -> WatchEvent<ErasedObject> {
    match event {
        WatchEvent::Added(object) => WatchEvent::Added(ErasedObject::new(object)),
        WatchEvent::Modified(object) => WatchEvent::Modified(ErasedObject::new(object)),
        WatchEvent::Deleted(object) => WatchEvent::Deleted(ErasedObject::new(object)),
        WatchEvent::Bookmark(bookmark) => WatchEvent::Bookmark(bookmark),
        WatchEvent::Error(status) => WatchEvent::Error(status),
    }
}

/// The typed cache, as the core writes and reads it.
pub(crate) trait ErasedCache: Send + Sync {
    /// Stores `object` under `key`; the object it replaced.
    fn insert(&self, key: ObjectKey, object: &ErasedObject) -> Option<ErasedObject>;
    /// Removes the object under `key`.
    fn delete_by_key(&self, key: &ObjectKey) -> Option<ErasedObject>;
    /// Every cached object.
    fn objects(&self) -> Vec<Arc<ErasedObject>>;
    /// Every key.
    fn keys(&self) -> Vec<ObjectKey>;
    /// The object under `key`.
    fn object(&self, key: &ObjectKey) -> Option<Arc<ErasedObject>>;
    /// How many objects it holds.
    fn len(&self) -> usize;
}

impl<K: Resource + Clone + Send + Sync + 'static> ErasedCache for Writer<K> {
    fn insert(&self, key: ObjectKey, object: &ErasedObject) -> Option<ErasedObject> {
        let object = typed_or_report::<K>(object)?;
        Writer::insert(self, key, object).map(ErasedObject::from_arc)
    }

    fn delete_by_key(&self, key: &ObjectKey) -> Option<ErasedObject> {
        Writer::delete_by_key(self, key).map(ErasedObject::from_arc)
    }

    fn objects(&self) -> Vec<Arc<ErasedObject>> {
        self.list()
            .into_iter()
            .map(|object| Arc::new(ErasedObject::from_arc(object)))
            .collect()
    }

    fn keys(&self) -> Vec<ObjectKey> {
        self.list_keys()
    }

    fn object(&self, key: &ObjectKey) -> Option<Arc<ErasedObject>> {
        self.get_by_key(key)
            .map(|object| Arc::new(ErasedObject::from_arc(object)))
    }

    fn len(&self) -> usize {
        Store::len(self)
    }
}

/// The cache as the core's queue knows it (for deletions it missed and resyncs).
pub(crate) struct KnownInCache(pub(crate) Arc<dyn ErasedCache>);

impl KnownObjects<ErasedObject> for KnownInCache {
    fn known_keys(&self) -> Vec<ObjectKey> {
        self.0.keys()
    }

    fn known_object(&self, key: &ObjectKey) -> Option<Arc<ErasedObject>> {
        self.0.object(key)
    }
}

/// A typed handler, notified by the core.
pub(crate) struct TypedHandler<K, H> {
    handler: H,
    _type: PhantomData<fn(K)>,
}

impl<K, H> TypedHandler<K, H> {
    pub(crate) fn new(handler: H) -> Self {
        Self {
            handler,
            _type: PhantomData,
        }
    }
}

impl<K: Send + Sync + 'static, H: ResourceEventHandler<K>> ResourceEventHandler<ErasedObject>
    for TypedHandler<K, H>
{
    fn on_add(&self, object: Arc<ErasedObject>, is_in_initial_list: bool) {
        if let Some(object) = into_typed(object) {
            self.handler.on_add(object, is_in_initial_list);
        }
    }

    fn on_update(&self, old: Arc<ErasedObject>, new: Arc<ErasedObject>) {
        if let (Some(old), Some(new)) = (into_typed(old), into_typed(new)) {
            self.handler.on_update(old, new);
        }
    }

    fn on_delete(&self, object: MaybeTombstone<ErasedObject>) {
        if let Some(object) = typed_tombstone(object) {
            self.handler.on_delete(object);
        }
    }
}

/// A notification of the core as its informer's type gives it.
pub(crate) fn typed_notification<K: Send + Sync + 'static>(
    notification: Notification<ErasedObject>,
) -> Option<Notification<K>> {
    Some(match notification {
        Notification::Add {
            object,
            is_in_initial_list,
        } => Notification::Add {
            object: into_typed(object)?,
            is_in_initial_list,
        },
        Notification::Update { old, new } => Notification::Update {
            old: into_typed(old)?,
            new: into_typed(new)?,
        },
        Notification::Delete(object) => Notification::Delete(typed_tombstone(object)?),
    })
}

fn typed_tombstone<K: Send + Sync + 'static>(
    object: MaybeTombstone<ErasedObject>,
) -> Option<MaybeTombstone<K>> {
    Some(match object {
        MaybeTombstone::Object(object) => MaybeTombstone::Object(into_typed(object)?),
        MaybeTombstone::Tombstone(DeletedFinalStateUnknown { key, obj }) => {
            let obj = match obj {
                Some(object) => Some(into_typed(object)?),
                None => None,
            };
            MaybeTombstone::Tombstone(DeletedFinalStateUnknown { key, obj })
        }
    })
}

/// The object of a notification as a `K`, in place of the notification's pointer to it when
/// this handler is its last reader (a handler then holds the only reference the notification
/// gave it, as with a typed core).
fn into_typed<K: Send + Sync + 'static>(object: Arc<ErasedObject>) -> Option<Arc<K>> {
    if !object.is::<K>() {
        report_other_type::<K>(&object);
        return None;
    }
    Arc::try_unwrap(object)
        .unwrap_or_else(|shared| (*shared).clone())
        .into_typed()
}

/// `object` as a `K`. Every object of an informer's core is of the informer's type (its
/// lister-watcher is the only source): another one is reported and left out, never a panic.
fn typed_or_report<K: Send + Sync + 'static>(object: &ErasedObject) -> Option<Arc<K>> {
    let typed = object.downcast::<K>();
    if typed.is_none() {
        report_other_type::<K>(object);
    }
    typed
}

/// Logs an object of another type than the informer's `K` (see [`typed_or_report`]).
fn report_other_type<K>(object: &ErasedObject) {
    tracing::error!(
        expected = std::any::type_name::<K>(),
        ?object,
        "an informer's core holds an object of another type; it is left out"
    );
}
