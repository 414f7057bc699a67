//! Ports of the Go sharder's `leases` state and times tests.

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
};

use super::*;

fn now() -> Timestamp {
    Timestamp::from_second(1_700_000_000).expect("valid")
}

fn at(offset: SignedDuration) -> Option<MicroTime> {
    Some(MicroTime(now() + offset))
}

fn secs(seconds: i64) -> SignedDuration {
    SignedDuration::from_secs(seconds)
}

/// Go: the BeforeEach of `ToState` and `ToTimes`: held by the shard, 10 s, renewed 2 s ago.
fn lease() -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some("shard".into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some("shard".into()),
            lease_duration_seconds: Some(10),
            acquire_time: at(secs(-120)),
            renew_time: at(secs(-2)),
            ..LeaseSpec::default()
        }),
    }
}

fn spec(lease: &mut Lease) -> &mut LeaseSpec {
    lease.spec.as_mut().expect("spec")
}

fn state(lease: &Lease) -> ShardState {
    ShardState::of(lease, now())
}

/// Go: ShardState "#String" and "#StateFromString".
#[test]
fn states_round_trip_through_their_labels() {
    for (state, label) in [
        (ShardState::Unknown, "unknown"),
        (ShardState::Orphaned, "orphaned"),
        (ShardState::Dead, "dead"),
        (ShardState::Uncertain, "uncertain"),
        (ShardState::Expired, "expired"),
        (ShardState::Ready, "ready"),
    ] {
        assert_eq!(state.to_string(), label);
        assert_eq!(ShardState::from_label(label), state);
    }
    assert_eq!(ShardState::from_label("foo"), ShardState::Unknown);
    let error = "foo".parse::<ShardState>().expect_err("not a state");
    assert!(
        error.to_string().starts_with("failed to parse \"foo\""),
        "{error}"
    );
}

/// Go: ShardState "#IsAvailable".
#[test]
fn uncertain_expired_and_ready_are_available() {
    for state in [ShardState::Unknown, ShardState::Orphaned, ShardState::Dead] {
        assert!(!state.is_available(), "{state}");
    }
    for state in [ShardState::Uncertain, ShardState::Expired, ShardState::Ready] {
        assert!(state.is_available(), "{state}");
    }
}

/// Go: "#ToState should return ready if lease has not expired".
#[test]
fn ready_until_expiry() {
    assert_eq!(state(&lease()), ShardState::Ready);
}

/// Go: "#ToState should return expired if lease has expired".
#[test]
fn expired_after_expiry() {
    let mut lease = lease();
    spec(&mut lease).renew_time = at(secs(-15));
    assert_eq!(state(&lease), ShardState::Expired);
}

/// Go: "#ToState should return expired if acquireTime / renewTime / leaseDuration is missing".
#[test]
fn expired_when_a_time_is_missing() {
    let edits: [fn(&mut LeaseSpec); 3] = [
        |spec| spec.acquire_time = None,
        |spec| spec.renew_time = None,
        |spec| spec.lease_duration_seconds = None,
    ];
    for edit in edits {
        let mut lease = lease();
        edit(spec(&mut lease));
        assert_eq!(state(&lease), ShardState::Expired);
    }
}

/// Go: "#ToState should return uncertain if lease has expired more than leaseDuration ago".
#[test]
fn uncertain_one_lease_duration_after_expiry() {
    let mut lease = lease();
    spec(&mut lease).renew_time = at(secs(-25));
    assert_eq!(state(&lease), ShardState::Uncertain);
}

/// Go: "#ToState should return dead if lease has been released".
#[test]
fn dead_when_released() {
    let mut lease = lease();
    spec(&mut lease).holder_identity = None;
    assert_eq!(state(&lease), ShardState::Dead);
    spec(&mut lease).holder_identity = Some(String::new());
    assert_eq!(state(&lease), ShardState::Dead);
}

/// Go: "#ToState should return dead if lease has been acquired by sharder".
#[test]
fn dead_when_acquired_by_the_sharder() {
    let mut lease = lease();
    let spec = spec(&mut lease);
    spec.holder_identity = Some("shardlease-controller".into());
    spec.lease_duration_seconds = Some(20);
    spec.acquire_time = at(SignedDuration::ZERO);
    spec.renew_time = at(SignedDuration::ZERO);
    assert_eq!(state(&lease), ShardState::Dead);
}

