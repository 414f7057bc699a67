use informer_runtime::Informer;
use kube::api::ObjectMeta;

#[derive(Informer)]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn main() {}
