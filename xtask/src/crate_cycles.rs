//! `cargo xtask crate-cycles`: the dependency circles between the workspace's crates, counting
//! every kind of dependency (normal, build, dev, optional), read from `cargo metadata`. Cargo
//! builds a crate that dev-depends on a crate depending on it, but then links two copies of it
//! into its tests, with types that do not match; the workspace keeps its graph a tree.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt,
    process::Command,
};

/// The workspace's crates, each with the workspace crates it depends on (and how).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CrateGraph {
    edges: BTreeMap<String, BTreeMap<String, &'static str>>,
}

impl CrateGraph {
    /// Adds a dependency of `from` on `to`, of `kind` (`normal`, `dev` or `build`).
    pub fn depend(&mut self, from: &str, to: &str, kind: &'static str) {
        self.edges.entry(to.to_owned()).or_default();
        self.edges
            .entry(from.to_owned())
            .or_default()
            .entry(to.to_owned())
            .or_insert(kind);
    }

    /// Every circle, each once, as the crates along it (the first repeated at the end).
    pub fn circles(&self) -> Vec<Vec<String>> {
        let mut circles = BTreeSet::new();
        for start in self.edges.keys() {
            let mut path = vec![start.clone()];
            self.walk(start, &mut path, &mut circles);
        }
        circles.into_iter().collect()
    }

    fn walk(&self, start: &str, path: &mut Vec<String>, circles: &mut BTreeSet<Vec<String>>) {
        let Some(last) = path.last().cloned() else {
            return;
        };
        for next in self.edges.get(&last).into_iter().flat_map(BTreeMap::keys) {
            if next == start {
                circles.insert(canonical(path));
            } else if !path.contains(next) && next.as_str() > start {
                path.push(next.clone());
                self.walk(start, path, circles);
                path.pop();
            }
        }
    }

    /// How `from` depends on `to`.
    fn kind(&self, from: &str, to: &str) -> &'static str {
        self.edges
            .get(from)
            .and_then(|to_kind| to_kind.get(to))
            .copied()
            .unwrap_or("?")
    }

    /// `a -(dev)-> b -(normal)-> a`.
    pub fn describe(&self, circle: &[String]) -> String {
        let mut text = circle[0].clone();
        for pair in circle.windows(2) {
            text.push_str(&format!(" -({})-> {}", self.kind(&pair[0], &pair[1]), pair[1]));
        }
        text
    }
}

/// `path` as a circle starting at its smallest crate and closed.
fn canonical(path: &[String]) -> Vec<String> {
    let mut circle = path.to_vec();
    circle.push(path[0].clone());
    circle
}

/// A failure to read the workspace's graph.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `cargo metadata` did not run or failed.
    #[error("failed to run `cargo metadata`: {0}")]
    Metadata(String),
    /// Its output is not what `--format-version 1` promises.
    #[error("failed to read `cargo metadata`'s output: {0}")]
    Parse(String),
}

/// The graph of the workspace's crates, from `cargo metadata --no-deps`.
pub fn workspace_graph() -> Result<CrateGraph, Error> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .map_err(|error| Error::Metadata(error.to_string()))?;
    if !output.status.success() {
        return Err(Error::Metadata(
            String::from_utf8_lossy(&output.stderr).into_owned(),
        ));
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|error| Error::Parse(error.to_string()))?;
    graph_of(&metadata)
}

/// The graph of the packages in `metadata`, through their dependencies on each other.
pub fn graph_of(metadata: &serde_json::Value) -> Result<CrateGraph, Error> {
    let packages = metadata["packages"]
        .as_array()
        .ok_or_else(|| Error::Parse("no `packages` array".to_owned()))?;
    let names: BTreeSet<&str> = packages
        .iter()
        .filter_map(|package| package["name"].as_str())
        .collect();
    let mut graph = CrateGraph::default();
    for package in packages {
        let from = package["name"].as_str().unwrap_or_default();
        for dependency in package["dependencies"].as_array().into_iter().flatten() {
            let to = dependency["name"].as_str().unwrap_or_default();
            if !names.contains(to) || to == from {
                continue;
            }
            let kind = match dependency["kind"].as_str() {
                Some("dev") => "dev",
                Some("build") => "build",
                _ => "normal",
            };
            graph.depend(from, to, kind);
        }
    }
    Ok(graph)
}

impl fmt::Display for CrateGraph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let circles = self.circles();
        for circle in &circles {
            writeln!(f, "circle: {}", self.describe(circle))?;
        }
        write!(
            f,
            "{} crate circles among {} crates",
            circles.len(),
            self.edges.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_dev_dependency_back_closes_a_circle() {
        let metadata = json!({"packages": [
            {"name": "runtime", "dependencies": [{"name": "server", "kind": "dev"}, {"name": "serde", "kind": null}]},
            {"name": "server", "dependencies": [{"name": "runtime", "kind": null}]},
            {"name": "leaf", "dependencies": []},
        ]});
        let graph = graph_of(&metadata).expect("read");
        let circles = graph.circles();
        assert_eq!(circles, [["runtime", "server", "runtime"]]);
        assert_eq!(
            graph.describe(&circles[0]),
            "runtime -(dev)-> server -(normal)-> runtime"
        );
    }

    #[test]
    fn a_tree_has_no_circle_and_each_circle_is_reported_once() {
        let tree = json!({"packages": [
            {"name": "runtime", "dependencies": [{"name": "server", "kind": "dev"}, {"name": "leaf", "kind": null}]},
            {"name": "server", "dependencies": [{"name": "leaf", "kind": null}]},
            {"name": "leaf", "dependencies": []},
        ]});
        assert!(graph_of(&tree).expect("read").circles().is_empty());
        let three = json!({"packages": [
            {"name": "a", "dependencies": [{"name": "b", "kind": null}]},
            {"name": "b", "dependencies": [{"name": "c", "kind": "build"}]},
            {"name": "c", "dependencies": [{"name": "a", "kind": "dev"}]},
        ]});
        assert_eq!(graph_of(&three).expect("read").circles(), [["a", "b", "c", "a"]]);
    }

    #[test]
    fn the_workspace_has_no_crate_circle() {
        let graph = workspace_graph().expect("cargo metadata runs");
        assert!(graph.circles().is_empty(), "{graph}");
    }
}