/// Go: "#ToState should return orphaned if lease has been released 1 minute and
/// leaseDuration ago".
#[test]
fn orphaned_a_minute_after_a_released_lease_expired() {
    let mut lease = lease();
    let spec = spec(&mut lease);
    spec.holder_identity = None;
    spec.lease_duration_seconds = Some(1);
    spec.acquire_time = at(secs(-61));
    spec.renew_time = at(secs(-61));
    assert_eq!(state(&lease), ShardState::Orphaned);
}

/// Go: "#ToState should return orphaned if lease has been acquired by sharder 1 minute and
/// ago".
#[test]
fn orphaned_a_minute_after_an_acquired_lease_expired() {
    let mut lease = lease();
    let spec = spec(&mut lease);
    spec.holder_identity = Some("shardlease-controller".into());
    spec.lease_duration_seconds = Some(20);
    spec.acquire_time = at(secs(-80));
    spec.renew_time = at(secs(-80));
    assert_eq!(state(&lease), ShardState::Orphaned);
}

#[test]
fn orphan_delay_is_configurable() {
    let mut lease = lease();
    spec(&mut lease).holder_identity = None;
    let times = LeaseTimes::with_orphan_after(&lease, now(), Duration::from_secs(1));
    // renewed 2 s ago for 10 s: expires in 8 s, orphaned 1 s later
    assert_eq!(times.to_orphaned, secs(9));
    assert_eq!(ShardState::from_times(&lease, &times), ShardState::Dead);
    spec(&mut lease).renew_time = at(secs(-12));
    let times = LeaseTimes::with_orphan_after(&lease, now(), Duration::from_secs(1));
    assert_eq!(ShardState::from_times(&lease, &times), ShardState::Orphaned);
}

fn expect_times(
    actual: LeaseTimes,
    expiration: SignedDuration,
    duration: u64,
    to_expired: i64,
    to_uncertain: i64,
    to_orphaned: i64,
) {
    let expected = LeaseTimes {
        expiration: now() + expiration,
        lease_duration: Duration::from_secs(duration),
        to_expired: secs(to_expired),
        to_uncertain: secs(to_uncertain),
        to_orphaned: secs(to_orphaned),
    };
    assert_eq!(actual, expected);
}

/// Go: Times "#ToTimes should return the correct times for a ready shard".
#[test]
fn times_of_a_ready_shard() {
    expect_times(LeaseTimes::of(&lease(), now()), secs(8), 10, 8, 18, 68);
}

/// Go: "#ToTimes should return the correct times for a lease acquired by the sharder".
#[test]
fn times_of_a_lease_acquired_by_the_sharder() {
    let mut lease = lease();
    let spec = spec(&mut lease);
    spec.holder_identity = Some("shardlease-controller".into());
    spec.lease_duration_seconds = Some(20);
    spec.acquire_time = at(secs(-2));
    spec.renew_time = at(secs(-2));
    expect_times(LeaseTimes::of(&lease, now()), secs(18), 20, 18, 38, 78);
}

/// Go: "#ToTimes should return the correct times for a released lease".
#[test]
fn times_of_a_released_lease() {
    let mut lease = lease();
    let spec = spec(&mut lease);
    spec.holder_identity = None;
    spec.lease_duration_seconds = Some(1);
    spec.acquire_time = at(SignedDuration::ZERO);
    spec.renew_time = at(SignedDuration::ZERO);
    expect_times(LeaseTimes::of(&lease, now()), secs(1), 1, 1, 2, 61);
}

/// Go: "#ToTimes should set expiration to now if some field is missing".
#[test]
fn times_expire_now_when_a_field_is_missing() {
    let edits: [fn(&mut LeaseSpec); 3] = [
        |spec| spec.acquire_time = None,
        |spec| spec.renew_time = None,
        |spec| spec.lease_duration_seconds = None,
    ];
    for edit in edits {
        let mut lease = lease();
        edit(spec(&mut lease));
        expect_times(LeaseTimes::of(&lease, now()), SignedDuration::ZERO, 15, 0, 15, 60);
    }
}
