//! The tables of the hand-over phase: the steps' times, and the processes' memory.

use std::fmt::Write as _;

use super::{Outcome, SHARDS, Step, child::ProcessMemory, observer::POLL};

const MIB: f64 = 1024.0 * 1024.0;

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB)
}

fn secs(value: Option<std::time::Duration>) -> String {
    value.map_or_else(|| "timed out".to_owned(), |d| format!("{:.2} s", d.as_secs_f64()))
}

/// The later part of a step: from the Lease changing hands to the ring balanced.
fn after_lease(step: &Step) -> String {
    match (step.lease, step.balanced) {
        (Some(lease), Some(balanced)) => format!("{:.2} s", balanced.saturating_sub(lease).as_secs_f64()),
        _ => "n/a".into(),
    }
}

/// Both tables.
pub(crate) fn markdown(outcome: &Outcome) -> String {
    let settings = &outcome.settings;
    let mut out = format!(
        "\n### Sharding hand-over: {} pods in the embedded test server, the sharder and {SHARDS} shards (own process each; Lease {} s, renew deadline {} s, retry {} s; checked every {} ms)\n\n",
        settings.pods,
        settings.leases.duration.as_secs_f64(),
        settings.leases.renew_deadline().as_secs_f64(),
        settings.leases.retry_period().as_secs_f64(),
        POLL.as_millis(),
    );
    let _ = writeln!(
        out,
        "Pods created in {:.1} s; the {SHARDS} shards held their Leases {} after they started.\n",
        outcome.created.as_secs_f64(),
        secs(outcome.shards_ready),
    );
    out.push_str(
        "| step | Lease changed hands | then balanced | total | pods moved | pods the ring moved |\n\
         |---|---:|---:|---:|---:|---:|\n",
    );
    let initial = &outcome.initial;
    let _ = writeln!(
        out,
        "| initial assignment (sharder start → every pod on its shard of {SHARDS}) | | | {} | {} | {} |",
        secs(initial.balanced),
        initial.moved,
        initial.expected,
    );
    let join = &outcome.join;
    let _ = writeln!(
        out,
        "| join of shard-{SHARDS} (start → its Lease held → no drain label, every pod on its shard of {}) | {} | {} | {} | {} | {} |",
        SHARDS + 1,
        secs(join.lease),
        after_lease(join),
        secs(join.balanced),
        join.moved,
        join.expected,
    );
    let kill = &outcome.kill;
    let _ = writeln!(
        out,
        "| kill of shard-0 (SIGKILL → the sharder holds its Lease → every pod on its shard of {SHARDS}) | {} | {} | {} | {} | {} |",
        secs(kill.lease),
        after_lease(kill),
        secs(kill.balanced),
        kill.moved,
        kill.expected,
    );
    let later = [
        (
            "graceful stop of shard-1 (stdin closed → its Lease released → every pod on its shard of 3)",
            &outcome.stop,
        ),
        (
            "same-name restart of shard-1, stopped gracefully (start → its Lease held → every pod on its shard of 4)",
            &outcome.restart_stopped,
        ),
        (
            "same-name restart of shard-0, killed (start → its Lease held → every pod on its shard of 5)",
            &outcome.restart_killed,
        ),
    ];
    for (what, step) in later {
        let _ = writeln!(
            out,
            "| {what} | {} | {} | {} | {} | {} |",
            secs(step.lease),
            after_lease(step),
            secs(step.balanced),
            step.moved,
            step.expected,
        );
    }
    if let Ok(ProcessMemory {
        sharder: Some(counts),
        ..
    }) = &outcome.sharder
    {
        let _ = writeln!(
            out,
            "\nThe sharder's counters over the run: {} assignments, {} drains, {} direct moves, {} Lease acquisitions, {} Leases given back, {} conflicts (409, re-checked), {} other errors.",
            counts.assigned,
            counts.drains,
            counts.moves,
            counts.lease_acquisitions,
            counts.lease_hand_backs,
            counts.conflicts,
            counts.errors,
        );
    }
    let _ = writeln!(out, "\nShard Leases at the end: {}.", outcome.leases.join("; "));
    out.push_str(
        "\n| process | pods it was given at the end | RSS before its work | RSS at the end | peak RSS | reconciles |\n\
         |---|---:|---:|---:|---:|---:|\n",
    );
    let rows = std::iter::once(("sharder (metadata-only informers)", &outcome.sharder)).chain(
        outcome
            .shards
            .iter()
            .map(|(name, memory)| (name.as_str(), memory)),
    );
    for (name, memory) in rows {
        match memory {
            Ok(ProcessMemory {
                baseline_rss,
                rss,
                hwm,
                reconciles,
                ..
            }) => {
                let reconciles = if std::ptr::eq(memory, &outcome.sharder) {
                    "n/a".to_owned()
                } else {
                    reconciles.to_string()
                };
                let _ = writeln!(
                    out,
                    "| {name} | {} | {} | {} | {} | {reconciles} |",
                    outcome
                        .final_shares
                        .get(name)
                        .map_or_else(|| "all".to_owned(), ToString::to_string),
                    mib(*baseline_rss),
                    mib(*rss),
                    mib(*hwm),
                );
            }
            Err(err) => {
                let _ = writeln!(out, "| {name} | failed: {} | | | | |", err.replace('|', "/"));
            }
        }
    }
    out
}
