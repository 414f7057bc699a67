//! Did-you-mean suggestions for unknown keys.

/// The known key closest to `unknown`, if it is close enough to be a likely typo.
pub(crate) fn did_you_mean(unknown: &str, known: &[&'static str]) -> Option<&'static str> {
    known
        .iter()
        .map(|candidate| (edit_distance(unknown, candidate), *candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len().max(unknown.len()) / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// The Damerau–Levenshtein distance (with adjacent transpositions) between `a` and `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    if let Some(first) = rows.first_mut() {
        for (j, cell) in first.iter_mut().enumerate() {
            *cell = j;
        }
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::{did_you_mean, edit_distance};
    use crate::attr::symbol::INFORMER_KEYS;

    #[test]
    fn typos_get_suggestions() {
        assert_eq!(did_you_mean("namepsaced", INFORMER_KEYS), Some("namespaced"));
        assert_eq!(did_you_mean("gruop", INFORMER_KEYS), Some("group"));
        assert_eq!(did_you_mean("verison", INFORMER_KEYS), Some("version"));
        assert_eq!(did_you_mean("plurals", INFORMER_KEYS), Some("plural"));
        assert_eq!(did_you_mean("colour", INFORMER_KEYS), None);
        assert_eq!(did_you_mean("", INFORMER_KEYS), None);
    }

    #[test]
    fn transpositions_cost_one() {
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kind", "kind"), 0);
    }
}
