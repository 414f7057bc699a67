//! The reconcile table: sync and reconcile phases per consumer, and ours against kube-rs.

use std::fmt::Write as _;

use super::{Consumer, Measured, Outcome, Seconds};

fn secs(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_owned(), |s| format!("{s:.2} s"))
}

fn ratio(ours: Option<f64>, kube: Option<f64>) -> String {
    match (ours, kube) {
        (Some(ours), Some(kube)) if kube > 0.0 => format!("{:.2}x", ours / kube),
        _ => "n/a".into(),
    }
}

/// Pods reconciled per second of the reconcile phase.
fn rate(outcome: &Outcome) -> Option<f64> {
    let measured = outcome.measured.as_ref().ok()?;
    let wall = measured.reconcile?.wall;
    Some(measured.reconciled as f64 / wall.max(f64::MIN_POSITIVE))
}

fn phase(outcome: &Outcome, pick: impl Fn(&Measured) -> Option<Seconds>) -> Option<Seconds> {
    outcome.measured.as_ref().ok().and_then(pick)
}

/// The table, or nothing if the phase did not run.
pub(crate) fn markdown(outcomes: &[Outcome]) -> String {
    let Some(first) = outcomes.first() else {
        return String::new();
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### Reconciles: {} pods, no-op reconcile returning `await_change`, at most {} at once (own process each)\n",
        first.objects, first.concurrency
    );
    let _ = writeln!(
        out,
        "| consumer | sync | sync user+sys CPU | reconcile | reconcile user+sys CPU | reconciles/s | total | total user CPU | total sys CPU |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for o in outcomes {
        row(&mut out, o);
    }
    ratios(&mut out, outcomes);
    out
}

fn row(out: &mut String, o: &Outcome) {
    let sync = phase(o, |m| m.sync);
    let reconcile = phase(o, |m| m.reconcile);
    let total = phase(o, |m| m.total);
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        o.consumer.title(),
        secs(sync.map(|s| s.wall)),
        secs(sync.map(|s| s.cpu())),
        secs(reconcile.map(|s| s.wall)),
        secs(reconcile.map(|s| s.cpu())),
        rate(o).map_or_else(|| "n/a".to_owned(), |r| format!("{:.1}k", r / 1e3)),
        secs(total.map(|s| s.wall)),
        secs(total.map(|s| s.user)),
        secs(total.map(|s| s.system)),
    );
}

fn ratios(out: &mut String, outcomes: &[Outcome]) {
    let find = |consumer: Consumer| outcomes.iter().find(|o| o.consumer == consumer);
    let (Some(ours), Some(kube)) = (find(Consumer::Ours), find(Consumer::Kube)) else {
        return;
    };
    let wall = |o: &Outcome, pick: fn(&Measured) -> Option<Seconds>| phase(o, pick).map(|s| s.wall);
    let cpu = |o: &Outcome| phase(o, |m| m.total).map(|s| s.cpu());
    let _ = writeln!(
        out,
        "\n| ours / kube-rs | sync time | reconcile time | reconciles/s | total time | total CPU |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
    let _ = writeln!(
        out,
        "| ratio | {} | {} | {} | {} | {} |",
        ratio(wall(ours, |m| m.sync), wall(kube, |m| m.sync)),
        ratio(wall(ours, |m| m.reconcile), wall(kube, |m| m.reconcile)),
        ratio(rate(ours), rate(kube)),
        ratio(wall(ours, |m| m.total), wall(kube, |m| m.total)),
        ratio(cpu(ours), cpu(kube)),
    );
}
