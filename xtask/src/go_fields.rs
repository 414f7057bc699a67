//! What protobuf and JSON need to know of Kubernetes' Go types, read from their sources: for
//! every field with a `protobuf:"..."` tag, its number, its JSON name (Go keeps acronyms:
//! `downwardAPI`, `nodeID`), whether it is a pointer and whether its JSON tag says
//! `omitempty`. `cargo xtask go-fields <dir>...` writes them as `xtask/data/go_fields.tsv`,
//! which `cargo xtask codegen` joins with k8s-pb's messages.
//!
//! Why it matters: Go's protobuf encoding writes every field that is not a pointer, zero or
//! not, and a pointer field whenever it is set; its JSON encoding leaves out the zero values
//! of `omitempty` fields. A decoder that should give what the JSON would give keeps a zero it
//! read only for pointer fields and fields without `omitempty`.
//!
//! The sources are the Go modules `k8s.io/api`, `k8s.io/apimachinery`,
//! `k8s.io/apiextensions-apiserver` and `k8s.io/kube-aggregator`, each a directory given on
//! the command line; their packages map to k8s-pb's modules (`k8s.io/api/core/v1` is
//! `api::core::v1`, `k8s.io/apimachinery/pkg/apis/meta/v1` is
//! `apimachinery::pkg::apis::meta::v1`).

use std::{
    fmt::Write as _,
    fs,
    path::{Path, PathBuf},
};

/// One field of a Go struct that has a protobuf number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoField {
    /// The k8s-pb message path of the struct (`api::core::v1::PodSpec`).
    pub message: String,
    /// The protobuf field number.
    pub tag: u32,
    /// The JSON name; empty for a struct embedded inline (`json:",inline"`).
    pub json: String,
    /// Whether the Go field is a pointer (`*int64`): set, it is written even when zero.
    pub pointer: bool,
    /// Whether the JSON tag says `omitempty`.
    pub omit_empty: bool,
}

/// Errors of reading Go sources.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A directory or file could not be read.
    #[error("failed to read {path}: {source}")]
    Read {
        /// What could not be read.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A directory is not one of the four Go modules.
    #[error(
        "failed to recognise the Go module at {0}: expected a checkout of k8s.io/api, k8s.io/apimachinery, k8s.io/apiextensions-apiserver or k8s.io/kube-aggregator (its go.mod names it)"
    )]
    UnknownModule(PathBuf),
    /// A line of the data file is not five tab-separated columns.
    #[error("failed to read line {line} of the Go field table: {text:?}")]
    BadLine {
        /// The line number, from 1.
        line: usize,
        /// The line.
        text: String,
    },
}

/// The k8s-pb module prefix of a Go module, from its `go.mod`.
fn module_prefix(dir: &Path) -> Result<&'static str, Error> {
    let go_mod = dir.join("go.mod");
    let text = fs::read_to_string(&go_mod).map_err(|source| Error::Read {
        path: go_mod.clone(),
        source,
    })?;
    let module = text
        .lines()
        .find_map(|l| l.strip_prefix("module "))
        .map(str::trim)
        .unwrap_or_default();
    Ok(match module {
        "k8s.io/api" => "api",
        "k8s.io/apimachinery" => "apimachinery",
        "k8s.io/apiextensions-apiserver" => "apiextensions_apiserver",
        "k8s.io/kube-aggregator" => "kube_aggregator",
        _ => return Err(Error::UnknownModule(dir.to_path_buf())),
    })
}

/// Every Go file of `dir` and below that is neither a test nor generated code.
fn go_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let entries = fs::read_dir(dir).map_err(|source| Error::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries {
        let path = entry
            .map_err(|source| Error::Read {
                path: dir.to_path_buf(),
                source,
            })?
            .path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if path.is_dir() {
            if !matches!(name, "testdata" | "vendor" | ".git") {
                go_files(&path, out)?;
            }
        } else if name.ends_with(".go")
            && !name.ends_with("_test.go")
            && !name.starts_with("zz_generated")
            && !name.ends_with(".pb.go")
        {
            out.push(path);
        }
    }
    Ok(())
}

/// The fields of the structs of one Go file, in the package `message_module`.
fn file_fields(text: &str, message_module: &str) -> Vec<GoField> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("type ") {
            current = rest
                .strip_suffix(" struct {")
                .filter(|name| !name.contains(' '))
                .map(|name| format!("{message_module}::{name}"));
            continue;
        }
        if line.starts_with('}') {
            current = None;
            continue;
        }
        let Some(message) = &current else { continue };
        if let Some(field) = struct_field(line, message) {
            out.push(field);
        }
    }
    out
}

