//! Where the paths of a module lead, and the edges between files they make.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    syntax::{Binding, UseLeaf},
    tree::{Crate, ModuleId},
};

/// The edges between files, (from, to) as indexes into [`Crate::files`], with the names that
/// make each.
pub(super) type Edges = BTreeMap<(usize, usize), BTreeSet<String>>;

/// Where a path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    /// The deepest module the path reaches.
    pub(super) module: ModuleId,
    /// The name where the walk stopped: an item `module` defines, or a name it does not know
    /// (an enum's variant stops at the enum). None when the path names `module` itself.
    pub(super) name: Option<String>,
}

/// What a name stands for in a module.
#[derive(Debug)]
enum Member {
    /// A child module.
    Module(ModuleId),
    /// An item this module defines.
    Item(ModuleId),
    /// An imported path, as written in this module.
    Import(ModuleId, Vec<String>),
}

/// The lookups under way, to stop at import loops.
type Pending = Vec<(ModuleId, String)>;

impl Crate {
    /// The edges the `use` leaves and the code of every module make, but those of re-exports
    /// of a module's own children and those within a file.
    pub(super) fn edges(&self) -> Edges {
        let mut edges = Edges::new();
        for (id, module) in self.modules.iter().enumerate() {
            let leaves = module.uses.iter().filter(|leaf| !self.hands_on_child(id, leaf));
            for path in leaves.map(|leaf| &leaf.path).chain(&module.code) {
                self.add_edge(&mut edges, id, path);
            }
        }
        edges
    }

    fn add_edge(&self, edges: &mut Edges, from: ModuleId, path: &[String]) {
        let Some(Target {
            module,
            name: Some(name),
        }) = self.resolve(from, path)
        else {
            return;
        };
        let (from, to) = (self.modules[from].file, self.modules[module].file);
        if from != to {
            edges.entry((from, to)).or_default().insert(name);
        }
    }

    /// Whether a leaf re-exports from one of the module's children: `pub use child::Item;`.
    fn hands_on_child(&self, module: ModuleId, leaf: &UseLeaf) -> bool {
        if !leaf.reexport {
            return false;
        }
        let Some((mut at, rest)) = self.start(module, &leaf.path) else {
            return false;
        };
        for segment in rest {
            match self.modules[at].children.get(segment) {
                Some(&child) => at = child,
                None => break,
            }
        }
        self.is_below(at, module)
    }

    fn is_below(&self, module: ModuleId, ancestor: ModuleId) -> bool {
        let mut up = self.modules[module].parent;
        while let Some(parent) = up {
            if parent == ancestor {
                return true;
            }
            up = self.modules[parent].parent;
        }
        false
    }

    /// The module a path starts from and the rest of it: `crate::`, `self::` and `super::`
    /// prefixes taken; any other path starts in `from`.
    fn start<'p>(&self, from: ModuleId, path: &'p [String]) -> Option<(ModuleId, &'p [String])> {
        match path.first().map(String::as_str) {
            Some("crate") => Some((0, &path[1..])),
            Some("self") => Some((from, &path[1..])),
            Some("super") => {
                let ups = path.iter().take_while(|segment| *segment == "super").count();
                let mut at = from;
                for _ in 0..ups {
                    at = self.modules[at].parent?;
                }
                Some((at, &path[ups..]))
            }
            _ => Some((from, path)),
        }
    }

    /// Where a path written in module `from` leads; None when it leads out of the crate (a
    /// path of another crate, a local name).
    pub(super) fn resolve(&self, from: ModuleId, path: &[String]) -> Option<Target> {
        self.resolve_pending(from, path, &mut Pending::new())
    }

    fn resolve_pending(&self, from: ModuleId, path: &[String], pending: &mut Pending) -> Option<Target> {
        let relative = !matches!(path.first().map(String::as_str), Some("crate" | "self" | "super"));
        let (start, rest) = self.start(from, path)?;
        if !relative {
            return self.walk(start, rest, pending);
        }
        // A relative path starts with a name in scope in `from`, or leaves the crate.
        let (first, rest) = rest.split_first()?;
        let member = self.member(from, first, pending)?;
        self.follow(from, member, first, rest, pending)
    }

    /// Walks down from `module` along `path`.
    fn walk(&self, module: ModuleId, path: &[String], pending: &mut Pending) -> Option<Target> {
        let Some((first, rest)) = path.split_first() else {
            return Some(Target { module, name: None });
        };
        match self.member(module, first, pending) {
            Some(member) => self.follow(module, member, first, rest, pending),
            None => Some(Target {
                module,
                name: Some(first.clone()),
            }),
        }
    }

    /// Goes on from `name`, a member of `module`, along `rest`.
    fn follow(
        &self,
        module: ModuleId,
        member: Member,
        name: &str,
        rest: &[String],
        pending: &mut Pending,
    ) -> Option<Target> {
        match member {
            Member::Module(child) => self.walk(child, rest, pending),
            Member::Item(owner) => Some(Target {
                module: owner,
                name: Some(name.to_owned()),
            }),
            Member::Import(origin, path) => {
                let key = (module, name.to_owned());
                if pending.contains(&key) {
                    return Some(Target {
                        module,
                        name: Some(name.to_owned()),
                    });
                }
                pending.push(key);
                let full = [path.as_slice(), rest].concat();
                let target = self.resolve_pending(origin, &full, pending);
                pending.pop();
                target
            }
        }
    }

    /// What `name` stands for in `module`: a child, an item, an import or a name a glob
    /// import brings in.
    fn member(&self, module: ModuleId, name: &str, pending: &mut Pending) -> Option<Member> {
        let here = &self.modules[module];
        if let Some(&child) = here.children.get(name) {
            return Some(Member::Module(child));
        }
        if here.items.contains(name) {
            return Some(Member::Item(module));
        }
        let binding = Binding::Name(name.to_owned());
        if let Some(leaf) = here.uses.iter().find(|leaf| leaf.binding == binding) {
            return Some(Member::Import(module, leaf.path.clone()));
        }
        let mut globs = here.uses.iter().filter(|leaf| leaf.binding == Binding::Glob);
        globs.find_map(|glob| self.through_glob(module, glob, name, pending))
    }

    /// What `name` stands for in the module that the glob import `glob` of `module` names.
    fn through_glob(
        &self,
        module: ModuleId,
        glob: &UseLeaf,
        name: &str,
        pending: &mut Pending,
    ) -> Option<Member> {
        let key = (module, format!("{}::*", glob.path.join("::")));
        if pending.contains(&key) {
            return None;
        }
        pending.push(key);
        let found = match self.resolve_pending(module, &glob.path, pending) {
            Some(Target {
                module: globbed,
                name: None,
            }) => self.member(globbed, name, pending),
            _ => None,
        };
        pending.pop();
        found
    }
}
