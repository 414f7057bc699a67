//! Typed informers, listers and a factory for the `sample-crds` crate, generated at build time
//! by `informer_gen::Config` in `build.rs`.

include!(concat!(env!("OUT_DIR"), "/sample_informers.rs"));
