//! A plain cache kept by a reflector: each change is applied to the cache at once, and a
//! relist replaces the cache page by page.

use std::sync::Arc;

use kube::Resource;

use super::Writer;
use crate::{
    cache::{ReflectorStore, Relist},
    key::ObjectKey,
    source::BoxError,
};

impl<K: Resource + Send + Sync> ReflectorStore<K> for Writer<K> {
    fn add(&self, obj: Arc<K>) {
        Writer::add(self, obj);
    }

    fn update(&self, obj: Arc<K>) {
        Writer::update(self, obj);
    }

    fn delete(&self, obj: Arc<K>) {
        Writer::delete(self, &obj);
    }

    fn begin_relist(&self) -> Box<dyn Relist<K> + '_>
    where
        K: 'static,
    {
        Box::new(WriterRelist {
            writer: self,
            listed: hashbrown::HashSet::new(),
        })
    }

    fn replace(&self, objects: Vec<Arc<K>>, _resource_version: &str) {
        Writer::replace(self, objects);
    }

    fn resync(&self) -> Result<(), BoxError> {
        Ok(())
    }
}

/// A relist of a plain cache: each page's objects are stored at once (indexes updated one by
/// one), and the finish deletes the keys no page listed.
struct WriterRelist<'a, K> {
    writer: &'a Writer<K>,
    listed: hashbrown::HashSet<ObjectKey>,
}

impl<K: Resource + Send + Sync> Relist<K> for WriterRelist<'_, K> {
    fn page(&mut self, objects: Vec<Arc<K>>) {
        for obj in objects {
            let key = ObjectKey::of(obj.as_ref());
            self.listed.insert(key.clone());
            self.writer.insert(key, obj);
        }
    }

    fn delete(&mut self, object: Arc<K>) {
        let key = ObjectKey::of(object.as_ref());
        self.listed.remove(&key);
        self.writer.delete_by_key(&key);
    }

    fn start_over(&mut self) {
        self.listed.clear();
    }

    fn finish(self: Box<Self>, _resource_version: &str) {
        for key in self.writer.list_keys() {
            if !self.listed.contains(&key) {
                self.writer.delete_by_key(&key);
            }
        }
    }
}
