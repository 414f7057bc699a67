// The README's generated crates: the built-in informers, and `my_crds::informers` generated
// from the sample CRD crate with the default naming rules (build.rs).
pub use informer_runtime::SharedInformerFactory;

pub mod my_crds {
    pub mod informers {
        include!(concat!(env!("OUT_DIR"), "/informers.rs"));
    }
}
// statements
let gvr = kube::core::GroupVersionResource::gvr("example.com", "v1", "foos");
