//! Pruning by the filters: files that cannot declare a resource the filters keep are read but
//! not parsed, and what is generated is what parsing every file generates.

use std::{path::PathBuf, process::Command};

use informer_gen::{Config, Layout};

/// One set of filters over `tests/fixtures/groups`, and the resources it keeps.
#[derive(Debug)]
struct Case {
    include: &'static [&'static str],
    exclude: &'static [&'static str],
    include_paths: &'static [&'static str],
    exclude_paths: &'static [&'static str],
    /// `group/version/plural` of every resource generated, sorted as `Informers::RESOURCES`.
    keeps: &'static [&'static str],
}

const NONE: &[&str] = &[];

const CASES: &[Case] = &[
    // The two resources of two groups, as a user picks them from a large crate.
    Case {
        include: &["apps.example.com/v1/widgets", "batch.example.com/v1/jobs"],
        exclude: NONE,
        include_paths: NONE,
        exclude_paths: NONE,
        keeps: &["apps.example.com/v1/widgets", "batch.example.com/v1/jobs"],
    },
    // A group whose resources are in a module named after it, and in one that is not.
    Case {
        include: &["apps.example.com/*/*"],
        exclude: NONE,
        include_paths: NONE,
        exclude_paths: NONE,
        keeps: &[
            "apps.example.com/v1/gizmos",
            "apps.example.com/v1/widgets",
            "apps.example.com/v1beta1/widgets",
            "apps.example.com/v2/sprockets",
        ],
    },
    Case {
        include: &["*/v1beta1/*", "*/v1alpha*/*"],
        exclude: NONE,
        include_paths: NONE,
        exclude_paths: NONE,
        keeps: &[
            "apps.example.com/v1beta1/widgets",
            "net.example.com/v1alpha1/routes",
        ],
    },
    // A group spelled with an escape.
    Case {
        include: &["storage.example.com/*/*"],
        exclude: NONE,
        include_paths: NONE,
        exclude_paths: NONE,
        keeps: &["storage.example.com/v1/volumes"],
    },
    // `impl Resource for super::X`, and a `ListableResource` marker in another file that keeps
    // the unlisted `policy/v1/evictions` out.
    Case {
        include: &["core/*/*", "apps/*/*", "policy/*/*"],
        exclude: NONE,
        include_paths: NONE,
        exclude_paths: NONE,
        keeps: &["/v1/nodes", "apps/v1/deployments"],
    },
    Case {
        include: NONE,
        exclude: NONE,
        include_paths: &["::grouped_crds::apps_example_com::v1"],
        exclude_paths: NONE,
        keeps: &["apps.example.com/v1/gizmos", "apps.example.com/v1/widgets"],
    },
    // The type's path, in another module than its `impl Resource`.
    Case {
        include: NONE,
        exclude: NONE,
        include_paths: &["grouped_crds::builtin::Deployment"],
        exclude_paths: NONE,
        keeps: &["apps/v1/deployments"],
    },
    // An inline module.
    Case {
        include: &["batch.example.com/*/*"],
        exclude: NONE,
        include_paths: &["::grouped_crds::batch_example_com::v1::jobs::inner"],
        exclude_paths: NONE,
        keeps: &["batch.example.com/v1/cronjobs"],
    },
    Case {
        include: &["*.example.com/*/*"],
        exclude: &["*/v1/*"],
        include_paths: NONE,
        exclude_paths: &["::grouped_crds::misc"],
        keeps: &["apps.example.com/v1beta1/widgets"],
    },
    Case {
        include: NONE,
        exclude: NONE,
        include_paths: NONE,
        exclude_paths: &["::grouped_crds::apps_example_com", "::grouped_crds::builtin"],
        keeps: &[
            "apps.example.com/v2/sprockets",
            "batch.example.com/v1/cronjobs",
            "batch.example.com/v1/jobs",
            "net.example.com/v1alpha1/routes",
            "storage.example.com/v1/volumes",
        ],
    },
];

fn config(case: &Case, layout: Layout) -> Config {
    let mut config = Config::new()
        .input("tests/fixtures/groups")
        .out_dir("tests/fixtures/groups-informers")
        .layout(layout)
        .runtime_dependency("informer-runtime = { path = \"../informer-runtime\" }");
    for pattern in case.include {
        config = config.include(*pattern);
    }
    for pattern in case.exclude {
        config = config.exclude(*pattern);
    }
    for prefix in case.include_paths {
        config = config.include_rust_path(*prefix);
    }
    for prefix in case.exclude_paths {
        config = config.exclude_rust_path(*prefix);
    }
    config
}

