//! The completion indexes of an `Indexed` job, and their text form in
//! `status.completedIndexes` (`"0-2,5"`).

use std::collections::BTreeSet;

/// Parses `"1,3-5"` into its indexes; parts that are not indexes are skipped.
pub(crate) fn parse(text: Option<&str>) -> BTreeSet<i32> {
    let mut indexes = BTreeSet::new();
    for part in text
        .unwrap_or_default()
        .split(',')
        .filter(|part| !part.is_empty())
    {
        match part.split_once('-') {
            Some((first, last)) => {
                if let (Ok(first), Ok(last)) = (first.parse::<i32>(), last.parse::<i32>()) {
                    indexes.extend(first..=last);
                }
            }
            None => indexes.extend(part.parse::<i32>().ok()),
        }
    }
    indexes
}

/// Formats indexes as kube does: ascending, runs of consecutive indexes as `first-last`.
pub(crate) fn format(indexes: &BTreeSet<i32>) -> String {
    let mut runs: Vec<(i32, i32)> = Vec::new();
    for &index in indexes {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == index => *last = index,
            _ => runs.push((index, index)),
        }
    }
    let parts: Vec<String> = runs
        .into_iter()
        .map(|(first, last)| {
            if first == last {
                first.to_string()
            } else {
                format!("{first}-{last}")
            }
        })
        .collect();
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    // kube: pkg/controller/job/indexed_job_utils_test.go, TestCalculateSucceededIndexes, and
    // the interval form of `status.completedIndexes`.
    #[test]
    fn indexes_round_trip_through_their_text_form() {
        let indexes = parse(Some("0-2,5,7-8"));
        assert_eq!(indexes, BTreeSet::from([0, 1, 2, 5, 7, 8]));
        assert_eq!(format(&indexes), "0-2,5,7-8");
        assert_eq!(format(&BTreeSet::new()), "");
        assert_eq!(format(&BTreeSet::from([3])), "3");
        assert!(parse(None).is_empty());
    }
}
