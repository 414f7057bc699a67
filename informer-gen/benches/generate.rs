//! How long `Config::generate` takes for 500 resources across groups and versions.
//!
//! `cargo bench -p informer-gen` runs it fully; `cargo bench -p informer-gen -- --quick` runs
//! once, for CI.

use std::{fmt::Write as _, time::Instant};

use informer_gen::{Config, Layout};

/// 500 custom resources: 25 groups × 4 versions × 5 kinds, half of them namespaced.
fn source(resources: usize) -> String {
    let mut out = String::from("//! Synthetic resources.\n");
    for i in 0..resources {
        let group = i / 20;
        let version = (i / 5) % 4;
        let namespaced = if i % 2 == 0 { ", namespaced" } else { "" };
        let _ = writeln!(
            out,
            "#[derive(CustomResource)]\n#[kube(group = \"group{group}.example.com\", version = \"v{version}\", kind = \"Kind{i}\"{namespaced})]\npub struct Kind{i}Spec {{}}"
        );
    }
    out
}

fn time(runs: usize, config: &Config) -> f64 {
    let start = Instant::now();
    for _ in 0..runs {
        let files = config.generate().expect("generated");
        assert!(!files.is_empty());
    }
    start.elapsed().as_secs_f64() * 1000.0 / runs as f64
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 1 } else { 5 };
    let text = source(500);
    let single = Config::new()
        .input_source("synthetic.rs", text.clone())
        .input_crate_name("synthetic")
        .out_dir("unused");
    let tree = single.clone().layout(Layout::Tree);
    let small = Config::new()
        .input_source("synthetic.rs", source(50))
        .input_crate_name("synthetic")
        .out_dir("unused");
    let single_ms = time(runs, &single);
    let tree_ms = time(runs, &tree);
    let small_ms = time(runs, &small);
    println!("generate 500 resources, single file: {single_ms:.1} ms (mean of {runs})");
    println!("generate 500 resources, tree:        {tree_ms:.1} ms (mean of {runs})");
    println!("generate 50 resources, single file:  {small_ms:.1} ms (mean of {runs})");
    println!(
        "500/50 resources ratio: {:.1}x",
        single_ms / small_ms.max(f64::EPSILON)
    );
}
