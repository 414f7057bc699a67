//! Results and the markdown tables printed at the end of a run.

use std::{fmt::Write as _, time::Duration};

use crate::{
    floor_protobuf,
    listers::ListerOutcome,
    ours::{JSON_PREFIX, PROTOBUF_PREFIX, SKIPPING_PREFIX},
    outcome::Outcome,
    rss::{self, RssOutcome},
};

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn opt<T>(value: Option<T>, show: impl Fn(T) -> String) -> String {
    value.map_or_else(|| "n/a".to_owned(), show)
}

fn ratio(ours: Option<f64>, other: Option<f64>) -> String {
    match (ours, other) {
        (Some(ours), Some(other)) if other > 0.0 => format!("{:.2}x", ours / other),
        _ => "n/a".into(),
    }
}

fn kib(bytes: u64) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

/// The tables of a run.
pub(crate) struct Report<'a> {
    /// Pods listed.
    pub(crate) pods: usize,
    /// MODIFIED events watched.
    pub(crate) events: usize,
    /// Size of the list pages and of the event lines.
    pub(crate) bytes: (usize, usize),
    /// Size of the protobuf list pages and of the protobuf watch frames.
    pub(crate) protobuf_bytes: (usize, usize),
    /// How many times every consumer ran (the tables show the last pass).
    pub(crate) passes: usize,
    /// The floor, kube-rs, and ours.
    pub(crate) outcomes: &'a [Outcome],
    /// Consumers that could not be measured, with the reason.
    pub(crate) not_measured: &'a [(String, String)],
    /// Memory per cached object.
    pub(crate) rss: &'a [Result<RssOutcome, String>],
    /// Lister queries.
    pub(crate) listers: &'a [ListerOutcome],
}

