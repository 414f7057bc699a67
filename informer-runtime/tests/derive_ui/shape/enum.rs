use informer_runtime::Informer;

#[derive(Informer)]
#[informer(group = "example.com", version = "v1")]
pub enum Foo {
    A,
}

fn main() {}
