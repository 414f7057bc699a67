//! Informers, listers and a factory generated from the `sample-crds` fixture by the build
//! script (`informer_gen::Config`, single-file layout).

include!(concat!(env!("OUT_DIR"), "/sample_informers.rs"));
