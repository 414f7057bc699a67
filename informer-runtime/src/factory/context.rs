//! [`InformerContext`]: what a custom informer constructor gets from its factory.

use std::time::Duration;

use kube::Client;

use super::options::Options;

use crate::source::{Encoding, FieldPath, TweakListOptions};

/// What an informer constructor gets from the factory.
pub struct InformerContext<'a> {
    pub(super) client: &'a Client,
    pub(super) options: &'a Options,
    pub(super) resync_period: Duration,
}

impl InformerContext<'_> {
    /// The factory's client.
    pub fn client(&self) -> &Client {
        self.client
    }

    /// The namespace to watch (`None`: all).
    pub fn namespace(&self) -> Option<&str> {
        self.options.namespace.as_deref()
    }

    /// The list option tweak, if any.
    pub fn tweak_list_options(&self) -> Option<TweakListOptions> {
        self.options.tweak_list_options.clone()
    }

    /// The resync period for this type.
    pub fn resync_period(&self) -> Duration {
        self.resync_period
    }

    /// What the factory's informers ask the API server for ([`Builder::encoding`](super::Builder::encoding)).
    pub fn encoding(&self) -> Encoding {
        self.options.encoding
    }

    /// The fields the factory's informers skip ([`Builder::skip_fields`](super::Builder::skip_fields)).
    pub fn skip_fields(&self) -> &[FieldPath] {
        &self.options.skip_fields
    }
}
