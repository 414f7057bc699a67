//! The module tree of a crate, read from its files: which modules each file holds, and for
//! each module its children, the names it defines, its `use` leaves and the paths of its code.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

use quote::ToTokens;
use syn::{Expr, Item, ItemMod, Lit, Meta};

use super::syntax::{self, Names, UseLeaf};

/// Errors of reading a crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The source directory does not exist.
    #[error("failed to find the crate source directory {0}")]
    MissingDir(PathBuf),
    /// Neither `lib.rs` nor `main.rs` is in the source directory.
    #[error("failed to find the crate root: {0} holds neither lib.rs nor main.rs")]
    MissingRoot(PathBuf),
    /// A file could not be read.
    #[error("failed to read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not Rust that syn parses.
    #[error("failed to parse {path}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line of the error, from 1.
        line: usize,
        /// The column of the error, from 1.
        column: usize,
        /// What syn said.
        message: String,
    },
    /// A `mod x;` declaration whose file is neither `x.rs` nor `x/mod.rs`.
    #[error("failed to find the file of module {module} declared in {path}: tried {flat} and {nested}")]
    MissingModule {
        /// The module's path from the crate root.
        module: String,
        /// The file that declares it.
        path: PathBuf,
        /// The first file tried.
        flat: PathBuf,
        /// The second file tried.
        nested: PathBuf,
    },
    /// A `#[path]` declaration that loads a file enclosing the declaration.
    #[error("failed to load module {module}: its file {path} holds one of its ancestors")]
    CircularModule {
        /// The module's path from the crate root.
        module: String,
        /// The file.
        path: PathBuf,
    },
}

/// Index of a module in [`Crate::modules`]; the crate root is 0.
pub(super) type ModuleId = usize;

/// A module: a file, or an inline `mod x { .. }` inside one.
#[derive(Debug)]
pub(super) struct Module {
    /// Its path from the crate root (empty for the root).
    pub(super) path: Vec<String>,
    /// The file that holds it: an index into [`Crate::files`].
    pub(super) file: usize,
    /// The module that declares it.
    pub(super) parent: Option<ModuleId>,
    /// The modules it declares, by name.
    pub(super) children: BTreeMap<String, ModuleId>,
    /// The names of the items it defines.
    pub(super) items: BTreeSet<String>,
    /// The leaves of its `use` items, those in function bodies included.
    pub(super) uses: Vec<UseLeaf>,
    /// The paths its code names outside `use` items.
    pub(super) code: Vec<Vec<String>>,
}

/// A file of the crate, a node of the import graph.
#[derive(Debug)]
pub(super) struct File {
    /// Its path: the source directory joined with its path inside.
    pub(super) path: PathBuf,
    /// The module it holds.
    pub(super) module: ModuleId,
}

/// A crate's files and modules, test code left out.
#[derive(Debug)]
pub(super) struct Crate {
    /// The source directory.
    dir: PathBuf,
    /// Its files, the root's first.
    pub(super) files: Vec<File>,
    /// Its modules, the root's first.
    pub(super) modules: Vec<Module>,
}

/// Where the declarations of a module look for files.
struct Dirs {
    /// Where `mod x;` looks for `x.rs` and `x/mod.rs`.
    children: PathBuf,
    /// What `#[path = ".."]` is relative to.
    path_attr: PathBuf,
}

impl Crate {
    /// Reads the crate whose source directory is `dir`, from `lib.rs` (or `main.rs`).
    pub(super) fn load(dir: &Path) -> Result<Self, Error> {
        if !dir.is_dir() {
            return Err(Error::MissingDir(dir.to_path_buf()));
        }
        let root = ["lib.rs", "main.rs"]
            .into_iter()
            .map(|file| dir.join(file))
            .find(|file| file.is_file())
            .ok_or_else(|| Error::MissingRoot(dir.to_path_buf()))?;
        let mut krate = Self {
            dir: dir.to_path_buf(),
            files: Vec::new(),
            modules: Vec::new(),
        };
        krate.load_file(&root, Vec::new(), None, true)?;
        Ok(krate)
    }

    /// The path of a module from the crate root, `crate` for the root.
    pub(super) fn module_name(&self, module: ModuleId) -> String {
        let path = &self.modules[module].path;
        if path.is_empty() {
            "crate".to_owned()
        } else {
            path.join("::")
        }
    }

    /// Reads the file of a module; `mod_rs` when it declares its children beside itself, as
    /// `lib.rs`, `mod.rs` and files loaded by `#[path]` do, not in a directory of its name.
    fn load_file(
        &mut self,
        path: &Path,
        module_path: Vec<String>,
        parent: Option<ModuleId>,
        mod_rs: bool,
    ) -> Result<ModuleId, Error> {
        let parsed = parse(path)?;
        let here = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        let children = match path.file_stem() {
            Some(stem) if !mod_rs => here.join(stem),
            _ => here.clone(),
        };
        let id = self.add_module(module_path, self.files.len(), parent);
        self.files.push(File {
            path: path.to_path_buf(),
            module: id,
        });
        self.add_items(
            id,
            &parsed.items,
            &Dirs {
                children,
                path_attr: here,
            },
        )?;
        Ok(id)
    }

