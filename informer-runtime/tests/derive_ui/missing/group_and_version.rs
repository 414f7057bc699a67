use informer_runtime::Informer;
use kube::api::ObjectMeta;

#[derive(Informer)]
#[informer(kind = "Foo", namespaced)]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn main() {}
