//! The resources arranged as generated code is: groups, their versions, their resources, each
//! with its generated names.

use std::collections::BTreeMap;

use proc_macro2::{Ident, TokenStream};
use quote::quote;
use syn::{Token, punctuated::Punctuated};

use crate::{Error, Resource, naming};

/// Every resource, by group and version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Api {
    /// The groups, sorted by accessor.
    pub groups: Vec<Group>,
}

/// One API group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The group name (`""` for core).
    pub name: String,
    /// The accessor method and module name (see [`naming`]).
    pub accessor: Ident,
    /// The group struct, such as `Example`.
    pub type_name: Ident,
    /// The versions, sorted by module name.
    pub versions: Vec<Version>,
}

/// One version of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// The version name.
    pub name: String,
    /// The group name.
    pub group: String,
    /// The module name and accessor method, such as `v1`.
    pub module: Ident,
    /// The version struct, such as `V1`.
    pub type_name: Ident,
    /// The resources, sorted by plural.
    pub resources: Vec<Resource>,
}

impl Api {
    /// Arranges `resources`, naming groups by the rules of [`naming`]; fails when two groups,
    /// versions or resources would get the same name.
    pub fn new(resources: Vec<Resource>) -> Result<Self, Error> {
        Self::with_accessors(resources, &BTreeMap::new())
    }

    /// Like [`Api::new`], with the accessors of some groups pinned: `pins` maps a group name
    /// (`""` for core) to its accessor, replacing the naming rule for that group (pins of
    /// groups without resources are unused). Fails when a pin is not a valid accessor
    /// ([`naming::valid_accessor`]) or when two groups, pinned or not, get the same accessor.
    pub fn with_accessors(resources: Vec<Resource>, pins: &BTreeMap<String, String>) -> Result<Self, Error> {
        let mut by_group: BTreeMap<String, BTreeMap<String, Vec<Resource>>> = BTreeMap::new();
        for resource in resources {
            by_group
                .entry(resource.group.clone())
                .or_default()
                .entry(resource.version.clone())
                .or_default()
                .push(resource);
        }
        let accessors = group_accessors(by_group.keys().map(String::as_str), pins)?;
        let mut groups = Vec::new();
        for (name, versions) in by_group {
            let accessor = accessors
                .get(&name)
                .cloned()
                .unwrap_or_else(|| naming::group_accessor(&name));
            let versions = arrange_versions(&name, versions)?;
            groups.push(Group {
                type_name: naming::group_type(&accessor),
                accessor: naming::ident(&accessor),
                name,
                versions,
            });
        }
        groups.sort_by_key(|g| g.accessor.to_string());
        Ok(Self { groups })
    }

    /// Every resource, sorted by group, version and plural.
    pub fn resources(&self) -> Vec<&Resource> {
        let mut all: Vec<&Resource> = self
            .groups
            .iter()
            .flat_map(|g| &g.versions)
            .flat_map(|v| &v.resources)
            .collect();
        all.sort_by(|a, b| (&a.group, &a.version, &a.plural).cmp(&(&b.group, &b.version, &b.plural)));
        all
    }
}

impl Group {
    /// The `#[cfg(...)]` attributes of the group's accessor and module: present exactly when
    /// one of its resources is (see [`shared_cfg_attrs`]).
    pub fn cfg_attrs(&self) -> TokenStream {
        shared_cfg_attrs(self.versions.iter().flat_map(|v| &v.resources))
    }
}

impl Version {
    /// The `#[cfg(...)]` attributes of the version's accessor and module: present exactly when
    /// one of its resources is (see [`shared_cfg_attrs`]).
    pub fn cfg_attrs(&self) -> TokenStream {
        shared_cfg_attrs(&self.resources)
    }
}

