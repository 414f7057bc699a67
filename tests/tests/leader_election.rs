//! Leader election over HTTP with three replicas: one leader at any instant (a fencing check
//! on every action, under killed leaders, stalled renewals and injected 500s and 409s), and
//! failover within the lease duration plus a retry period after a leader dies.
//!
//! `LEADER_ELECTION_SEEDS=20 cargo test -p informer-tests --test leader_election -- --nocapture`
//! runs a longer campaign.

use std::time::{Duration, Instant};

use informer_runtime::leader_election::{Config, LeaderElector};
use informer_tests::fault::fencing::FencingLog;
use informer_testserver::{Failure, Stall, TestServer};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const LEASE: Duration = Duration::from_millis(800);
const RENEW: Duration = Duration::from_millis(500);
const RETRY: Duration = Duration::from_millis(100);

/// A replica: its election and its "controller", which acts every 10 ms while it leads.
struct Replica {
    identity: String,
    election: JoinHandle<()>,
    actor: JoinHandle<()>,
}

impl Replica {
    fn start(server: &TestServer, identity: &str, log: &FencingLog) -> Self {
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
        let actor = tokio::spawn(act(elector, identity.to_owned(), log.clone()));
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
async fn act(elector: LeaderElector, identity: String, log: FencingLog) {
    while let Ok(leadership) = elector.leading().await {
        let token = leadership.token();
        while !token.is_cancelled() {
            if leadership.is_current() {
                log.record(&identity, leadership.term().transitions);
            }
            tokio::select! {
                () = token.cancelled() => {}
                () = tokio::time::sleep(Duration::from_millis(10)) => {}
            }
        }
    }
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
    let log = FencingLog::default();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut replicas: Vec<Replica> = (0..3)
        .map(|i| Replica::start(&server, &format!("r{i}"), &log))
        .collect();
    let mut generation = 0;
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(rng.u64(100..300))).await;
        let Some((leader, _)) = log.last() else {
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
    let actions = log.actions().len();
    assert!(actions > 0, "seed {seed}: nobody ever led");
    log.assert_fenced(seed);
    let terms = log.windows().len();
    println!("seed {seed}: {terms} terms, {actions} actions, fenced");
    server.shutdown().await;
}

/// Kills the leader five times and measures the time until another replica acts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_after_a_killed_leader_is_within_lease_duration_and_a_retry() {
    let server = TestServer::start().await.expect("server");
    let log = FencingLog::default();
    let mut replicas: Vec<Replica> = (0..3)
        .map(|i| Replica::start(&server, &format!("r{i}"), &log))
        .collect();
    let mut failovers = Vec::new();
    for round in 0..5 {
        let leader = loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if let Some((leader, _)) = log.last() {
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
            if let Some(at) = log.first_other_since(&leader, killed) {
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
    log.assert_fenced(0);
    server.shutdown().await;
}
