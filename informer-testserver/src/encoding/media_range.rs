//! One media range of an `Accept` header (`application/json;as=Table;g=meta.k8s.io;v=v1;q=0.9`):
//! its type, subtype, parameters and quality, and the order kube-apiserver tries them in.

/// A media range with its parameters.
pub(crate) struct MediaRange<'a> {
    /// The type (`application`, `*`).
    pub(crate) kind: &'a str,
    /// The subtype (`json`, `yaml`, `vnd.kubernetes.protobuf`, `*`).
    pub(crate) subtype: &'a str,
    /// The parameters but `q`, as written.
    pub(crate) params: Vec<(&'a str, &'a str)>,
    /// The quality (`q`, 1 when absent, 0 when unreadable).
    pub(crate) q: f32,
}

impl<'a> MediaRange<'a> {
    /// The media range of one comma-separated part of `Accept`; `None` when it names no media
    /// type (a type without a subtype is not one: only `*` stands for `*/*`).
    pub(crate) fn parse(text: &'a str) -> Option<Self> {
        let mut parts = text.split(';').map(str::trim);
        let media = parts.next().filter(|m| !m.is_empty())?;
        let (kind, subtype) = match media.split_once('/') {
            Some(parts) => parts,
            None if media == "*" => ("*", "*"),
            None => return None,
        };
        let mut range = Self {
            kind: kind.trim(),
            subtype: subtype.trim(),
            params: Vec::new(),
            q: 1.0,
        };
        for part in parts.filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            let (k, v) = (k.trim(), v.trim().trim_matches('"'));
            if k.eq_ignore_ascii_case("q") {
                range.q = v.parse::<f32>().ok().filter(|q| q.is_finite()).unwrap_or(0.0);
            } else {
                range.params.push((k, v));
            }
        }
        Some(range)
    }

    /// The ranges of a whole `Accept` header, in the order they are tried: by quality, then
    /// the more specific (fewer wildcards) first.
    pub(crate) fn all_of(accept: &'a str) -> Vec<Self> {
        let mut ranges: Vec<Self> = accept.split(',').filter_map(Self::parse).collect();
        ranges.sort_by(|a, b| {
            b.q.total_cmp(&a.q)
                .then_with(|| a.wildcards().cmp(&b.wildcards()))
        });
        ranges
    }

    /// The value of a parameter (its name in any case).
    pub(crate) fn param(&self, name: &str) -> Option<&'a str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }

    /// Number of wildcards: fewer is more specific.
    pub(crate) fn wildcards(&self) -> u8 {
        u8::from(self.kind == "*") + u8::from(self.subtype == "*")
    }
}
