//! The election against the test API server over HTTP: ports of client-go's
//! `leaderelection_test.go` cases of try-acquire-or-renew and release, the configuration's
//! validation, and the elector's run (leading, renewing, losing, releasing).

use std::time::Duration;

use informer_testserver::{Failure, Stall, TestServer};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::ObjectMeta;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::elector::{Attempt, Observation};
use super::*;

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

const LEASE: Duration = Duration::from_millis(600);
const RENEW: Duration = Duration::from_millis(400);
const RETRY: Duration = Duration::from_millis(100);

fn config(identity: &str) -> Config {
    Config::new("lock", "default", identity)
        .lease_duration(LEASE)
        .renew_deadline(RENEW)
        .retry_period(RETRY)
}

fn elector(
    server: &TestServer,
    identity: &str,
) -> std::result::Result<LeaderElector, Box<dyn std::error::Error>> {
    Ok(LeaderElector::new(
        server.named_client(identity)?,
        config(identity),
    )?)
}

fn term(transitions: i32, holder: &str) -> Term {
    Term {
        transitions,
        holder: holder.to_string(),
    }
}

/// A timestamp from long ago, by wall clock: expiry must not depend on it.
fn long_ago() -> Option<MicroTime> {
    Some(MicroTime(Timestamp::UNIX_EPOCH))
}

/// Stores a lease held by `holder` (none if empty) with `transitions`, renewed long ago.
fn seed(
    server: &TestServer,
    holder: &str,
    transitions: i32,
) -> std::result::Result<Lease, Box<dyn std::error::Error>> {
    let lease = Lease {
        metadata: ObjectMeta {
            name: Some("lock".into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: (!holder.is_empty()).then(|| holder.to_string()),
            lease_duration_seconds: Some(1),
            acquire_time: long_ago(),
            renew_time: long_ago(),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }),
    };
    Ok(server.create_typed(&lease)?)
}

fn stored(server: &TestServer) -> std::result::Result<Lease, Box<dyn std::error::Error>> {
    let value = server.get("coordination.k8s.io/v1", "Lease", Some("default"), "lock")?;
    Ok(serde_json::from_value(value)?)
}

fn spec(lease: &Lease) -> LeaseSpec {
    lease.spec.clone().unwrap_or_default()
}

/// An observation of the current lease made `ago` in the past (by the monotonic clock).
fn observed(
    server: &TestServer,
    ago: Duration,
) -> std::result::Result<Observation, Box<dyn std::error::Error>> {
    let lease = stored(server)?;
    Ok(Observation {
        spec: lease.spec.clone(),
        changed_at: Instant::now().checked_sub(ago),
        lease: Some(lease),
    })
}

fn holding(attempt: &Attempt) -> Option<&Term> {
    match attempt {
        Attempt::Holding { term, .. } => Some(term),
        _ => None,
    }
}

// client-go: testTryAcquireOrRenew, "acquire from no object"
#[tokio::test]
async fn acquire_from_no_object() -> TestResult {
    let server = TestServer::start().await?;
    let a = elector(&server, "a")?;
    let attempt = a.try_acquire_or_renew(&mut Observation::default(), None).await?;
    assert_eq!(holding(&attempt), Some(&term(0, "a")));
    let spec = spec(&stored(&server)?);
    assert_eq!(spec.holder_identity.as_deref(), Some("a"));
    assert_eq!(spec.lease_duration_seconds, Some(1), "600 ms rounds up to 1 s");
    assert_eq!(spec.lease_transitions, Some(0));
    assert!(spec.acquire_time.is_some() && spec.renew_time.is_some());
    assert_eq!(a.leader().as_deref(), Some("a"));
    server.shutdown().await;
    Ok(())
}

