//! Every example runs against the embedded API server and exits successfully, in bounded time.
//!
//! `cargo test` builds the examples before it runs tests; they sit in `target/<profile>/examples`,
//! next to this test's own directory.

use std::{
    path::PathBuf,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

/// How long one example may run.
const DEADLINE: Duration = Duration::from_secs(120);

fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows where it is");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps/<test>");
    profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Runs an example and returns its standard output.
fn run(name: &str) -> String {
    let path = example(name);
    assert!(
        path.exists(),
        "{} is not built (cargo test builds examples)",
        path.display()
    );
    let mut child = Command::new(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("failed to start {}: {e}", path.display()));
    let started = Instant::now();
    loop {
        match child.try_wait().expect("waitable") {
            Some(_) => break,
            None if started.elapsed() > DEADLINE => {
                let _ = child.kill();
                panic!("{name} did not exit within {DEADLINE:?}");
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    let output = child.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{name} failed with {}:\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn assert_lines(name: &str, stdout: &str, expected: &[&str]) {
    for line in expected {
        assert!(stdout.contains(line), "{name}: missing {line:?} in:\n{stdout}");
    }
}

#[test]
fn quickstart_runs() {
    let out = run("quickstart");
    assert_lines(
        "quickstart",
        &out,
        &[
            "synced pods",
            "synced deployments",
            "synced namespaces",
            "synced foos",
            "  pod added   ",
            "  foo resized ",
            "pods with app=web in shop: 7",
            "informer foos         lists 1 watches 1 cached 6",
            "pods         read in protobuf",
            "deployments  read in protobuf",
            "foos         read in JSON",
        ],
    );
}

#[test]
fn pod_informer_runs() {
    let out = run("pod_informer");
    assert_lines(
        "pod_informer",
        &out,
        &[
            "1/1 informers synced",
            "pods: 7, app=web: 5",
            "added    shop/job-9 (live)",
        ],
    );
}

#[test]
fn sample_controller_runs() {
    let out = run("sample_controller");
    assert_lines(
        "sample_controller",
        &out,
        &[
            "deployment example-foo created with 2 replicas: true",
            "deployment example-foo scaled to 3 replicas: true",
            "deployment example-foo recreated after deletion: true",
        ],
    );
}

#[test]
fn configmap_rollout_runs() {
    let out = run("configmap_rollout");
    assert_lines(
        "configmap_rollout",
        &out,
        &[
            "web rolled out with the first config: true",
            "web rolled out again after the config changed: true",
        ],
    );
}

#[test]
fn ha_controller_runs() {
    let out = run("ha_controller");
    assert_lines(
        "ha_controller",
        &out,
        &[
            "leads first: term 0 of r",
            "all 5 config maps stamped on its first pass: true",
            "all 6 config maps stamped on its first pass: true",
        ],
    );
    let took_over: Vec<&str> = out.lines().filter(|l| l.contains(" took over after ")).collect();
    assert_eq!(took_over.len(), 2, "two failovers in:\n{out}");
    assert!(
        took_over.iter().all(|l| l.ends_with("first pass: true")),
        "every new leader stamped everything on its first pass:\n{out}"
    );
    // The released lease is taken at the next attempt, well before a lease duration.
    let released = took_over[1];
    let seconds: f64 = released
        .split(" took over after ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a failover time in {released:?}"));
    assert!(seconds < 0.9, "handover after a release took {seconds} s:\n{out}");
}

#[test]
fn sharded_controller_runs() {
    let out = run("sharded_controller");
    assert_lines(
        "sharded_controller",
        &out,
        &[
            "assigned 100 config maps to 3 shards in ",
            "default/unrelated (no settings label) and elsewhere/settings-elsewhere (namespace not selected) stay unassigned",
            "shard-3 joins: the sharder drains what moves to it",
            "killing shard-1 (no release",
        ],
    );
    // after the join, shard-3 holds what moved to it; after the kill, shard-1 holds nothing
    let moved: Vec<&str> = out.lines().filter(|l| l.contains(" moved (")).collect();
    assert_eq!(moved.len(), 2, "a join and a kill:\n{out}");
    assert!(
        moved[0].contains("-> shard-3") && !moved[0].starts_with("  0 moved"),
        "the join moved objects to shard-3:\n{out}"
    );
    assert!(
        moved[1].contains("shard-1 ->") && !moved[1].contains("-> shard-1"),
        "the kill moved shard-1's objects away:\n{out}"
    );
}

#[test]
fn derive_informer_runs() {
    let out = run("derive_informer");
    assert_lines(
        "derive_informer",
        &out,
        &[
            "caches synced: 2/2 informers synced",
            "foo deleted: shop/small",
            "shop/medium size: Some(5)",
        ],
    );
}

#[test]
fn informer_gen_build_rs_runs() {
    let out = run("informer_gen_build_rs");
    assert_lines(
        "informer_gen_build_rs",
        &out,
        &[
            "foo shop/small: Some(1)",
            "bar blue: Some(\"blue\")",
            "objects",
            "no informer is generated",
            "foo medium (size 4) added",
        ],
    );
}
