//! The fencing check of leader election tests: every action of a leader is logged with its
//! term, and no two terms may act at once.

use std::{
    sync::{Arc, Mutex},
    time::Instant,
};

/// One action of a leader: who, in which term (`leaseTransitions`), when.
#[derive(Debug, Clone)]
pub struct Action {
    /// The identity of the replica that acted.
    pub identity: String,
    /// The term it acted in.
    pub term: i32,
    /// When it acted.
    pub at: Instant,
}

/// The actions of every replica, shared between them and the test.
#[derive(Debug, Clone, Default)]
pub struct FencingLog {
    actions: Arc<Mutex<Vec<Action>>>,
}

/// A leader's actions in one term: identity, term, first and last action.
pub type Window = (String, i32, Instant, Instant);

impl FencingLog {
    /// Records an action of `identity` in `term`, now.
    pub fn record(&self, identity: &str, term: i32) {
        self.lock().push(Action {
            identity: identity.to_owned(),
            term,
            at: Instant::now(),
        });
    }

    /// Every action so far, in order of time.
    pub fn actions(&self) -> Vec<Action> {
        let mut actions = self.lock().clone();
        actions.sort_by_key(|a| a.at);
        actions
    }

    /// The replica that acted last, and when.
    pub fn last(&self) -> Option<(String, Instant)> {
        let actions = self.lock();
        actions
            .iter()
            .max_by_key(|a| a.at)
            .map(|a| (a.identity.clone(), a.at))
    }

    /// The first action after `since` by a replica other than `identity`.
    pub fn first_other_since(&self, identity: &str, since: Instant) -> Option<Instant> {
        let actions = self.lock();
        actions
            .iter()
            .filter(|a| a.at > since && a.identity != identity)
            .map(|a| a.at)
            .min()
    }

    /// Every leader's actions as a window, in order of start.
    pub fn windows(&self) -> Vec<Window> {
        let mut windows: Vec<Window> = Vec::new();
        for action in self.actions() {
            match windows.last_mut() {
                Some((identity, term, _, last)) if *identity == action.identity && *term == action.term => {
                    *last = action.at;
                }
                _ => windows.push((action.identity, action.term, action.at, action.at)),
            }
        }
        windows
    }

    /// Panics unless the windows are disjoint and their terms increase: a window ends before
    /// the next one starts, and a term never acts again once a later term acted.
    pub fn assert_fenced(&self, seed: u64) {
        let windows = self.windows();
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

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Action>> {
        self.actions.lock().unwrap_or_else(|e| e.into_inner())
    }
}
