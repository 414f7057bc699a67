//! Container logs a test registers, and how `pods/log` renders them: `tailLines`,
//! `timestamps`, `limitBytes`, `sinceSeconds`.

use std::collections::HashMap;

/// One line of a log (with its newline, unless it is the unfinished last one) and when it was
/// written.
#[derive(Debug, Clone)]
pub(crate) struct LogLine {
    pub(crate) at: jiff::Timestamp,
    pub(crate) text: String,
}

/// The logs of the containers, by namespace, pod and container; current and previous run.
#[derive(Debug, Default)]
pub(crate) struct Logs {
    current: HashMap<(String, String, String), Vec<LogLine>>,
    previous: HashMap<(String, String, String), Vec<LogLine>>,
}

/// The options of a `pods/log` request that shape the text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LogOptions {
    pub(crate) tail_lines: Option<usize>,
    pub(crate) timestamps: bool,
    pub(crate) limit_bytes: Option<usize>,
    pub(crate) since_seconds: Option<i64>,
}

fn key(namespace: &str, pod: &str, container: &str) -> (String, String, String) {
    (namespace.to_string(), pod.to_string(), container.to_string())
}

fn lines_of(text: &str) -> Vec<LogLine> {
    let at = jiff::Timestamp::now();
    text.split_inclusive('\n')
        .map(|line| LogLine {
            at,
            text: line.to_string(),
        })
        .collect()
}

impl Logs {
    /// Replaces the log of a container's current (or previous) run.
    pub(crate) fn set(&mut self, namespace: &str, pod: &str, container: &str, text: &str, previous: bool) {
        let logs = if previous {
            &mut self.previous
        } else {
            &mut self.current
        };
        logs.insert(key(namespace, pod, container), lines_of(text));
    }

    /// Appends to the log of a container's current run.
    pub(crate) fn append(&mut self, namespace: &str, pod: &str, container: &str, text: &str) {
        let lines = self.current.entry(key(namespace, pod, container)).or_default();
        let mut new = lines_of(text);
        if let (Some(last), Some(first)) = (lines.last_mut(), new.first())
            && !last.text.ends_with('\n')
        {
            last.text.push_str(&first.text);
            new.remove(0);
        }
        lines.extend(new);
    }

    /// The lines of a container's log, `None` when nothing was registered.
    pub(crate) fn lines(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        previous: bool,
    ) -> Option<&[LogLine]> {
        let logs = if previous { &self.previous } else { &self.current };
        logs.get(&key(namespace, pod, container)).map(Vec::as_slice)
    }
}

/// The lines `options` select, as text: the last `tail_lines` of those written in the last
/// `since_seconds`, each after its RFC 3339 time with `timestamps`, cut at `limit_bytes`.
pub(crate) fn render(lines: &[LogLine], options: &LogOptions) -> String {
    let since = options
        .since_seconds
        .map(|s| jiff::Timestamp::now().as_second().saturating_sub(s));
    let selected: Vec<&LogLine> = lines
        .iter()
        .filter(|l| since.is_none_or(|since| l.at.as_second() >= since))
        .collect();
    let skip = options
        .tail_lines
        .map(|tail| selected.len().saturating_sub(tail))
        .unwrap_or(0);
    let text: String = selected[skip..]
        .iter()
        .map(|line| format_line(line, options.timestamps))
        .collect();
    cut(text, options.limit_bytes)
}

/// One line as the log shows it.
pub(crate) fn format_line(line: &LogLine, timestamps: bool) -> String {
    if timestamps {
        format!("{} {}", line.at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), line.text)
    } else {
        line.text.clone()
    }
}

/// `text` cut to at most `limit` bytes (on a character boundary).
pub(crate) fn cut(mut text: String, limit: Option<usize>) -> String {
    if let Some(limit) = limit
        && text.len() > limit
    {
        let mut end = limit;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_timestamps_and_limits() {
        let mut logs = Logs::default();
        logs.set("d", "p", "c", "one\ntwo\n", false);
        logs.append("d", "p", "c", "thr");
        logs.append("d", "p", "c", "ee\n");
        let lines = logs.lines("d", "p", "c", false).unwrap_or_default();
        assert_eq!(render(lines, &LogOptions::default()), "one\ntwo\nthree\n");
        let tail = LogOptions {
            tail_lines: Some(2),
            ..LogOptions::default()
        };
        assert_eq!(render(lines, &tail), "two\nthree\n");
        let limited = LogOptions {
            limit_bytes: Some(5),
            ..LogOptions::default()
        };
        assert_eq!(render(lines, &limited), "one\nt");
        let stamped = LogOptions {
            timestamps: true,
            tail_lines: Some(1),
            ..LogOptions::default()
        };
        let text = render(lines, &stamped);
        assert!(text.ends_with("Z three\n") && text.contains('T'), "{text}");
        assert!(logs.lines("d", "p", "c", true).is_none());
    }
}
