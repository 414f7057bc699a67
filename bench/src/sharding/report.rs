//! The tables of the sharding phase: per ring against the ring of one shard, and per shard.

use std::fmt::Write as _;

use super::{Measured, Outcome, RingOutcome};

const MIB: f64 = 1024.0 * 1024.0;

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB)
}

fn secs(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_owned(), |s| format!("{s:.2} s"))
}

fn ratio(value: Option<f64>, against: Option<f64>) -> String {
    match (value, against) {
        (Some(value), Some(against)) if against > 0.0 => format!("{:.2}x", value / against),
        _ => "n/a".into(),
    }
}

/// The shards of a ring that measured something.
fn measured(ring: &RingOutcome) -> impl Iterator<Item = &Measured> {
    ring.measured.iter().filter_map(|m| m.as_ref().ok())
}

/// The highest peak RSS of a ring's shards, in bytes.
fn peak(ring: &RingOutcome) -> Option<u64> {
    measured(ring).map(|m| m.hwm).max()
}

/// The sum of the shards' reconciles per second (`None` if a shard has none).
fn total_rate(ring: &RingOutcome) -> Option<f64> {
    ring.measured
        .iter()
        .map(|m| m.as_ref().ok().and_then(Measured::rate))
        .sum()
}

/// Every pod of the ring over the time from the first shard synced to the last shard done.
fn overall_rate(ring: &RingOutcome) -> Option<f64> {
    let first_synced = measured(ring)
        .map(|m| m.synced_at)
        .collect::<Option<Vec<f64>>>()?
        .into_iter()
        .reduce(f64::min)?;
    let last_done = measured(ring)
        .map(|m| m.done_at)
        .collect::<Option<Vec<f64>>>()?
        .into_iter()
        .reduce(f64::max)?;
    let pods: usize = measured(ring).map(|m| m.objects).sum();
    Some(pods as f64 / (last_done - first_synced).max(f64::MIN_POSITIVE))
}

/// The summary table, the per-shard table and the fixed overhead.
pub(crate) fn markdown(outcome: &Outcome) -> String {
    let settings = &outcome.settings;
    let mut out = format!(
        "\n### Sharding: {} pods over 1, 2 and 4 shards (own process each, the shards of a ring at once; managedFields stripped; {} workers, reconcile waits {} ms)\n\n",
        settings.pods,
        settings.concurrency,
        settings.work.as_millis(),
    );
    let fixed = outcome.empty.as_ref().ok().map(|m| m.hwm);
    match &outcome.empty {
        Ok(empty) => {
            let _ = writeln!(
                out,
                "Fixed overhead: the peak RSS of a shard process assigned no pod (same runtime, client, factory and controller; nothing listed but an empty page): {} (RSS before its factory: {}).\n",
                mib(empty.hwm),
                mib(empty.baseline_rss),
            );
        }
        Err(err) => {
            let _ = writeln!(out, "Fixed overhead: not measured ({err}).\n");
        }
    }
    let one = outcome.rings.iter().find(|ring| ring.shards == 1);
    let one_peak = one.and_then(peak);
    let one_rate = one.and_then(total_rate);
    out.push_str(
        "| shards N | pods per shard (min – max) | largest share / (pods / N) | peak RSS per shard (max) | its peak over the fixed overhead per cached pod | N=1 peak / N | peak / (N=1 peak / N) | goal: 1.1 × (N=1 / N) + fixed | within the goal | peak / (N=1 peak × its share of the pods) | slowest sync | total reconciles/s (sum over shards) | N × N=1 | total / (N × N=1) | all pods / (first sync to last done) |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for ring in &outcome.rings {
        let n = ring.shards as f64;
        let share = one_peak.map(|p| p as f64 / n);
        let goal = share.zip(fixed).map(|(share, fixed)| 1.1 * share + fixed as f64);
        let ring_peak = peak(ring);
        let within = match (ring_peak, goal) {
            (Some(peak), Some(goal)) if peak as f64 <= goal => "yes",
            (Some(_), Some(_)) => "no",
            _ => "n/a",
        };
        let rate = total_rate(ring);
        let expected_rate = one_rate.map(|r| r * n);
        let largest = ring.assigned.iter().max().copied().unwrap_or_default();
        let fair_share = settings.pods as f64 / n;
        let _ = writeln!(
            out,
            "| {} | {} – {largest} | {:.2}x | {} | {} | {} | {} | {} | {within} | {} | {} | {} | {} | {} | {} |",
            ring.shards,
            ring.assigned.iter().min().copied().unwrap_or_default(),
            largest as f64 / fair_share.max(1.0),
            ring_peak.map_or_else(|| "n/a".into(), mib),
            per_pod_of_peak(ring, fixed),
            share.map_or_else(|| "n/a".into(), |s| mib(s as u64)),
            ratio(ring_peak.map(|p| p as f64), share),
            goal.map_or_else(|| "n/a".into(), |g| mib(g as u64)),
            against_own_share(ring, one_peak, settings.pods),
            secs(measured(ring).filter_map(|m| m.sync_seconds).reduce(f64::max)),
            rate.map_or_else(|| "n/a".into(), |r| format!("{r:.0}")),
            expected_rate.map_or_else(|| "n/a".into(), |r| format!("{r:.0}")),
            ratio(rate, expected_rate),
            overall_rate(ring).map_or_else(|| "n/a".into(), |r| format!("{r:.0}")),
        );
    }
    out.push_str(&per_shard(outcome));
    out
}