impl Report<'_> {
    /// The report as markdown.
    pub(crate) fn markdown(&self) -> String {
        let mut out = String::new();
        self.sync_and_watch_table(&mut out);
        self.ratios_table(&mut out);
        if !self.rss.is_empty() {
            self.memory_table(&mut out);
        }
        self.goals_table(&mut out);
        if !self.listers.is_empty() {
            out.push_str(&crate::listers::markdown(self.listers));
        }
        out
    }

    /// Sync and watch times, CPU and event rates of every consumer.
    fn sync_and_watch_table(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "### Sync and watch: {} pods ({:.1} MB of JSON list pages, {:.1} KB per pod; {:.1} MB in protobuf, {:.1} KB per pod), {} MODIFIED events ({:.1} MB of JSON lines; {:.1} MB of protobuf frames); pass {} of {}\n",
            self.pods,
            self.bytes.0 as f64 / 1e6,
            self.bytes.0 as f64 / 1e3 / self.pods.max(1) as f64,
            self.protobuf_bytes.0 as f64 / 1e6,
            self.protobuf_bytes.0 as f64 / 1e3 / self.pods.max(1) as f64,
            self.events,
            self.bytes.1 as f64 / 1e6,
            self.protobuf_bytes.1 as f64 / 1e6,
            self.passes,
            self.passes,
        );
        let _ = writeln!(
            out,
            "| consumer | sync | sync user CPU | sync sys CPU | watch | watch user+sys CPU | CPU per event | events/s |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
        for o in self.outcomes {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                o.name,
                opt(o.sync, |p| secs(p.wall)),
                opt(o.sync, |p| secs(p.cpu.user)),
                opt(o.sync, |p| secs(p.cpu.system)),
                opt(o.watch, |p| secs(p.wall)),
                opt(o.watch, |p| secs(p.cpu.total())),
                opt(o.cpu_per_event(self.events), |us| format!("{us:.0} µs")),
                opt(o.events_per_second(self.events), |r| format!("{:.1}k", r / 1e3)),
            );
        }
        for (name, reason) in self.not_measured {
            let _ = writeln!(out, "| {name} | not measured: {reason} | | | | | | |");
        }
    }

    /// The JSON floor's outcome, if it ran.
    fn json_floor(&self) -> Option<&Outcome> {
        self.outcomes.iter().find(|o| o.name.starts_with("floor:"))
    }

    /// kube-rs's outcome on the benchmark's multi-thread runtime, if it ran.
    fn kube(&self) -> Option<&Outcome> {
        self.outcomes
            .iter()
            .find(|o| o.name == "kube-rs 5: watcher + reflector")
    }

    /// Each of our consumers against the JSON floor and kube-rs.
    fn ratios_table(&self, out: &mut String) {
        let floor = self.json_floor();
        let kube = self.kube();
        let sync_wall = |o: Option<&Outcome>| o.and_then(|o| o.sync).map(|p| p.wall.as_secs_f64());
        let sync_cpu = |o: Option<&Outcome>| o.and_then(|o| o.sync).map(|p| p.cpu.total().as_secs_f64());
        let rate = |o: Option<&Outcome>| o.and_then(|o| o.events_per_second(self.events));
        let per_event = |o: Option<&Outcome>| o.and_then(|o| o.cpu_per_event(self.events));
        let _ = writeln!(
            out,
            "\n| ours | sync time / JSON floor | sync time / kube-rs | sync CPU / JSON floor | sync CPU / kube-rs | CPU per event / JSON floor | events/s / JSON floor | events/s / kube-rs |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
        for o in self.outcomes.iter().filter(|o| o.name.starts_with("ours")) {
            let o = Some(o);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                o.map(|o| o.name.as_str()).unwrap_or_default(),
                ratio(sync_wall(o), sync_wall(floor)),
                ratio(sync_wall(o), sync_wall(kube)),
                ratio(sync_cpu(o), sync_cpu(floor)),
                ratio(sync_cpu(o), sync_cpu(kube)),
                ratio(per_event(o), per_event(floor)),
                ratio(rate(o), rate(floor)),
                ratio(rate(o), rate(kube)),
            );
        }
    }

    /// Memory per cached pod of each consumer.
    fn memory_table(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "\n### Memory per cached pod (own process each; after sync, RSS and peak RSS over a baseline, the process's user + system CPU time of the sync (system time is mostly the first touch of fresh memory, which a VM's host makes costly); a relist after a 410 peaks at the last column times what is held)\n"
        );
        let _ = writeln!(
            out,
            "| consumer | managedFields | objects | RSS per pod | peak RSS per pod | sync CPU per pod (user + sys) | relist peak / held |"
        );
        let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|");
        for result in self.rss {
            match result {
                Ok(r) => {
                    let (sync_user, sync_system) = r.sync_cpu_per_object();
                    let relist = r
                        .relist_peak_ratio()
                        .map_or_else(String::new, |ratio| format!("{ratio:.2}x"));
                    let _ = writeln!(
                        out,
                        "| {} | {} | {} | {} | {} | {:.0} + {:.0} µs | {relist} |",
                        rss::label(&r.consumer),
                        if r.strip_managed_fields {
                            "stripped"
                        } else {
                            "kept"
                        },
                        r.objects,
                        kib(r.retained_per_object()),
                        kib(r.peak_per_object()),
                        sync_user,
                        sync_system,
                    );
                }
                Err(err) => {
                    let _ = writeln!(out, "| failed: {} | | | | | | |", err.replace('\n', " "));
                }
            }
        }
    }

    /// The memory per pod of `consumer` (as its child reports it), with `managedFields`
    /// stripped or kept, at the run's size.
    fn memory_per_pod(&self, consumer: &str, stripped: bool) -> Option<f64> {
        self.rss
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .find(|r| r.consumer == consumer && r.strip_managed_fields == stripped && r.objects == self.pods)
            .map(|r| r.retained_per_object() as f64)
    }

    /// The goals of reading built-in types in protobuf: our informer over protobuf against the
    /// JSON floor and kube-rs (events/s, CPU per event) and against itself over JSON and
    /// kube-rs (memory per pod); then the protobuf floor against the JSON floor.
    fn goals_table(&self, out: &mut String) {
        let floor = self.json_floor();
        let kube = self.kube();
        let protobuf_floor = self.outcomes.iter().find(|o| o.name == floor_protobuf::NAME);
        let rate = |o: Option<&Outcome>| o.and_then(|o| o.events_per_second(self.events));
        let per_event = |o: Option<&Outcome>| o.and_then(|o| o.cpu_per_event(self.events));
        let sync_cpu = |o: Option<&Outcome>| o.and_then(|o| o.sync).map(|p| p.cpu.total().as_secs_f64());
        let mut rows = Vec::new();
        for prefix in [PROTOBUF_PREFIX, JSON_PREFIX] {
            for handlers in [1, 3] {
                let name = format!("{prefix}factory informer, {handlers} handler(s)");
                let Some(ours) = self.outcomes.iter().find(|o| o.name == name) else {
                    continue;
                };
                let ours = Some(ours);
                let goal = |goal| {
                    if prefix == PROTOBUF_PREFIX {
                        goal
                    } else {
                        Goal::None
                    }
                };
                rows.push(GoalRow {
                    what: format!("{name}: events/s / JSON floor"),
                    figure: quotient(rate(ours), rate(floor)),
                    goal: goal(Goal::AtLeast(1.3)),
                });
                rows.push(GoalRow {
                    what: format!("{name}: events/s / kube-rs"),
                    figure: quotient(rate(ours), rate(kube)),
                    goal: goal(Goal::AtLeast(2.5)),
                });
                rows.push(GoalRow {
                    what: format!("{name}: CPU per event / JSON floor"),
                    figure: quotient(per_event(ours), per_event(floor)),
                    goal: goal(Goal::AtMost(0.8)),
                });
            }
        }
        for (stripped, fields) in [(false, "kept"), (true, "stripped")] {
            let ours = self.memory_per_pod("ours", stripped);
            rows.push(GoalRow {
                what: format!(
                    "ours (protobuf, default): memory per pod / ours (JSON), managedFields {fields}"
                ),
                figure: quotient(ours, self.memory_per_pod("ours-json", stripped)),
                goal: Goal::AtMost(1.0),
            });
            rows.push(GoalRow {
                what: format!("ours (protobuf, default): memory per pod / kube-rs, managedFields {fields}"),
                figure: quotient(ours, self.memory_per_pod("kube", stripped)),
                goal: Goal::AtMost(1.0),
            });
        }
        let skipping = self.memory_per_pod("ours-skipping", false);
        rows.push(GoalRow {
            what: "ours (protobuf, default), managedFields skipped as read: memory per pod / kube-rs, managedFields kept".into(),
            figure: quotient(skipping, self.memory_per_pod("kube", false)),
            goal: Goal::AtMost(0.75),
        });
        rows.push(GoalRow {
            what: "ours (protobuf, default), managedFields skipped as read: memory per pod / kube-rs, managedFields stripped".into(),
            figure: quotient(skipping, self.memory_per_pod("kube", true)),
            goal: Goal::None,
        });
        let skipping = self
            .outcomes
            .iter()
            .find(|o| o.name == format!("{SKIPPING_PREFIX}factory informer, 3 handler(s)"));
        let same_without = self
            .outcomes
            .iter()
            .find(|o| o.name == format!("{PROTOBUF_PREFIX}factory informer, 3 handler(s)"));
        rows.push(GoalRow {
            what:
                "ours, managedFields skipped as read, 3 handler(s): CPU per event / the same without skipping"
                    .into(),
            figure: quotient(per_event(skipping), per_event(same_without)),
            goal: Goal::Below(1.0),
        });
        rows.push(GoalRow {
            what: "protobuf floor: events/s / JSON floor".into(),
            figure: quotient(rate(protobuf_floor), rate(floor)),
            goal: Goal::None,
        });
        rows.push(GoalRow {
            what: "protobuf floor: CPU per event / JSON floor".into(),
            figure: quotient(per_event(protobuf_floor), per_event(floor)),
            goal: Goal::None,
        });
        rows.push(GoalRow {
            what: "protobuf floor: sync CPU / JSON floor".into(),
            figure: quotient(sync_cpu(protobuf_floor), sync_cpu(floor)),
            goal: Goal::None,
        });
        rows.push(GoalRow {
            what: "protobuf floor: memory per pod / JSON floor".into(),
            figure: quotient(
                self.memory_per_pod("floor-protobuf", false),
                self.memory_per_pod("floor", false),
            ),
            goal: Goal::None,
        });
        rows.retain(|row| row.figure.is_some());
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "\n### Goals of protobuf (built-in types); ours over JSON and the protobuf floor for reference\n"
        );
        let _ = writeln!(out, "| ratio | figure | goal | met |");
        let _ = writeln!(out, "|---|---:|---:|---|");
        for row in rows {
            let _ = writeln!(out, "{}", row.markdown());
        }
    }
}

