use informer_runtime::Informer;
use kube::api::ObjectMeta;

#[derive(Informer)]
#[informer(group = "example.com", version = "v1")]
pub struct Foo<T> {
    pub metadata: ObjectMeta,
    pub spec: T,
}

fn main() {}
