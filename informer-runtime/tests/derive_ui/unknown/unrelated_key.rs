use informer_runtime::Informer;
use kube::api::ObjectMeta;

#[derive(Informer)]
#[informer(group = "example.com", version = "v1", colour = "blue")]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn main() {}