// client-go: testTryAcquireOrRenew, "acquire from unled object"
#[tokio::test]
async fn acquire_from_unled_object() -> TestResult {
    let server = TestServer::start().await?;
    seed(&server, "", 3)?;
    let a = elector(&server, "a")?;
    let attempt = a.try_acquire_or_renew(&mut Observation::default(), None).await?;
    assert_eq!(holding(&attempt), Some(&term(4, "a")));
    let spec = spec(&stored(&server)?);
    assert_eq!(spec.holder_identity.as_deref(), Some("a"));
    assert_ne!(spec.acquire_time, long_ago(), "a new term has a new acquire time");
    server.shutdown().await;
    Ok(())
}

// client-go: testTryAcquireOrRenew, "acquire from led, unacked object": the lease has not
// changed for the holder's lease duration (the 1 s it wrote) since this replica observed it.
#[tokio::test]
async fn acquire_from_led_unacked_object() -> TestResult {
    let server = TestServer::start().await?;
    seed(&server, "b", 3)?;
    let a = elector(&server, "a")?;
    let mut observation = observed(&server, Duration::from_secs(1) + RETRY)?;
    let attempt = a.try_acquire_or_renew(&mut observation, None).await?;
    assert_eq!(holding(&attempt), Some(&term(4, "a")));
    assert_eq!(spec(&stored(&server)?).holder_identity.as_deref(), Some("a"));
    assert_eq!(a.stats().transitions_observed, 1);
    server.shutdown().await;
    Ok(())
}

// client-go's isLeaseValid reads the holder's leaseDurationSeconds: a lease the holder wrote
// for longer than this replica's own duration (a sharder holds a shard's Lease for twice the
// shard's) is not taken over after this replica's duration.
#[tokio::test]
async fn the_holders_lease_duration_counts_not_this_replicas() -> TestResult {
    let server = TestServer::start().await?;
    seed(&server, "b", 3)?;
    let a = elector(&server, "a")?;
    // 600 ms (this replica's duration) and more have passed, but not the holder's 1 s
    let mut observation = observed(&server, LEASE + RETRY)?;
    let attempt = a.try_acquire_or_renew(&mut observation, None).await?;
    assert!(matches!(attempt, Attempt::HeldByOther { .. }), "{attempt:?}");
    assert_eq!(spec(&stored(&server)?).holder_identity.as_deref(), Some("b"));
    server.shutdown().await;
    Ok(())
}

// client-go: testTryAcquireOrRenew, "don't acquire from led, acked object". Its renew time is
// decades old by wall clock: only the time since this replica observed it counts.
#[tokio::test]
async fn do_not_acquire_from_led_acked_object() -> TestResult {
    let server = TestServer::start().await?;
    let seeded = seed(&server, "b", 3)?;
    let a = elector(&server, "a")?;
    let mut observation = Observation::default();
    let attempt = a.try_acquire_or_renew(&mut observation, None).await?;
    assert_eq!(attempt, Attempt::HeldByOther { holder: "b".into() });
    // Observed just under a lease duration ago: still held.
    let mut observation = observed(&server, LEASE - RETRY)?;
    let attempt = a.try_acquire_or_renew(&mut observation, None).await?;
    assert_eq!(attempt, Attempt::HeldByOther { holder: "b".into() });
    assert_eq!(stored(&server)?, seeded, "not written");
    assert_eq!(a.leader().as_deref(), Some("b"));
    server.shutdown().await;
    Ok(())
}

// client-go: testTryAcquireOrRenew, "renew already acquired object"
#[tokio::test]
async fn renew_already_acquired_object() -> TestResult {
    let server = TestServer::start().await?;
    seed(&server, "", 1)?;
    let a = elector(&server, "a")?;
    let mut observation = Observation::default();
    let attempt = a.try_acquire_or_renew(&mut observation, None).await?;
    let current = holding(&attempt).cloned().ok_or("acquired")?;
    let acquired = spec(&stored(&server)?);
    let attempt = a.try_acquire_or_renew(&mut observation, Some(&current)).await?;
    assert_eq!(holding(&attempt), Some(&term(2, "a")), "the term goes on");
    let renewed = spec(&stored(&server)?);
    assert_eq!(renewed.lease_transitions, Some(2));
    assert_eq!(renewed.acquire_time, acquired.acquire_time);
    assert!(renewed.renew_time > acquired.renew_time);
    server.shutdown().await;
    Ok(())
}

