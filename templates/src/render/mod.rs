//! One render function per kind of generated item, each returning tokens.
//!
//! Every generated function is `#[inline]`. A generated function is not generic, but it calls
//! the runtime's generic informer code for its resource's type (`unscoped_informer::<K>()`,
//! `Lister<K>`, the reflector and decoder of `K` behind them); without `#[inline]` the crate
//! that holds the generated code would compile that code for every resource, used or not. An
//! `#[inline]` function is compiled only in the crates that call it (at every optimization
//! level), so a crate of generated informers compiles little code itself and each user
//! compiles the informers it uses, as `factory.unscoped_informer::<K>()` would.

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