/// A field line such as ``Name *int64 `json:"name,omitempty" protobuf:"varint,5,opt,name=name"` ``.
fn struct_field(line: &str, message: &str) -> Option<GoField> {
    let line = line.trim();
    if line.starts_with("//") {
        return None;
    }
    let (declaration, tags) = line.split_once('`')?;
    let tags = tags.trim_end_matches('`');
    let protobuf = tag_value(tags, "protobuf")?;
    let number = protobuf.split(',').nth(1)?.parse().ok()?;
    let json = tag_value(tags, "json").unwrap_or_default();
    let mut json_parts = json.split(',');
    let json_name = json_parts.next().unwrap_or_default().to_owned();
    let omit_empty = json_parts.any(|p| p == "omitempty");
    let mut words = declaration.split_whitespace();
    let first = words.next()?;
    // `Name Type` or an embedded `Type`
    let ty = words.next().unwrap_or(first);
    Some(GoField {
        message: message.to_owned(),
        tag: number,
        json: json_name,
        pointer: ty.starts_with('*'),
        omit_empty,
    })
}

/// The value of `key:"value"` in a Go struct tag.
fn tag_value<'a>(tags: &'a str, key: &str) -> Option<&'a str> {
    let start = tags.find(&format!("{key}:\""))? + key.len() + 2;
    let rest = &tags[start..];
    Some(&rest[..rest.find('"')?])
}

/// Every field of the Go modules at `dirs`, sorted by message and number.
pub fn read_modules(dirs: &[PathBuf]) -> Result<Vec<GoField>, Error> {
    let mut fields = Vec::new();
    for dir in dirs {
        let prefix = module_prefix(dir)?;
        let mut files = Vec::new();
        go_files(dir, &mut files)?;
        for file in files {
            let text = fs::read_to_string(&file).map_err(|source| Error::Read {
                path: file.clone(),
                source,
            })?;
            let package = file
                .parent()
                .and_then(|p| p.strip_prefix(dir).ok())
                .map(|p| p.to_string_lossy().replace('/', "::"))
                .unwrap_or_default();
            fields.extend(file_fields(&text, &format!("{prefix}::{package}")));
        }
    }
    fields.sort_by(|a, b| (&a.message, a.tag).cmp(&(&b.message, b.tag)));
    fields.dedup();
    Ok(fields)
}

/// The data file: a header naming the sources, then `message tag json pointer omitempty` rows.
pub fn render(fields: &[GoField], sources: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Generated by `cargo xtask go-fields` from the Go types of {sources}.\n\
         # message\ttag\tjson\tpointer\tomitempty"
    );
    for f in fields {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}",
            f.message,
            f.tag,
            f.json,
            u8::from(f.pointer),
            u8::from(f.omit_empty)
        );
    }
    out
}

/// Reads the data file written by [`render`].
pub fn parse(text: &str) -> Result<Vec<GoField>, Error> {
    let mut fields = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let bad = || Error::BadLine {
            line: index + 1,
            text: line.to_owned(),
        };
        let columns: Vec<&str> = line.split('\t').collect();
        let [message, tag, json, pointer, omit_empty] = columns[..] else {
            return Err(bad());
        };
        fields.push(GoField {
            message: message.to_owned(),
            tag: tag.parse().map_err(|_| bad())?,
            json: json.to_owned(),
            pointer: pointer == "1",
            omit_empty: omit_empty == "1",
        });
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_fields_give_number_json_name_pointer_and_omitempty() {
        let text = "type Toleration struct {\n\
            \t// comment\n\
            \tKey string `json:\"key,omitempty\" protobuf:\"bytes,1,opt,name=key\"`\n\
            \tTolerationSeconds *int64 `json:\"tolerationSeconds,omitempty\" protobuf:\"varint,5,opt,name=tolerationSeconds\"`\n\
            \tRestartCount int32 `json:\"restartCount\" protobuf:\"varint,6,opt,name=restartCount\"`\n\
            }\n\
            type Volume struct {\n\
            \tVolumeSource `json:\",inline\" protobuf:\"bytes,2,opt,name=volumeSource\"`\n\
            \tDownwardAPI *DownwardAPIVolumeSource `json:\"downwardAPI,omitempty\" protobuf:\"bytes,9,opt,name=downwardAPI\"`\n\
            }\n";
        let fields = file_fields(text, "api::core::v1");
        fn row(f: &GoField) -> (&str, u32, &str, bool, bool) {
            (
                f.message.as_str(),
                f.tag,
                f.json.as_str(),
                f.pointer,
                f.omit_empty,
            )
        }
        assert_eq!(
            fields.iter().map(row).collect::<Vec<_>>(),
            [
                ("api::core::v1::Toleration", 1, "key", false, true),
                ("api::core::v1::Toleration", 5, "tolerationSeconds", true, true),
                ("api::core::v1::Toleration", 6, "restartCount", false, false),
                ("api::core::v1::Volume", 2, "", false, false),
                ("api::core::v1::Volume", 9, "downwardAPI", true, true),
            ]
        );
    }

    #[test]
    fn the_data_file_reads_back() {
        let fields = vec![GoField {
            message: "api::core::v1::Toleration".into(),
            tag: 5,
            json: "tolerationSeconds".into(),
            pointer: true,
            omit_empty: true,
        }];
        assert_eq!(parse(&render(&fields, "test")).expect("parsed"), fields);
        assert!(matches!(parse("a\tb"), Err(Error::BadLine { line: 1, .. })));
    }
}