/// The `group/version/plural` of each entry of `Informers::RESOURCES` in a single file.
fn resources(code: &str) -> Vec<String> {
    let start = code.find("pub const RESOURCES").expect("a RESOURCES table");
    let end = start + code[start..].find("];").expect("the end of the table");
    code[start..end]
        .lines()
        .filter_map(|line| line.trim().strip_prefix("(\""))
        .map(|entry| {
            entry
                .trim_end_matches("\"),")
                .split("\", \"")
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect()
}

#[test]
fn pruned_runs_generate_what_parsing_every_file_generates() {
    for case in CASES {
        let single = config(case, Layout::SingleFile)
            .generate()
            .unwrap_or_else(|e| panic!("{case:?}: {e}"));
        let code = &single[&PathBuf::from("informers.rs")];
        assert_eq!(resources(code), case.keeps, "{case:?}");
        for layout in [
            Layout::SingleFile,
            Layout::Tree,
            Layout::Crate {
                name: "grouped-informers".into(),
            },
        ] {
            let pruned = config(case, layout.clone()).generate().expect("generated");
            let every_file = config(case, layout.clone())
                .prune(false)
                .generate()
                .expect("generated");
            assert!(pruned == every_file, "{case:?} in {layout:?}: the outputs differ");
        }
    }
}

#[test]
fn without_filters_every_file_is_parsed() {
    let all = Config::new()
        .input("tests/fixtures/groups")
        .generate()
        .expect("generated");
    let code = all.values().next().expect("one file");
    assert_eq!(resources(code).len(), 10, "{:?}", resources(code));
}

const BROKEN: &str = "tests/fixtures/broken-group";

#[test]
fn files_the_filters_rule_out_are_not_parsed() {
    let filtered = Config::new()
        .input(BROKEN)
        .include("good.example.com/*/*")
        .generate()
        .expect("the broken file is not parsed");
    let code = filtered.values().next().expect("one file");
    assert_eq!(resources(code), ["good.example.com/v1/things"]);
    Config::new()
        .input(BROKEN)
        .include_rust_path("::broken_group::good_example_com")
        .generate()
        .expect("the broken file is not parsed");

    let syntax_error = "failed to parse tests/fixtures/broken-group/src/bad_example_com/v1/things.rs:7:27: ";
    for unpruned in [
        Config::new().input(BROKEN),
        Config::new()
            .input(BROKEN)
            .include("good.example.com/*/*")
            .prune(false),
        // `--exclude` does not prune.
        Config::new().input(BROKEN).exclude("bad.example.com/*/*"),
    ] {
        let message = unpruned.generate().expect_err("a syntax error").to_string();
        assert!(message.starts_with(syntax_error), "{message}");
    }
}

#[test]
fn the_command_line_prunes_unless_told_not_to() {
    let out = std::env::temp_dir().join(format!("informer-gen-pruning-{}", std::process::id()));
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_informer-gen"))
            .args(["--input", BROKEN, "--output"])
            .arg(&out)
            .args(args)
            .output()
            .expect("informer-gen ran")
    };
    let filtered = run(&["--include", "good.example.com/*/*"]);
    assert!(filtered.status.success(), "{filtered:?}");
    let unpruned = run(&["--include", "good.example.com/*/*", "--no-prune"]);
    assert_eq!(unpruned.status.code(), Some(2), "{unpruned:?}");
    let stderr = String::from_utf8_lossy(&unpruned.stderr);
    assert!(
        stderr.contains("failed to parse tests/fixtures/broken-group/src/bad_example_com/v1/things.rs:7:27"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn filters_that_leave_nothing_say_how_many_files_were_not_parsed() {
    let message = Config::new()
        .input("tests/fixtures/groups")
        .include("nothing.example.com/*/*")
        .generate()
        .expect_err("nothing kept")
        .to_string();
    assert!(
        message.ends_with(
            " matching the filters (include `nothing.example.com/*/*`) in 15 files read (tests/fixtures/groups/src/lib.rs, tests/fixtures/groups/src/apps_example_com/mod.rs, tests/fixtures/groups/src/apps_example_com/v1/mod.rs and 12 more; 5 of them not parsed, since the filters keep nothing they could declare): the 3 resources found were all filtered out; change or remove the filters"
        ),
        "{message}"
    );
    // Every file that declares a resource left unparsed.
    let message = Config::new()
        .input(BROKEN)
        .include("nothing.example.com/*/*")
        .generate()
        .expect_err("nothing kept")
        .to_string();
    assert!(
        message.ends_with(
            " matching the filters (include `nothing.example.com/*/*`) in 7 files read (tests/fixtures/broken-group/src/lib.rs, tests/fixtures/broken-group/src/bad_example_com/mod.rs, tests/fixtures/broken-group/src/bad_example_com/v1/mod.rs and 4 more; 2 of them not parsed, since the filters keep nothing they could declare): none was found in the files parsed; change or remove the filters"
        ),
        "{message}"
    );
}