/// The highest peak of a ring's shards against one replica's peak scaled to the pods that
/// shard holds: what the peak would be if each cached pod cost what it costs one replica.
fn against_own_share(ring: &RingOutcome, one_peak: Option<u64>, pods: usize) -> String {
    let (Some(highest), Some(one_peak)) = (measured(ring).max_by_key(|m| m.hwm), one_peak) else {
        return "n/a".into();
    };
    let share = one_peak as f64 * highest.objects as f64 / pods.max(1) as f64;
    format!("{:.2}x", highest.hwm as f64 / share.max(1.0))
}

/// The peak RSS of the shard with the highest peak, less the fixed overhead, per pod it cached.
fn per_pod_of_peak(ring: &RingOutcome, fixed: Option<u64>) -> String {
    let Some(highest) = measured(ring).max_by_key(|m| m.hwm) else {
        return "n/a".into();
    };
    let held = highest.hwm.saturating_sub(fixed.unwrap_or_default()) as f64;
    format!("{:.1} KiB", held / highest.objects.max(1) as f64 / 1024.0)
}

/// One row per shard process.
fn per_shard(outcome: &Outcome) -> String {
    let mut out = String::from(
        "\n| shards N | shard | pods cached | RSS before the factory | RSS synced | RSS at the end | peak RSS | sync | reconcile of the initial list | reconciles/s |\n\
         |---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let rows = std::iter::once((1, &outcome.empty)).chain(
        outcome
            .rings
            .iter()
            .flat_map(|ring| ring.measured.iter().map(move |m| (ring.shards, m))),
    );
    for (shards, measured) in rows {
        match measured {
            Ok(m) => {
                let _ = writeln!(
                    out,
                    "| {shards} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    m.shard,
                    m.objects,
                    mib(m.baseline_rss),
                    mib(m.synced_rss),
                    mib(m.rss),
                    mib(m.hwm),
                    secs(m.sync_seconds),
                    secs(m.reconcile_seconds),
                    m.rate().map_or_else(|| "n/a".into(), |r| format!("{r:.0}")),
                );
            }
            Err(err) => {
                let _ = writeln!(
                    out,
                    "| {shards} | failed: {} | | | | | | | | |",
                    err.replace('|', "/")
                );
            }
        }
    }
    out
}