    fn add_module(&mut self, path: Vec<String>, file: usize, parent: Option<ModuleId>) -> ModuleId {
        self.modules.push(Module {
            path,
            file,
            parent,
            children: BTreeMap::new(),
            items: BTreeSet::new(),
            uses: Vec::new(),
            code: Vec::new(),
        });
        self.modules.len() - 1
    }

    /// Adds the items of a module, those marked `#[cfg(test)]` left out.
    fn add_items(&mut self, id: ModuleId, items: &[Item], dirs: &Dirs) -> Result<(), Error> {
        for item in items.iter().filter(|item| !syntax::is_test(syntax::attrs(item))) {
            match item {
                Item::Mod(declaration) => self.add_mod(id, declaration, dirs)?,
                Item::Use(item) => self.modules[id].uses.extend(syntax::use_item_leaves(item)),
                _ => {
                    let mut names = Names::default();
                    syntax::scan(item.to_token_stream(), &mut names);
                    let module = &mut self.modules[id];
                    module.items.extend(syntax::defined_names(item));
                    module.code.extend(names.paths);
                    module.uses.extend(names.uses);
                }
            }
        }
        Ok(())
    }

    /// Adds a child module, inline or in a file of its own; a test file is no module.
    fn add_mod(&mut self, parent: ModuleId, declaration: &ItemMod, dirs: &Dirs) -> Result<(), Error> {
        let name = syntax::name(&declaration.ident);
        let mut path = self.modules[parent].path.clone();
        path.push(name.clone());
        let child = match &declaration.content {
            Some((_, items)) => {
                let dir = path_attr(declaration)
                    .map_or_else(|| dirs.children.join(&name), |dir| dirs.path_attr.join(dir));
                let id = self.add_module(path, self.modules[parent].file, Some(parent));
                self.add_items(
                    id,
                    items,
                    &Dirs {
                        children: dir.clone(),
                        path_attr: dir,
                    },
                )?;
                id
            }
            None => {
                let (file, mod_rs) = self.module_file(parent, declaration, dirs)?;
                if self.is_test_file(&file) {
                    return Ok(());
                }
                self.check_not_ancestor(parent, &file, &path)?;
                self.load_file(&file, path, Some(parent), mod_rs)?
            }
        };
        self.modules[parent].children.insert(name, child);
        Ok(())
    }

    /// The file of `mod x;` and whether it is `mod_rs` (see [`Crate::load_file`]).
    fn module_file(
        &self,
        parent: ModuleId,
        declaration: &ItemMod,
        dirs: &Dirs,
    ) -> Result<(PathBuf, bool), Error> {
        if let Some(file) = path_attr(declaration) {
            return Ok((dirs.path_attr.join(file), true));
        }
        let name = syntax::name(&declaration.ident);
        let flat = dirs.children.join(format!("{name}.rs"));
        let nested = dirs.children.join(&name).join("mod.rs");
        if flat.is_file() {
            Ok((flat, false))
        } else if nested.is_file() {
            Ok((nested, true))
        } else {
            let module = self.modules[parent]
                .path
                .iter()
                .chain([&name])
                .cloned()
                .collect::<Vec<_>>();
            let path = self.files[self.modules[parent].file].path.clone();
            Err(Error::MissingModule {
                module: module.join("::"),
                path,
                flat,
                nested,
            })
        }
    }

    /// Whether a file holds tests: `tests.rs`, or a file under a `tests/` folder of the source
    /// directory.
    fn is_test_file(&self, file: &Path) -> bool {
        let inside = file
            .strip_prefix(&self.dir)
            .unwrap_or_else(|_| Path::new(file.file_name().unwrap_or_default()));
        inside
            .components()
            .any(|part| matches!(part.as_os_str().to_str(), Some("tests" | "tests.rs")))
    }

    fn check_not_ancestor(&self, parent: ModuleId, file: &Path, path: &[String]) -> Result<(), Error> {
        let mut ancestor = Some(parent);
        while let Some(id) = ancestor {
            if self.files[self.modules[id].file].path == file {
                return Err(Error::CircularModule {
                    module: path.join("::"),
                    path: file.to_path_buf(),
                });
            }
            ancestor = self.modules[id].parent;
        }
        Ok(())
    }
}

/// The value of a `#[path = ".."]` attribute of a module declaration.
fn path_attr(declaration: &ItemMod) -> Option<String> {
    declaration.attrs.iter().find_map(|attr| match &attr.meta {
        Meta::NameValue(pair) if pair.path.is_ident("path") => match &pair.value {
            Expr::Lit(expr) => match &expr.lit {
                Lit::Str(value) => Some(value.value()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    })
}

/// Reads and parses a file.
fn parse(path: &Path) -> Result<syn::File, Error> {
    let text = fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    syn::parse_file(&text).map_err(|error| {
        let start = error.span().start();
        Error::Parse {
            path: path.to_path_buf(),
            line: start.line,
            column: start.column + 1,
            message: error.to_string(),
        }
    })
}