// client-go: testTryAcquireOrRenew, the leaseTransitions expectations: one more per holder
// change; a leader that finds another holder has lost the lease.
#[tokio::test]
async fn transitions_increment_when_the_holder_changes() -> TestResult {
    let server = TestServer::start().await?;
    let (a, b) = (elector(&server, "a")?, elector(&server, "b")?);
    let mut a_seen = Observation::default();
    let a_term = a.try_acquire_or_renew(&mut a_seen, None).await?;
    let a_term = holding(&a_term).cloned().ok_or("a acquired")?;
    let mut b_seen = observed(&server, LEASE * 2)?;
    let b_term = b.try_acquire_or_renew(&mut b_seen, None).await?;
    assert_eq!(holding(&b_term), Some(&term(1, "b")));
    assert_eq!(
        a.try_acquire_or_renew(&mut a_seen, Some(&a_term)).await?,
        Attempt::Lost { holder: "b".into() }
    );
    assert_eq!(
        a.try_acquire_or_renew(&mut a_seen, None).await?,
        Attempt::HeldByOther { holder: "b".into() }
    );
    // "a" takes it back once it expires: transitions 2.
    a_seen.changed_at = Instant::now().checked_sub(LEASE * 2);
    let again = a.try_acquire_or_renew(&mut a_seen, None).await?;
    assert_eq!(holding(&again), Some(&term(2, "a")));
    // A replica that acquires again a lease still naming it begins a new term.
    let mut restarted = Observation::default();
    let again = a.try_acquire_or_renew(&mut restarted, None).await?;
    assert_eq!(holding(&again), Some(&term(3, "a")));
    server.shutdown().await;
    Ok(())
}

// A write that races with another replica's gets 409: the round is lost, not an acquisition.
#[tokio::test]
async fn conflicts_lose_the_round() -> TestResult {
    let server = TestServer::start().await?;
    let a = elector(&server, "a")?;
    server.fail_next(Failure::new(409).verb("create").resource("leases"));
    let error = a
        .try_acquire_or_renew(&mut Observation::default(), None)
        .await
        .expect_err("create conflicts");
    assert!(error.is_conflict(), "{error}");
    assert!(
        error
            .to_string()
            .starts_with("failed to create lease default/lock"),
        "{error}"
    );
    seed(&server, "", 0)?;
    server.fail_next(Failure::new(409).verb("update").resource("leases"));
    let error = a
        .try_acquire_or_renew(&mut Observation::default(), None)
        .await
        .expect_err("update conflicts");
    assert!(error.is_conflict(), "{error}");
    server.fail_next(Failure::new(500).verb("get").resource("leases"));
    let error = a
        .try_acquire_or_renew(&mut Observation::default(), None)
        .await
        .expect_err("get fails");
    assert_eq!((error.status_code(), error.is_conflict()), (Some(500), false));
    assert_eq!(spec(&stored(&server)?).holder_identity, None);
    server.shutdown().await;
    Ok(())
}

// client-go: testReleaseLease, "release acquired lock from no object"; the next replica
// acquires at once.
#[tokio::test]
async fn release_acquired_lock() -> TestResult {
    let server = TestServer::start().await?;
    let (a, b) = (elector(&server, "a")?, elector(&server, "b")?);
    let mut a_seen = Observation::default();
    a.try_acquire_or_renew(&mut a_seen, None).await?;
    a.release(&mut a_seen).await;
    let released = spec(&stored(&server)?);
    assert_eq!(released.holder_identity.as_deref(), Some(""));
    assert_eq!(released.lease_duration_seconds, Some(1));
    assert_eq!(released.lease_transitions, Some(0));
    assert_eq!(a.stats().releases, 1);
    assert_eq!(a.leader(), None);
    let attempt = b.try_acquire_or_renew(&mut Observation::default(), None).await?;
    assert_eq!(holding(&attempt), Some(&term(1, "b")));
    server.shutdown().await;
    Ok(())
}

