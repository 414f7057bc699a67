use informer_runtime::Informer;

#[derive(Informer)]
#[informer(group = "example.com", version = "v1")]
pub union Foo {
    a: u32,
}

fn main() {}
