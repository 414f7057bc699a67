use informer_runtime::Informer;
use kube::api::ObjectMeta;

#[derive(Informer)]
#[informer(group = "Example.com", version = "1beta1", kind = "my-kind", plural = "my_foos")]
pub struct Foo {
    pub metadata: ObjectMeta,
}

fn main() {}