// client-go: `LeaderElector.release` and `LeaderElectionRecordToLeaseSpec`: the released
// Lease is exactly the record client-go writes (an empty holder identity, present as `""`; a
// duration of 1 s; acquire and renew time now; the transitions kept; no preferred holder or
// strategy, even where the held Lease had them), and the sharder reads it as released.
#[tokio::test]
async fn release_writes_client_gos_record() -> TestResult {
    let server = TestServer::start().await?;
    let mut held = seed(&server, "a", 4)?;
    let held_spec = held.spec.get_or_insert_default();
    held_spec.preferred_holder = Some("b".into());
    held_spec.strategy = Some("OldestEmulationVersion".into());
    let api = kube::Api::<Lease>::namespaced(server.client()?, "default");
    api.replace("lock", &kube::api::PostParams::default(), &held)
        .await?;
    let a = elector(&server, "a")?;
    let mut a_seen = Observation::default();
    let attempt = a.try_acquire_or_renew(&mut a_seen, None).await?;
    assert_eq!(holding(&attempt), Some(&term(5, "a")));
    let before = Timestamp::now();
    a.release(&mut a_seen).await;
    let after = Timestamp::now();
    assert_eq!(a.stats().releases, 1);
    let raw = server.get("coordination.k8s.io/v1", "Lease", Some("default"), "lock")?;
    let mut fields: Vec<&str> = raw["spec"]
        .as_object()
        .map(|spec| spec.keys().map(String::as_str).collect())
        .unwrap_or_default();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "acquireTime",
            "holderIdentity",
            "leaseDurationSeconds",
            "leaseTransitions",
            "renewTime"
        ],
        "{raw}"
    );
    assert_eq!(raw["spec"]["holderIdentity"], "");
    assert_eq!(raw["spec"]["leaseDurationSeconds"], 1);
    assert_eq!(raw["spec"]["leaseTransitions"], 5);
    let released: Lease = serde_json::from_value(raw)?;
    let released_spec = spec(&released);
    let (Some(acquired), Some(renewed)) = (&released_spec.acquire_time, &released_spec.renew_time) else {
        return Err("the released Lease lacks its times".into());
    };
    assert_eq!(acquired, renewed);
    // written with microseconds
    let to_micros = |t: Timestamp| t.as_microsecond();
    assert!(
        (to_micros(before)..=to_micros(after)).contains(&to_micros(renewed.0)),
        "{renewed:?} not within {before}..{after}"
    );
    assert_eq!(
        crate::sharding::lease_state::ShardState::of(&released, Timestamp::now()),
        crate::sharding::lease_state::ShardState::Dead
    );
    server.shutdown().await;
    Ok(())
}

// Release only gives up a lease this replica still holds.
#[tokio::test]
async fn release_leaves_a_lease_taken_over() -> TestResult {
    let server = TestServer::start().await?;
    let (a, b) = (elector(&server, "a")?, elector(&server, "b")?);
    let mut a_seen = Observation::default();
    a.try_acquire_or_renew(&mut a_seen, None).await?;
    let mut b_seen = observed(&server, LEASE * 2)?;
    b.try_acquire_or_renew(&mut b_seen, None).await?;
    a.release(&mut a_seen).await;
    assert_eq!(spec(&stored(&server)?).holder_identity.as_deref(), Some("b"));
    assert_eq!(a.stats().releases, 0);
    server.shutdown().await;
    Ok(())
}

