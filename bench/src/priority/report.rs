//! The latency table: each queue's live-change latencies and list time, and after / before.

use std::fmt::Write as _;

use super::{LIVE_CHANGES, Outcome, Queue};

/// A duration in seconds, in ms below one second.
fn duration(seconds: Option<f64>) -> String {
    match seconds {
        None => "n/a".into(),
        Some(s) if s < 1.0 => format!("{:.1} ms", s * 1000.0),
        Some(s) => format!("{s:.2} s"),
    }
}

fn ratio(after: Option<f64>, before: Option<f64>) -> String {
    match (after, before) {
        (Some(after), Some(before)) if before > 0.0 => format!("{:.4}x", after / before),
        _ => "n/a".into(),
    }
}

/// The smallest, the median and the largest latency of a run.
fn spread(outcome: &Outcome) -> [Option<f64>; 3] {
    let Ok(measured) = &outcome.measured else {
        return [None; 3];
    };
    let mut sorted = measured.latencies.clone();
    sorted.sort_by(f64::total_cmp);
    [
        sorted.first().copied(),
        sorted.get(sorted.len() / 2).copied(),
        sorted.last().copied(),
    ]
}

fn list_seconds(outcome: &Outcome) -> Option<f64> {
    outcome.measured.as_ref().ok()?.list_seconds
}

/// Pods reconciled per second over the whole list.
fn rate(outcome: &Outcome) -> Option<f64> {
    let measured = outcome.measured.as_ref().ok()?;
    Some(measured.reconciled as f64 / measured.list_seconds?.max(f64::MIN_POSITIVE))
}

/// The table, or nothing if the phase did not run.
pub(crate) fn markdown(outcomes: &[Outcome]) -> String {
    let Some(first) = outcomes.first() else {
        return String::new();
    };
    let settings = first.settings;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### Priority queue: latency of a live change made while a controller works through its initial list ({} pods, at most {} reconciles at once, {} ms of simulated I/O each; {LIVE_CHANGES} pods of the list changed after {} reconciles; own process each)\n",
        settings.objects,
        settings.concurrency,
        settings.work.as_millis(),
        settings.release_after()
    );
    let _ = writeln!(
        out,
        "| queue | changes seen | latency min | latency median | latency max | initial list reconciled in | pods/s |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for outcome in outcomes {
        let [min, median, max] = spread(outcome);
        let seen = outcome.measured.as_ref().map_or(0, |m| m.latencies.len());
        let _ = writeln!(
            out,
            "| {} | {seen} | {} | {} | {} | {} | {} |",
            outcome.queue.title(),
            duration(min),
            duration(median),
            duration(max),
            duration(list_seconds(outcome)),
            rate(outcome).map_or_else(|| "n/a".into(), |r| format!("{r:.0}")),
        );
    }
    let find = |queue| outcomes.iter().find(|o| o.queue == queue);
    if let (Some(before), Some(after)) = (find(Queue::Fifo), find(Queue::Priority)) {
        let ([b_min, b_med, b_max], [a_min, a_med, a_max]) = (spread(before), spread(after));
        let _ = writeln!(
            out,
            "| after / before | | {} | {} | {} | {} | {} |",
            ratio(a_min, b_min),
            ratio(a_med, b_med),
            ratio(a_max, b_max),
            ratio(list_seconds(after), list_seconds(before)),
            ratio(rate(after), rate(before)),
        );
    }
    out
}
