//! kube-rs 5: `kube::runtime::watcher` and `reflector` on `Api::<Pod>::all`, default config.
//!
//! The stream is driven by one task, as an application does; the store is up to date when
//! the reflector yields an event, so the sync phase ends at `InitDone` and the watch phase at
//! the `Apply` of the last event's resource version.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api,
    runtime::{WatchStreamExt, reflector, watcher},
};

use crate::{
    cpu::Mark,
    outcome::{Outcome, Phase},
    render::Rendered,
    server::Server,
};

/// The longest a phase may take before the run is reported as failed.
const PHASE_TIMEOUT: Duration = Duration::from_secs(900);

/// Syncs, releases the events, and waits until the last one is in the store.
pub(crate) async fn run(server: &Server, rendered: &Rendered) -> Outcome {
    let name = "kube-rs 5: watcher + reflector".to_owned();
    let last_rv = rendered.last_resource_version.to_string();
    let last_key = rendered.last_pod.clone();
    let start = Mark::now(Some(server.cpu()));
    let api = Api::<Pod>::all(server.client());
    let (reader, writer) = reflector::store::<Pod>();
    let stream = watcher(api, watcher::Config::default()).reflect(writer);
    let mut stream = std::pin::pin!(stream);
    let mut synced: Option<Mark> = None;
    let mut synced_objects = 0;
    let mut errors = 0usize;
    let drive = async {
        while let Some(event) = stream.next().await {
            match event {
                Ok(watcher::Event::InitDone) if synced.is_none() => {
                    synced = Some(Mark::now(Some(server.cpu())));
                    synced_objects = reader.len();
                    server.release();
                    if rendered.events.is_empty() {
                        return true;
                    }
                }
                Ok(watcher::Event::Apply(pod))
                    if pod.metadata.resource_version.as_deref() == Some(last_rv.as_str())
                        && pod.metadata.name.as_deref() == Some(last_key.name.as_str()) =>
                {
                    return true;
                }
                Ok(_) => {}
                Err(err) => {
                    errors += 1;
                    eprintln!("kube-rs watcher error: {err}");
                }
            }
        }
        false
    };
    let finished = tokio::time::timeout(PHASE_TIMEOUT, drive).await.unwrap_or(false);
    let done = Mark::now(Some(server.cpu()));
    let stored = reader.get(&reflector::ObjectRef::new(&last_key.name).within(&last_key.namespace));
    Outcome {
        name,
        sync: synced.map(|synced| Phase::between(&start, &synced)),
        watch: synced
            .filter(|_| finished)
            .map(|synced| Phase::between(&synced, &done)),
        synced_objects,
        final_objects: reader.len(),
        last_resource_version: stored
            .and_then(|pod| pod.metadata.resource_version.clone())
            .unwrap_or_default(),
        note: (errors > 0).then(|| format!("{errors} watcher errors")),
    }
}
