//! The generated decoders on real objects: an object of every kind the embedded API server
//! serves, with every field of its message set, read back over HTTP in protobuf and in JSON.

use std::{collections::BTreeMap, fmt::Debug};

use futures::{FutureExt, future::BoxFuture};
use http_body_util::BodyExt;
use informer_testserver::TestServer;
use kube::{client::Body, core::GroupVersionKind, discovery};
use serde::de::DeserializeOwned;
use serde_json::json;

use informer_apimachinery::protobuf::{MEDIA_TYPE, from_slice, samples::sample_of};

/// What reading one kind showed.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Not served by the embedded server (an older or alpha version).
    NotServed,
    /// The server refused the sample (an object it validates).
    Refused,
    /// Read back in protobuf and JSON: the generated decode equals the JSON decode and the
    /// serde decode, or what differs.
    Read(Option<String>),
}

type Check = Box<dyn FnOnce(kube::Client, &TestServer) -> BoxFuture<'_, (String, Outcome)>>;

/// One check per resource kind with a generated decoder.
#[derive(Default)]
struct Kinds {
    checks: Vec<Check>,
}

impl k8s_protobuf::TypeVisitor for Kinds {
    fn visit<T>(&mut self, path: &'static str)
    where
        T: k8s_protobuf::Decode + DeserializeOwned + PartialEq + Debug + 'static,
    {
        let Some(decoder) = k8s_protobuf::kind_decoder::<T>() else {
            return;
        };
        self.checks.push(Box::new(move |client, server| {
            async move {
                let name = format!("{} {}", decoder.api_version(), decoder.kind());
                (name, check::<T>(client, server, decoder, path).await)
            }
            .boxed()
        }));
    }
}

async fn check<T>(
    client: kube::Client,
    server: &TestServer,
    decoder: &'static k8s_protobuf::KindDecoder,
    path: &'static str,
) -> Outcome
where
    T: DeserializeOwned + PartialEq + Debug + 'static,
{
    let (group, version) = decoder
        .api_version()
        .rsplit_once('/')
        .unwrap_or(("", decoder.api_version()));
    let gvk = GroupVersionKind::gvk(group, version, decoder.kind());
    let Ok((resource, capabilities)) = discovery::pinned_kind(&client, &gvk).await else {
        return Outcome::NotServed;
    };
    if !capabilities.supports_operation(discovery::verbs::GET)
        || !capabilities.supports_operation(discovery::verbs::CREATE)
    {
        // reviews are answered, never stored; component statuses are read-only
        return Outcome::NotServed;
    }
    let mut object = sample_of(path, 2).expect("the kind's message is in the table");
    object["apiVersion"] = json!(decoder.api_version());
    object["kind"] = json!(decoder.kind());
    let namespaced = capabilities.scope == discovery::Scope::Namespaced;
    // versions of one resource share their objects: a name per version
    let name = format!("sample-{version}");
    object["metadata"] = if namespaced {
        json!({"name": name, "namespace": "default", "labels": {"a": "b"}, "annotations": {"c": "d"}})
    } else {
        json!({"name": name, "labels": {"a": "b"}, "annotations": {"c": "d"}})
    };
    admissible(&mut object);
    if server.create(object).is_err() {
        return Outcome::Refused;
    }
    let url = if namespaced {
        format!(
            "/{}/namespaces/default/{}/{name}",
            api_root(group, version),
            resource.plural
        )
    } else {
        format!("/{}/{}/{name}", api_root(group, version), resource.plural)
    };
    let in_protobuf = get(&client, &url, MEDIA_TYPE).await;
    let in_json = get(&client, &url, "application/json").await;
    let envelope = k8s_protobuf::Envelope::parse(&in_protobuf).expect("a protobuf document");
    let mut generated = None;
    decoder
        .decode::<T>(envelope.raw, k8s_protobuf::Context::new(), &mut generated)
        .expect("the generated decoder reads the server's bytes");
    let generated = generated.expect("the decoder fills its type");
    let by_json: T = serde_json::from_slice(&in_json).expect("the JSON decodes");
    let by_serde: T = from_slice(&in_protobuf).expect("the serde decoder reads the server's bytes");
    let mut differences = Vec::new();
    if generated != by_json {
        differences.push(format!("JSON: {by_json:?}"));
    }
    if generated != by_serde {
        differences.push(format!("serde: {by_serde:?}"));
    }
    Outcome::Read(
        (!differences.is_empty())
            .then(|| format!("generated: {generated:?}\n  {}", differences.join("\n  "))),
    )
}

/// Replaces the sample values kube-apiserver's admission refuses: a pod's priority comes from
/// an existing PriorityClass and its service account exists (it names no RuntimeClass), a
/// Service's cluster IP and node ports come from their ranges.
fn admissible(object: &mut serde_json::Value) {
    match (object["apiVersion"].as_str(), object["kind"].as_str()) {
        (Some("v1"), Some("Pod")) => {
            let spec = &mut object["spec"];
            spec["priorityClassName"] = json!("system-node-critical");
            spec["priority"] = json!(2_000_001_000);
            // a service account that exists, no RuntimeClass that does not
            spec["serviceAccountName"] = json!("default");
            spec["serviceAccount"] = json!("default");
            if let Some(spec) = spec.as_object_mut() {
                spec.remove("runtimeClassName");
                spec.remove("overhead");
            }
        }
        (Some("v1"), Some("Service")) => {
            let spec = &mut object["spec"];
            spec["clusterIP"] = json!("10.96.0.10");
            spec["clusterIPs"] = json!(["10.96.0.10"]);
            spec["healthCheckNodePort"] = json!(30001);
            for (port, node_port) in spec["ports"].as_array_mut().into_iter().flatten().zip(30002..) {
                port["nodePort"] = json!(node_port);
            }
        }
        _ => {}
    }
}

fn api_root(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

async fn get(client: &kube::Client, url: &str, accept: &str) -> Vec<u8> {
    let request = http::Request::get(url)
        .header(http::header::ACCEPT, accept)
        .body(Body::empty())
        .expect("a request");
    let response = client.send(request).await.expect("an answer");
    assert!(response.status().is_success(), "{url}: {}", response.status());
    response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes()
        .to_vec()
}

/// An object of every served kind, with every field of its message set, reads the same
/// through the generated decoder as through the JSON answer and the serde decoder.
#[tokio::test]
async fn every_served_kind_reads_the_same_in_protobuf_and_json() {
    let server = TestServer::start().await.expect("server");
    let client = server.client().expect("client");
    let mut kinds = Kinds::default();
    k8s_protobuf::visit_types(&mut kinds);
    let mut outcomes = BTreeMap::new();
    for check in kinds.checks {
        let (name, outcome) = check(client.clone(), &server).await;
        outcomes.insert(name, outcome);
    }
    let differences: Vec<String> = outcomes
        .iter()
        .filter_map(|(name, outcome)| match outcome {
            Outcome::Read(Some(difference)) => Some(format!("{name}:\n  {difference}")),
            _ => None,
        })
        .collect();
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    let read: Vec<&String> = outcomes
        .iter()
        .filter(|(_, outcome)| matches!(outcome, Outcome::Read(None)))
        .map(|(name, _)| name)
        .collect();
    let refused: Vec<&String> = outcomes
        .iter()
        .filter(|(_, outcome)| **outcome == Outcome::Refused)
        .map(|(name, _)| name)
        .collect();
    assert!(
        read.len() >= 55,
        "only {} kinds read: {read:?}; refused: {refused:?}",
        read.len()
    );
    // a CRD's sample is no valid CRD (its name must be its plural and group)
    assert!(refused.len() <= 1, "the server refused {refused:?}");
}