#[test]
fn validation_follows_client_go() {
    assert!(Config::new("lock", "ns", "me").validate().is_ok());
    let check = |config: Config| config.validate().map_err(|e| e.to_string());
    let base = || config("me");
    assert_eq!(
        check(Config::new("lock", "ns", "")),
        Err("failed to validate the leader election config: the holder identity is empty".into())
    );
    assert!(matches!(
        Config::new("", "ns", "me").validate(),
        Err(Error::EmptyField { field: "lease name" })
    ));
    assert!(matches!(
        Config::new("lock", "", "me").validate(),
        Err(Error::EmptyField {
            field: "lease namespace"
        })
    ));
    assert!(matches!(
        base().retry_period(Duration::ZERO).validate(),
        Err(Error::ZeroDuration {
            field: "retry_period"
        })
    ));
    assert!(matches!(
        base().lease_duration(RENEW).validate(),
        Err(Error::LeaseDurationTooShort { .. })
    ));
    // renew_deadline must exceed retry_period × 1.2, strictly
    assert!(matches!(
        base().renew_deadline(Duration::from_millis(120)).validate(),
        Err(Error::RenewDeadlineTooShort { .. })
    ));
    assert!(
        base()
            .renew_deadline(Duration::from_millis(121))
            .validate()
            .is_ok()
    );
    for error in [
        base().renew_deadline(Duration::ZERO).validate(),
        base().lease_duration(RENEW).validate(),
        base().renew_deadline(RETRY).validate(),
    ] {
        let message = error.expect_err("invalid").to_string();
        assert!(message.starts_with("failed to validate"), "{message}");
    }
}

#[test]
fn huge_durations_saturate() {
    let config = Config::new("lock", "ns", "me")
        .lease_duration(Duration::MAX)
        .renew_deadline(Duration::MAX - Duration::from_nanos(1))
        .retry_period(Duration::MAX / 2);
    assert!(config.validate().is_ok());
    assert_eq!(config.lease_duration_seconds(), i32::MAX);
    assert!(config.clone().retry_period(Duration::MAX).validate().is_err());
}

// Huge durations: the elector acquires, leads and stops without overflowing a deadline.
#[tokio::test]
async fn runs_with_huge_durations() -> TestResult {
    let server = TestServer::start().await?;
    let config = Config::new("lock", "default", "a")
        .lease_duration(Duration::MAX)
        .renew_deadline(Duration::MAX / 2)
        .retry_period(Duration::from_millis(50))
        .release_on_cancel(true);
    let a = LeaderElector::new(server.client()?, config)?;
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let (a, cancel) = (a.clone(), cancel.clone());
        async move { a.run(cancel).await }
    });
    let leadership = tokio::time::timeout(Duration::from_secs(5), a.leading()).await??;
    assert!(leadership.is_current());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(a.stats().renewals >= 1, "{:?}", a.stats());
    cancel.cancel();
    run.await??;
    assert!(leadership.token().is_cancelled());
    assert_eq!(
        spec(&stored(&server)?).holder_identity.as_deref(),
        Some(""),
        "released"
    );
    server.shutdown().await;
    Ok(())
}

// The elector leads, renews, reports, refuses a second run and stops on cancel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_leads_and_renews_until_cancelled() -> TestResult {
    let server = TestServer::start().await?;
    let a = elector(&server, "a")?;
    assert!(!a.is_leader());
    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let (a, cancel) = (a.clone(), cancel.clone());
        async move { a.run(cancel).await }
    });
    let leadership = tokio::time::timeout(Duration::from_secs(5), a.leading()).await??;
    assert_eq!(leadership.term(), &term(0, "a"));
    assert_eq!(leadership.term().to_string(), "term 0 of a");
    assert!(a.is_leader());
    assert!(matches!(
        a.run(CancellationToken::new()).await,
        Err(Error::AlreadyRunning { .. })
    ));
    // Leading well past the lease duration: renewals keep it.
    tokio::time::sleep(LEASE * 2).await;
    assert!(leadership.is_current());
    let stats = a.stats();
    assert!(stats.renewals >= 3, "{stats:?}");
    assert_eq!((stats.acquisitions, stats.leadership_lost), (1, 0), "{stats:?}");
    cancel.cancel();
    run.await??;
    assert!(leadership.token().is_cancelled());
    assert!(!a.is_leader());
    assert!(matches!(a.leading().await, Err(Error::Stopped { .. })));
    // Not released (release_on_cancel is off): the lease still names "a".
    assert_eq!(spec(&stored(&server)?).holder_identity.as_deref(), Some("a"));
    server.shutdown().await;
    Ok(())
}