/// `ours / other`, when both are known and `other` is positive.
fn quotient(ours: Option<f64>, other: Option<f64>) -> Option<f64> {
    match (ours, other) {
        (Some(ours), Some(other)) if other > 0.0 => Some(ours / other),
        _ => None,
    }
}

/// What a ratio should be.
#[derive(Debug, Clone, Copy)]
enum Goal {
    /// At least this.
    AtLeast(f64),
    /// At most this.
    AtMost(f64),
    /// Below this (measured before rounding).
    Below(f64),
    /// No goal: shown for reference.
    None,
}

/// One line of the goals table.
struct GoalRow {
    what: String,
    figure: Option<f64>,
    goal: Goal,
}

impl GoalRow {
    fn markdown(&self) -> String {
        let figure = self.figure.unwrap_or(f64::NAN);
        // decided on the figure as printed (two decimals)
        let shown = (figure * 100.0).round() / 100.0;
        let (goal, met) = match self.goal {
            Goal::AtLeast(goal) => (format!("≥ {goal:.2}x"), if shown >= goal { "yes" } else { "no" }),
            Goal::AtMost(goal) => (format!("≤ {goal:.2}x"), if shown <= goal { "yes" } else { "no" }),
            Goal::Below(goal) => (format!("< {goal:.2}x"), if figure < goal { "yes" } else { "no" }),
            Goal::None => (String::new(), ""),
        };
        format!("| {} | {figure:.2}x | {goal} | {met} |", self.what)
    }
}
