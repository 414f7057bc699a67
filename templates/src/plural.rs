//! The plural of a kind when none is given, inferred as kube-derive 5 infers it, so generated
//! informers request the same URL the `CustomResource` derive serves. The one implementation
//! of the rule, used by `informer-gen` and by `#[derive(Informer)]`.

/// The plural kube-derive infers for `kind` (or for `singular` when given): the singular is
/// the lowercased kind; a singular ending in `s`, `x`, `z`, `ch` or `sh` gets `es`; one ending
/// in a consonant followed by `y` has the `y` replaced by `ies`; any other gets `s`.
/// Irregular plurals (`Endpoints`) must be given explicitly, as with kube-derive.
pub fn infer_plural(kind: &str, singular: Option<&str>) -> String {
    let singular = singular.map_or_else(|| kind.to_ascii_lowercase(), str::to_owned);
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| singular.ends_with(end))
    {
        return format!("{singular}es");
    }
    if let Some(stem) = singular.strip_suffix('y')
        && let Some(before) = stem.chars().last()
        && !matches!(before, 'a' | 'e' | 'i' | 'o' | 'u')
    {
        return format!("{stem}ies");
    }
    format!("{singular}s")
}

#[cfg(test)]
mod tests {
    use super::infer_plural;

    #[test]
    fn regular_plurals() {
        assert_eq!(infer_plural("Foo", None), "foos");
        assert_eq!(infer_plural("Day", None), "days");
        assert_eq!(infer_plural("CronTab", None), "crontabs");
    }

    #[test]
    fn es_and_ies_plurals() {
        assert_eq!(infer_plural("Box", None), "boxes");
        assert_eq!(infer_plural("Class", None), "classes");
        assert_eq!(infer_plural("Quiz", None), "quizes");
        assert_eq!(infer_plural("Match", None), "matches");
        assert_eq!(infer_plural("Mesh", None), "meshes");
        assert_eq!(infer_plural("Policy", None), "policies");
        assert_eq!(infer_plural("NetworkPolicy", None), "networkpolicies");
    }

    #[test]
    fn irregular_kinds_follow_the_same_rules() {
        assert_eq!(infer_plural("Endpoints", None), "endpointses");
        assert_eq!(infer_plural("Y", None), "ys");
        assert_eq!(infer_plural("Foo", Some("fu")), "fus");
    }
}
