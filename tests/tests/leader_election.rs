//! Leader election over HTTP with three replicas: one leader at any instant (a fencing check
//! on every action, under killed leaders, stalled renewals and injected 500s and 409s), and
//! failover within the lease duration plus a retry period after a leader dies.
//!
//! `LEADER_ELECTION_SEEDS=20 cargo test -p informer-tests --test leader_election -- --nocapture`
//! runs a longer campaign.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use informer_runtime::leader_election::{Config, LeaderElector};
use informer_testserver::{Failure, Stall, TestServer};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const LEASE: Duration = Duration::from_millis(800);
const RENEW: Duration = Duration::from_millis(500);
const RETRY: Duration = Duration::from_millis(100);

/// One action of a leader: who, in which term, when.
#[derive(Debug, Clone)]
struct Action {
    identity: String,
    term: i32,
    at: Instant,
}

type Log = Arc<Mutex<Vec<Action>>>;

/// A replica: its election and its "controller", which acts every 10 ms while it leads.
struct Replica {
    identity: String,
    election: JoinHandle<()>,
    actor: JoinHandle<()>,
}

impl Replica {
    fn start(server: &TestServer, identity: &str, log: &Log) -> Self {
        let client = server.named_client(identity).expect("a named client");
        let config = Config::new("fenced", "default", identity)
            .lease_duration(LEASE)
            .renew_deadline(RENEW)
            .retry_period(RETRY);
        let elector = LeaderElector::new(client, config).expect("a valid configuration");
        let election = tokio::spawn({
            let elector = elector.clone();
            async move {
                let _ = elector.run(CancellationToken::new()).await;
            }
        });
        let actor = tokio::spawn(act(elector, identity.to_owned(), Arc::clone(log)));
        Self {
            identity: identity.to_owned(),
            election,
            actor,
        }
    }

    /// A crash: no release, the others wait for the lease to expire.
    fn kill(&self) {
        self.election.abort();
        self.actor.abort();
    }
}

/// Acts every 10 ms while the replica leads, checking the leadership before each action.
async fn act(elector: LeaderElector, identity: String, log: Log) {
    while let Ok(leadership) = elector.leading().await {
        let token = leadership.token();
        while !token.is_cancelled() {
            if leadership.is_current() {
                log.lock().expect("log").push(Action {
                    identity: identity.clone(),
                    term: leadership.term().transitions,
                    at: Instant::now(),
                });
            }
            tokio::select! {
                () = token.cancelled() => {}
                () = tokio::time::sleep(Duration::from_millis(10)) => {}
            }
        }
    }
}

/// Every leader's actions as a window (identity, term, first, last), in order of start.
fn windows(log: &[Action]) -> Vec<(String, i32, Instant, Instant)> {
    let mut windows: Vec<(String, i32, Instant, Instant)> = Vec::new();
    for action in log {
        match windows.last_mut() {
            Some((identity, term, _, last)) if *identity == action.identity && *term == action.term => {
                *last = action.at;
            }
            _ => windows.push((action.identity.clone(), action.term, action.at, action.at)),
        }
    }
    windows
}

/// No two leaders' windows overlap: a window ends before the next one starts, and a term is
/// never seen again after another term acted.
fn assert_fenced(seed: u64, log: &[Action]) {
    let mut sorted = log.to_vec();
    sorted.sort_by_key(|a| a.at);
    let windows = windows(&sorted);
    for pair in windows.windows(2) {
        let ((a, a_term, _, a_last), (b, b_term, b_first, _)) = (&pair[0], &pair[1]);
        assert!(
            a_last < b_first,
            "seed {seed}: {a} (term {a_term}) and {b} (term {b_term}) acted at once"
        );
        assert!(
            b_term > a_term,
            "seed {seed}: term {b_term} of {b} acted after term {a_term} of {a}: {windows:?}"
        );
    }
}

/// The replica acting last, if any.
fn current_leader(log: &Log) -> Option<(String, Instant)> {
    let log = log.lock().expect("log");
    log.iter()
        .max_by_key(|a| a.at)
        .map(|a| (a.identity.clone(), a.at))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_leader_at_a_time_under_kills_stalls_and_errors() {
    let seeds: u64 = std::env::var("LEADER_ELECTION_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    for seed in 1..=seeds {
        chaos(seed).await;
    }
}

async fn chaos(seed: u64) {
    let server = TestServer::start().await.expect("server");
    let log: Log = Arc::default();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut replicas: Vec<Replica> = (0..3)
        .map(|i| Replica::start(&server, &format!("r{i}"), &log))
        .collect();
    let mut generation = 0;
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(rng.u64(100..300))).await;
        let Some((leader, _)) = current_leader(&log) else {
            continue;
        };
        match rng.u8(..5) {
            0 => {
                // kill the leader and start a fresh replica in its place
                if let Some(i) = replicas.iter().position(|r| r.identity == leader) {
                    replicas[i].kill();
                    generation += 1;
                    replicas[i] = Replica::start(&server, &format!("r{i}-{generation}"), &log);
                }
            }
            1 => server.stall_next(
                Stall::new(LEASE)
                    .verb("update")
                    .resource("leases")
                    .client(&leader),
            ),
            2 => server.fail_next(Failure::new(500).resource("leases").client(&leader).times(3)),
            3 => server.fail_next(Failure::new(409).verb("update").resource("leases").times(2)),
            _ => server.fail_next(Failure::new(500).verb("get").resource("leases").times(2)),
        }
    }
    server.clear_faults();
    tokio::time::sleep(LEASE * 2).await;
    for replica in &replicas {
        replica.kill();
    }
    let log = log.lock().expect("log").clone();
    assert!(!log.is_empty(), "seed {seed}: nobody ever led");
    assert_fenced(seed, &log);
    let terms = windows(&log).len();
    println!("seed {seed}: {terms} terms, {} actions, fenced", log.len());
    server.shutdown().await;
}

/// Kills the leader five times and measures the time until another replica acts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_after_a_killed_leader_is_within_lease_duration_and_a_retry() {
    let server = TestServer::start().await.expect("server");
    let log: Log = Arc::default();
    let mut replicas: Vec<Replica> = (0..3)
        .map(|i| Replica::start(&server, &format!("r{i}"), &log))
        .collect();
    let mut failovers = Vec::new();
    for round in 0..5 {
        let leader = loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if let Some((leader, _)) = current_leader(&log) {
                break leader;
            }
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        let i = replicas
            .iter()
            .position(|r| r.identity == leader)
            .expect("the leader is a replica");
        let killed = Instant::now();
        replicas[i].kill();
        replicas[i] = Replica::start(&server, &format!("r{i}-{round}"), &log);
        let took = loop {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let next = log
                .lock()
                .expect("log")
                .iter()
                .find(|a| a.at > killed && a.identity != leader)
                .map(|a| a.at);
            if let Some(at) = next {
                break at - killed;
            }
            assert!(
                killed.elapsed() < Duration::from_secs(10),
                "no failover after {leader} died"
            );
        };
        failovers.push(took);
    }
    failovers.sort();
    let bound = LEASE + RETRY.mul_f64(1.2) + Duration::from_millis(500);
    println!(
        "failover after a killed leader (lease {LEASE:?}, retry {RETRY:?}): min {:?}, median {:?}, max {:?}",
        failovers[0], failovers[2], failovers[4]
    );
    assert!(failovers[4] <= bound, "failovers {failovers:?} exceed {bound:?}");
    for replica in &replicas {
        replica.kill();
    }
    assert_fenced(0, &log.lock().expect("log"));
    server.shutdown().await;
}