// Dropping the run (a crashed task) ends the leadership without releasing the lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_run_ends_the_leadership() -> TestResult {
    let server = TestServer::start().await?;
    let a = elector(&server, "a")?;
    let run = tokio::spawn({
        let a = a.clone();
        async move { a.run(CancellationToken::new()).await }
    });
    let leadership = tokio::time::timeout(Duration::from_secs(5), a.leading()).await??;
    run.abort();
    assert!(run.await.is_err_and(|e| e.is_cancelled()));
    assert!(leadership.token().is_cancelled());
    assert!(matches!(a.leading().await, Err(Error::Stopped { .. })));
    assert_eq!(spec(&stored(&server)?).holder_identity.as_deref(), Some("a"));
    server.shutdown().await;
    Ok(())
}

/// Runs `elector` until `cancel`, as a task.
fn spawn_run(elector: &LeaderElector, cancel: &CancellationToken) -> tokio::task::JoinHandle<Result<()>> {
    let (elector, cancel) = (elector.clone(), cancel.clone());
    tokio::spawn(async move { elector.run(cancel).await })
}

// With release_on_cancel, the next replica takes over at its next attempt, long before the
// lease duration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_on_cancel_hands_over_at_once() -> TestResult {
    let server = TestServer::start().await?;
    let lease = Duration::from_secs(3);
    let slow = |identity: &str| {
        config(identity)
            .lease_duration(lease)
            .renew_deadline(Duration::from_secs(2))
            .release_on_cancel(true)
    };
    let a = LeaderElector::new(server.named_client("a")?, slow("a"))?;
    let b = LeaderElector::new(server.named_client("b")?, slow("b"))?;
    let (a_cancel, b_cancel) = (CancellationToken::new(), CancellationToken::new());
    let a_run = spawn_run(&a, &a_cancel);
    let a_leads = tokio::time::timeout(Duration::from_secs(5), a.leading()).await??;
    let b_run = spawn_run(&b, &b_cancel);
    let mut leader = b.watch_leader();
    tokio::time::timeout(
        Duration::from_secs(5),
        leader.wait_for(|l| l.as_deref() == Some("a")),
    )
    .await??;
    let cancelled = Instant::now();
    a_cancel.cancel();
    let b_leads = tokio::time::timeout(Duration::from_secs(5), b.leading()).await??;
    let handover = cancelled.elapsed();
    a_run.await??;
    assert!(a_leads.token().is_cancelled());
    assert!(handover < lease / 3, "took {handover:?}");
    assert_eq!(b_leads.term(), &term(1, "b"));
    assert_eq!(a.stats().releases, 1);
    b_cancel.cancel();
    b_run.await??;
    assert_eq!(
        spec(&stored(&server)?).holder_identity.as_deref(),
        Some(""),
        "b released too"
    );
    server.shutdown().await;
    Ok(())
}

