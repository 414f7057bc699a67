//! Memory of a scoped cache against an unscoped one (`--only scoped`): the same pods served
//! to our factory's informer of every pod and to its informer of a scope that selects a tenth
//! of them by label (`app in (app-00,…,app-04)`, 5 of the 50 apps), each in a child process
//! of its own (see [`crate::rss`]). The server answers the scope's `labelSelector` with
//! pages of the selected pods only, as an API server would, so the scoped process neither
//! receives nor decodes the other nine tenths.

use std::sync::Arc;

use crate::{
    generator::PodGenerator,
    render::{NAMESPACES, Rendered, SEED},
    rss::{self, Consumer, RssOutcome},
    scope::{apps_in_scope, scope},
    server::Server,
};

/// The memory of both caches, with and without `managedFields`.
pub(crate) struct ScopedOutcome {
    /// Whether `managedFields` were stripped.
    pub(crate) strip_managed_fields: bool,
    /// The informer of every pod.
    pub(crate) unscoped: RssOutcome,
    /// The informer of the scope.
    pub(crate) scoped: RssOutcome,
}

/// Serves `pods` pods with the scope's selection and measures both caches in child processes,
/// with and without `managedFields`.
///
/// # Errors
///
/// A child that failed, or cached another number of pods than it should.
pub(crate) fn run(pods: usize) -> Result<Vec<ScopedOutcome>, String> {
    let generator = PodGenerator::new(SEED, NAMESPACES);
    let in_scope = apps_in_scope();
    let selector = scope().selected_labels().to_string();
    let rendered =
        Rendered::with_selection(pods, &selector, |index| in_scope.contains(&generator.app(index)));
    let selected = rendered
        .selection(&selector)
        .map_or(0, |selection| selection.pods);
    let server = Server::start(Arc::new(rendered)).map_err(|err| format!("the bench server: {err}"))?;
    let outcomes = [false, true]
        .into_iter()
        .map(|strip_managed_fields| {
            Ok(ScopedOutcome {
                strip_managed_fields,
                unscoped: rss::measure(server.url(), Consumer::Ours, strip_managed_fields, pods)?,
                scoped: rss::measure(server.url(), Consumer::OursScoped, strip_managed_fields, selected)?,
            })
        })
        .collect();
    server.stop();
    eprintln!("scoped caches done");
    outcomes
}

const MIB: f64 = 1024.0 * 1024.0;

/// The table of [`run`]'s outcomes.
pub(crate) fn markdown(outcomes: &[ScopedOutcome]) -> String {
    let mut out = String::from(
        "\n### Scoped caches: every pod against a scope of a tenth of them (label selector on the server; own process each; RSS and peak RSS over a baseline after the sync, and the process's CPU time of the sync)\n\n\
         | managedFields | cache | pods cached | RSS | peak RSS | RSS per cached pod | RSS against every pod | sync CPU (user + sys) |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for outcome in outcomes {
        let kept = if outcome.strip_managed_fields {
            "stripped"
        } else {
            "kept"
        };
        let held = |o: &RssOutcome| o.rss.saturating_sub(o.baseline_rss) as f64;
        for (name, measured) in [
            ("every pod", &outcome.unscoped),
            ("scope: app in (5 of 50 apps)", &outcome.scoped),
        ] {
            out.push_str(&format!(
                "| {kept} | {name} | {} | {:.1} MiB | {:.1} MiB | {:.1} KiB | {:.2}x | {:.2} + {:.2} s |\n",
                measured.objects,
                held(measured) / MIB,
                measured.hwm.saturating_sub(measured.baseline_rss) as f64 / MIB,
                measured.retained_per_object() as f64 / 1024.0,
                held(measured) / held(&outcome.unscoped).max(1.0),
                measured.sync_user_micros as f64 / 1e6,
                measured.sync_system_micros as f64 / 1e6,
            ));
        }
    }
    out
}
