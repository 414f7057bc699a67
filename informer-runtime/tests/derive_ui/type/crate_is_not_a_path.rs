use informer_runtime::Informer;
use kube::api::ObjectMeta;

#[derive(Informer)]
#[informer(group = "example.com", version = "v1", crate = "not a path")]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn main() {}