// A leader whose renewals stall stops leading at its renew deadline, before another replica
// acquires; then it follows, and does not release what it no longer holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_cannot_renew_stops_before_another_acquires() -> TestResult {
    let server = TestServer::start().await?;
    // a wider gap than the other tests' (lease - renew = 500 ms) against a loaded machine
    let wide = |identity: &str| {
        config(identity)
            .lease_duration(Duration::from_millis(1000))
            .renew_deadline(Duration::from_millis(500))
            .release_on_cancel(true)
    };
    let a = LeaderElector::new(server.named_client("a")?, wide("a"))?;
    let b = LeaderElector::new(server.named_client("b")?, wide("b"))?;
    let cancel = CancellationToken::new();
    let a_run = spawn_run(&a, &cancel);
    let a_leads = tokio::time::timeout(Duration::from_secs(5), a.leading()).await??;
    let a_lost = tokio::spawn({
        let a_leads = a_leads.clone();
        async move {
            a_leads.lost().await;
            Instant::now()
        }
    });
    let b_run = spawn_run(&b, &cancel);
    let mut leader = b.watch_leader();
    tokio::time::timeout(
        Duration::from_secs(5),
        leader.wait_for(|l| l.as_deref() == Some("a")),
    )
    .await??;
    server.stall_next(
        Stall::new(Duration::from_secs(2))
            .times(usize::MAX)
            .verb("update")
            .resource("leases")
            .client("a"),
    );
    let b_leads = tokio::time::timeout(Duration::from_secs(5), b.leading()).await??;
    let b_acquired = Instant::now();
    let a_lost = a_lost.await?;
    assert!(
        a_lost < b_acquired,
        "a stopped {:?} after b began",
        a_lost - b_acquired
    );
    assert!(a_leads.valid_until() < b_acquired);
    assert_eq!(b_leads.term(), &term(1, "b"));
    let stats = a.stats();
    assert!(stats.failed_renewals >= 1, "{stats:?}");
    assert_eq!(stats.leadership_lost, 1, "{stats:?}");
    // "a" campaigns again, as a follower of "b".
    let mut leader = a.watch_leader();
    tokio::time::timeout(
        Duration::from_secs(5),
        leader.wait_for(|l| l.as_deref() == Some("b")),
    )
    .await??;
    assert!(!a.is_leader());
    server.clear_faults();
    // On a starved machine b may have lost its term since; whoever leads at the cancel
    // releases.
    let b_led = b.is_leader();
    cancel.cancel();
    a_run.await??;
    b_run.await??;
    assert_eq!(
        b.stats().releases,
        u64::from(b_led),
        "the leader at the cancel released"
    );
    server.shutdown().await;
    Ok(())
}

// Injected 500s on renewals are retried within the deadline: the term goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_renewals_are_retried_within_the_deadline() -> TestResult {
    let server = TestServer::start().await?;
    let a = elector(&server, "a")?;
    let cancel = CancellationToken::new();
    let run = spawn_run(&a, &cancel);
    let leadership = tokio::time::timeout(Duration::from_secs(5), a.leading()).await??;
    server.fail_next(Failure::new(500).verb("update").resource("leases"));
    tokio::time::sleep(LEASE).await;
    assert!(leadership.is_current());
    let stats = a.stats();
    assert_eq!((stats.failed_renewals, stats.acquisitions), (1, 1), "{stats:?}");
    cancel.cancel();
    run.await??;
    server.shutdown().await;
    Ok(())
}

// kubernetes-controller-sharding: pkg/shard/lease/lease_test.go, "should create the lease if it
// does not exist" (with the ring label), "should update the lease" and "should keep externally
// managed labels": a labelled lease gets its labels when created, keeps others' labels on
// every renewal, and gets a removed label back.
#[tokio::test]
async fn lease_labels_are_set_on_create_and_merged_on_renewal() -> TestResult {
    let server = TestServer::start().await?;
    let ring = "alpha.sharding.timebertt.dev/controllerring";
    let a = LeaderElector::new(server.named_client("a")?, config("a").label(ring, "web"))?;
    let mut observation = Observation::default();
    let attempt = a.try_acquire_or_renew(&mut observation, None).await?;
    let term = holding(&attempt).cloned().ok_or("a holds the lease")?;
    let labels = |lease: &Lease| lease.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels(&stored(&server)?).get(ring).map(String::as_str),
        Some("web")
    );

    // the sharder's state label, and the ring label gone
    let mut lease = stored(&server)?;
    lease.metadata.labels = Some(
        [(
            "alpha.sharding.timebertt.dev/state".to_owned(),
            "ready".to_owned(),
        )]
        .into(),
    );
    server.update_typed(&lease)?;
    a.try_acquire_or_renew(&mut observation, Some(&term)).await?;
    let renewed = labels(&stored(&server)?);
    assert_eq!(renewed.get(ring).map(String::as_str), Some("web"));
    assert_eq!(
        renewed
            .get("alpha.sharding.timebertt.dev/state")
            .map(String::as_str),
        Some("ready")
    );
    server.shutdown().await;
    Ok(())
}
