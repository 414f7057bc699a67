//! Places in input files, for error messages.

use std::{fmt, path::PathBuf};

use proc_macro2::Span;

/// A line and column (both 1-based) in a file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    /// The file.
    pub file: PathBuf,
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
}

impl Location {
    /// Where `span` starts in `file`.
    pub fn of(file: &std::path::Path, span: Span) -> Self {
        let start = span.start();
        Self {
            file: file.to_path_buf(),
            line: start.line,
            column: start.column + 1,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}
