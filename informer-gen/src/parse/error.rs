//! What can be wrong with the input sources.

use std::{fmt, path::PathBuf};

use crate::Location;

/// `" at <where>: <what>"` for one mistake, each on a line of its own for several.
fn attribute_errors(errors: &[(Location, informer_templates::attr::Error)]) -> String {
    match errors {
        [(location, error)] => format!(" at {location}: {error}"),
        _ => {
            let mut out = format!(" ({} mistakes):", errors.len());
            for (location, error) in errors {
                out.push_str(&format!("\n  {location}: {error}"));
            }
            out
        }
    }
}

/// A source that could not be read or understood.
///
/// `Debug` prints the message `Display` prints.
#[derive(thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("failed to read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not valid Rust.
    #[error("failed to parse {location}: {message}")]
    Syntax {
        /// Where.
        location: Location,
        /// syn's message.
        message: String,
    },
    /// A `mod x;` declaration whose file does not exist.
    #[error("failed to find the file of module `{module}` declared at {location}: looked for {candidates}")]
    ModuleNotFound {
        /// Where the module is declared.
        location: Location,
        /// The module name.
        module: String,
        /// The files tried.
        candidates: String,
    },
    /// A module file included twice (a `#[path]` loop).
    #[error("failed to walk the modules: {location} includes {path} a second time")]
    ModuleLoop {
        /// Where the module is declared.
        location: Location,
        /// The file.
        path: PathBuf,
    },
    /// A resource declaration lacks a required field.
    #[error("failed to read the resource declared at {location}: missing {missing}; expected {expected}")]
    MissingField {
        /// Where the declaration is.
        location: Location,
        /// The missing fields.
        missing: String,
        /// The expected form.
        expected: String,
    },
    /// Mistakes in the `#[kube(...)]` or `#[informer(...)]` attributes of an item, all of
    /// them, each where it is.
    #[error("failed to read the resource attributes{}", attribute_errors(.errors))]
    Attributes {
        /// Where each mistake is, and what it is.
        errors: Vec<(Location, informer_templates::attr::Error)>,
    },
    /// The Rust path of a declared type does not parse (a module or type name that is not an
    /// identifier).
    #[error(
        "failed to form the Rust path `{path}` of the resource declared at {location}: {message}; name the module and the type with identifiers"
    )]
    TypePath {
        /// Where the resource is declared.
        location: Location,
        /// The path.
        path: String,
        /// syn's message.
        message: String,
    },
    /// An attribute that does not parse.
    #[error("failed to parse the attribute at {location}: {message}; expected {expected}")]
    MalformedAttribute {
        /// Where.
        location: Location,
        /// syn's message.
        message: String,
        /// The expected form.
        expected: String,
    },
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
