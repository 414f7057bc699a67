use informer_runtime::Informer;
use kube::api::ObjectMeta;

#[derive(Informer)]
#[informer(group = 1, version = "v1")]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn main() {}
