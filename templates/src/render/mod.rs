//! One render function per kind of generated item, each returning tokens.

pub mod factory;
pub mod for_resource;
pub mod group;
pub mod header;
pub mod informer;
pub mod lister;
pub mod resource;
pub mod version;

#[cfg(test)]
mod snapshot_tests;