/// The `#[cfg(...)]` attributes that hold exactly when one of `resources` is compiled: the
/// predicates every resource has, plus `any(all(<the rest of each>), ...)` unless some
/// resource has no other predicate. Nothing when a resource has no predicate at all.
pub fn shared_cfg_attrs<'a>(resources: impl IntoIterator<Item = &'a Resource>) -> TokenStream {
    let resources: Vec<&Resource> = resources.into_iter().collect();
    let key = |m: &syn::Meta| quote!(#m).to_string();
    let Some(first) = resources.first() else {
        return TokenStream::new();
    };
    let common: Vec<&syn::Meta> = first
        .cfgs
        .iter()
        .filter(|c| resources.iter().all(|r| r.cfgs.iter().any(|o| key(o) == key(c))))
        .collect();
    let common_keys: Vec<String> = common.iter().map(|c| key(c)).collect();
    let mut rests: Vec<Vec<&syn::Meta>> = Vec::new();
    for resource in &resources {
        let rest: Vec<&syn::Meta> = resource
            .cfgs
            .iter()
            .filter(|c| !common_keys.contains(&key(c)))
            .collect();
        if rest.is_empty() {
            return quote! { #(#[cfg(#common)])* };
        }
        let rest_keys: Vec<String> = rest.iter().map(|c| key(c)).collect();
        if !rests
            .iter()
            .any(|r| r.iter().map(|c| key(c)).collect::<Vec<_>>() == rest_keys)
        {
            rests.push(rest);
        }
    }
    // `any(a, b)` alternatives are spliced into the outer `any`, without repeats.
    let mut alternatives: Vec<TokenStream> = Vec::new();
    for rest in &rests {
        let spliced: Vec<TokenStream> = match rest.as_slice() {
            [syn::Meta::List(list)] if list.path.is_ident("any") => list
                .parse_args_with(Punctuated::<syn::Meta, Token![,]>::parse_terminated)
                .map(|nested| nested.iter().map(|m| quote! { #m }).collect())
                .unwrap_or_else(|_| vec![quote! { #list }]),
            [one] => vec![quote! { #one }],
            many => vec![quote! { all(#(#many),*) }],
        };
        for alternative in spliced {
            if !alternatives
                .iter()
                .any(|a| a.to_string() == alternative.to_string())
            {
                alternatives.push(alternative);
            }
        }
    }
    let rest = if alternatives.len() == 1 {
        quote! { #(#alternatives)* }
    } else {
        quote! { any(#(#alternatives),*) }
    };
    quote! { #(#[cfg(#common)])* #[cfg(#rest)] }
}

/// The accessor of each group: its pin, else the naming rule's; an error when two groups get
/// the same one.
fn group_accessors<'a>(
    groups: impl Iterator<Item = &'a str>,
    pins: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, Error> {
    for (group, accessor) in pins {
        if !naming::valid_accessor(accessor) {
            return Err(Error::InvalidAccessor {
                group: group.clone(),
                accessor: accessor.clone(),
            });
        }
    }
    let mut accessors = BTreeMap::new();
    let mut owners: BTreeMap<String, &str> = BTreeMap::new();
    for group in groups {
        let accessor = match pins.get(group) {
            Some(pinned) => pinned.clone(),
            None => naming::group_accessor(group),
        };
        if let Some(first) = owners.insert(accessor.clone(), group) {
            return Err(Error::GroupCollision {
                first: first.to_owned(),
                second: group.to_owned(),
                accessor,
            });
        }
        accessors.insert(group.to_owned(), accessor);
    }
    Ok(accessors)
}

fn arrange_versions(group: &str, versions: BTreeMap<String, Vec<Resource>>) -> Result<Vec<Version>, Error> {
    let mut out: Vec<Version> = Vec::new();
    for (name, mut resources) in versions {
        let module = naming::version_module(&name);
        if let Some(other) = out.iter().find(|v| v.module == module) {
            return Err(Error::VersionCollision {
                group: group.to_owned(),
                first: other.name.clone(),
                second: name,
                name: module,
            });
        }
        resources.sort_by(|a, b| a.plural.cmp(&b.plural));
        check_resource_names(group, &name, &resources)?;
        out.push(Version {
            type_name: naming::version_type(&name),
            module: naming::ident(&module),
            group: group.to_owned(),
            name,
            resources,
        });
    }
    out.sort_by_key(|v| v.module.to_string());
    Ok(out)
}

fn check_resource_names(group: &str, version: &str, resources: &[Resource]) -> Result<(), Error> {
    let mut seen: BTreeMap<String, &Resource> = BTreeMap::new();
    for resource in resources {
        let names = [
            naming::resource_method(&resource.kind, &resource.plural),
            naming::kind_type_stem(&resource.kind),
            naming::kind_snake(&resource.kind),
        ];
        for (index, name) in names.into_iter().enumerate() {
            if let Some(first) = seen.insert(format!("{index}{name}"), resource) {
                return Err(Error::ResourceCollision {
                    group_version: format!("{group}/{version}"),
                    first: format!("{}/{}", first.kind, first.plural),
                    second: format!("{}/{}", resource.kind, resource.plural),
                    name,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scope;

    fn resource(group: &str, version: &str, kind: &str, plural: &str) -> Resource {
        let path = syn::parse_str(&format!("::c::{kind}")).expect("path");
        Resource::new(group, version, kind, plural, Scope::Namespaced, path)
    }

    fn accessors(api: &Api) -> Vec<(String, String)> {
        api.groups
            .iter()
            .map(|g| (g.name.clone(), g.accessor.to_string()))
            .collect()
    }

    #[test]
    fn accessors_follow_the_group_alone() {
        let api = Api::new(vec![
            resource("example.com", "v1", "Foo", "foos"),
            resource("example.org", "v1", "Bar", "bars"),
            resource("", "v1", "Pod", "pods"),
            resource("core.example.io", "v1", "Baz", "bazs"),
            resource("apps", "v1", "Deployment", "deployments"),
            resource("gateway.networking.k8s.io", "v1", "Gateway", "gateways"),
        ])
        .expect("named");
        let names: Vec<String> = api.groups.iter().map(|g| g.accessor.to_string()).collect();
        assert_eq!(
            names,
            [
                "apps",
                "core",
                "core_example_io",
                "example_com",
                "example_org",
                "gateway"
            ]
        );
    }

    #[test]
    fn adding_groups_renames_nothing() {
        let istio = || resource("networking.istio.io", "v1", "VirtualService", "virtualservices");
        let alone = Api::new(vec![istio()]).expect("named");
        assert_eq!(
            accessors(&alone),
            [("networking.istio.io".into(), "networking_istio_io".into())]
        );
        let beside = Api::new(vec![
            istio(),
            resource("networking.k8s.io", "v1", "Ingress", "ingresses"),
            resource("networking.example.com", "v1", "Net", "nets"),
        ])
        .expect("named");
        let names = accessors(&beside);
        assert!(names.contains(&("networking.istio.io".into(), "networking_istio_io".into())));
        assert!(names.contains(&("networking.k8s.io".into(), "networking".into())));
        assert!(names.contains(&("networking.example.com".into(), "networking_example_com".into())));
    }

    #[test]
    fn pins_replace_the_rule() {
        let pins = BTreeMap::from([
            ("example.com".to_owned(), "example".to_owned()),
            ("".to_owned(), "kube_core".to_owned()),
            ("absent.example.com".to_owned(), "absent".to_owned()),
        ]);
        let api = Api::with_accessors(
            vec![
                resource("example.com", "v1", "Foo", "foos"),
                resource("", "v1", "Pod", "pods"),
                resource("example.org", "v1", "Bar", "bars"),
            ],
            &pins,
        )
        .expect("named");
        assert_eq!(
            accessors(&api),
            [
                ("example.com".to_owned(), "example".to_owned()),
                ("example.org".to_owned(), "example_org".to_owned()),
                ("".to_owned(), "kube_core".to_owned()),
            ]
        );
        assert_eq!(api.groups[0].type_name.to_string(), "Example");
    }

    #[test]
    fn invalid_pins_are_errors() {
        for bad in ["Example", "type", "my-group", ""] {
            let pins = BTreeMap::from([("example.com".to_owned(), bad.to_owned())]);
            let err = Api::with_accessors(vec![resource("example.com", "v1", "Foo", "foos")], &pins)
                .expect_err("invalid pin");
            let text = err.to_string();
            assert!(
                text.starts_with("failed to pin the accessor of group \"example.com\""),
                "{text}"
            );
            assert!(text.contains("snake-case Rust identifier"), "{text}");
        }
    }

    #[test]
    fn colliding_accessors_are_errors_naming_both_groups() {
        let err = Api::new(vec![
            resource("my-group.io", "v1", "Foo", "foos"),
            resource("my_group.io", "v1", "Bar", "bars"),
        ])
        .expect_err("collision");
        let text = err.to_string();
        assert!(text.contains("\"my-group.io\" and \"my_group.io\""), "{text}");
        assert!(text.contains("`my_group_io`"), "{text}");
        assert!(text.contains("--group-accessor my_group.io=<name>"), "{text}");

        let pins = BTreeMap::from([("example.com".to_owned(), "networking".to_owned())]);
        let err = Api::with_accessors(
            vec![
                resource("example.com", "v1", "Foo", "foos"),
                resource("networking.k8s.io", "v1", "Ingress", "ingresses"),
            ],
            &pins,
        )
        .expect_err("pinned collision");
        let text = err.to_string();
        assert!(
            text.contains("\"example.com\" and \"networking.k8s.io\": both map to `networking`"),
            "{text}"
        );
    }

    #[test]
    fn groups_and_versions_are_gated_on_what_their_resources_share() {
        let gated = |r: Resource, cfgs: Vec<syn::Meta>| r.with_cfgs(cfgs);
        let a = gated(
            resource("g", "v1", "A", "as"),
            vec![syn::parse_quote!(feature = "g"), syn::parse_quote!(x)],
        );
        let b = gated(
            resource("g", "v1", "B", "bs"),
            vec![syn::parse_quote!(feature = "g"), syn::parse_quote!(y)],
        );
        let c = gated(
            resource("g", "v1", "C", "cs"),
            vec![syn::parse_quote!(feature = "g")],
        );
        let text = |t: TokenStream| t.to_string().replace(' ', "");
        assert_eq!(
            text(shared_cfg_attrs([&a, &b])),
            "#[cfg(feature=\"g\")]#[cfg(any(x,y))]"
        );
        assert_eq!(text(shared_cfg_attrs([&a, &c])), "#[cfg(feature=\"g\")]");
        assert_eq!(text(shared_cfg_attrs([&a])), "#[cfg(feature=\"g\")]#[cfg(x)]");
        let one = gated(
            resource("g", "v1", "E", "es"),
            vec![syn::parse_quote!(feature = "g"), syn::parse_quote!(any(x, y))],
        );
        let two = gated(
            resource("g", "v1", "F", "fs"),
            vec![syn::parse_quote!(feature = "g"), syn::parse_quote!(any(y, z))],
        );
        assert_eq!(
            text(shared_cfg_attrs([&one, &two])),
            "#[cfg(feature=\"g\")]#[cfg(any(x,y,z))]"
        );
        let plain = resource("g", "v1", "D", "ds");
        assert!(shared_cfg_attrs([&a, &plain]).is_empty());
    }

    #[test]
    fn duplicate_method_names_are_errors() {
        let err = Api::new(vec![
            resource("example.com", "v1", "Foo", "foos"),
            resource("example.com", "v1", "Other", "foos"),
        ])
        .expect_err("collision");
        assert!(err.to_string().contains("both map to `foos`"), "{err}");
    }
}
