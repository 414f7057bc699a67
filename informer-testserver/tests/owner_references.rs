//! Owner references through `kube::Client`, checked as kube-apiserver 1.37 checks them
//! (apimachinery's `ValidateOwnerReferences`): each needs an apiVersion with a version, a kind,
//! a name and a uid; a core Event cannot own; one reference at most is the controller. A
//! create or an update (replace, patch) with any of these problems is a 422 Invalid naming
//! `metadata.ownerReferences[i].<field>`.

use informer_testserver::TestServer;
use k8s_openapi::{
    api::core::v1::ConfigMap,
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference},
};
use kube::{
    Api,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

fn reference(api_version: &str, kind: &str, name: &str, uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: api_version.into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        ..OwnerReference::default()
    }
}

fn controller(api_version: &str, kind: &str, name: &str, uid: &str) -> OwnerReference {
    OwnerReference {
        controller: Some(true),
        ..reference(api_version, kind, name, uid)
    }
}

fn config_map(name: &str, owners: Vec<OwnerReference>) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            owner_references: Some(owners),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// The Status of a refused write.
fn refusal<T: std::fmt::Debug>(result: kube::Result<T>) -> Box<kube::core::Status> {
    match result {
        Err(kube::Error::Api(status)) => status,
        other => panic!("not refused by the API: {other:?}"),
    }
}

/// `(field, reason, message)` of each cause.
fn causes(status: &kube::core::Status) -> Vec<(String, String, String)> {
    status
        .details
        .as_ref()
        .map(|details| {
            details
                .causes
                .iter()
                .map(|cause| (cause.field.clone(), cause.reason.clone(), cause.message.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn cause(field: &str, reason: &str, message: &str) -> (String, String, String) {
    (field.into(), reason.into(), message.into())
}

async fn create(api: &Api<ConfigMap>, name: &str, owners: Vec<OwnerReference>) -> kube::Result<ConfigMap> {
    api.create(&PostParams::default(), &config_map(name, owners))
        .await
}

#[tokio::test]
async fn a_reference_needs_api_version_kind_name_and_uid() {
    let server = TestServer::start().await.expect("start");
    let api: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let status = refusal(create(&api, "orphan", vec![reference("", "", "", "")]).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        "ConfigMap \"orphan\" is invalid: [\
         metadata.ownerReferences[0].apiVersion: Required value: must not be empty, \
         metadata.ownerReferences[0].kind: Required value: must not be empty, \
         metadata.ownerReferences[0].name: Required value: must not be empty, \
         metadata.ownerReferences[0].uid: Required value: must not be empty]"
    );
    let required = "Required value: must not be empty";
    assert_eq!(
        causes(&status),
        [
            cause(
                "metadata.ownerReferences[0].apiVersion",
                "FieldValueRequired",
                required
            ),
            cause("metadata.ownerReferences[0].kind", "FieldValueRequired", required),
            cause("metadata.ownerReferences[0].name", "FieldValueRequired", required),
            cause("metadata.ownerReferences[0].uid", "FieldValueRequired", required),
        ]
    );
    let details = status.details.as_ref().expect("details");
    assert_eq!(
        (details.name.as_str(), details.kind.as_str()),
        ("orphan", "ConfigMap")
    );
    // The second reference is the one missing its uid.
    let status = refusal(
        create(
            &api,
            "second",
            vec![
                reference("v1", "Secret", "s", "u1"),
                reference("v1", "Secret", "t", ""),
            ],
        )
        .await,
    );
    assert_eq!(
        causes(&status),
        [cause(
            "metadata.ownerReferences[1].uid",
            "FieldValueRequired",
            required
        )]
    );
    assert!(api.get_opt("orphan").await.expect("get").is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn an_api_version_must_parse_with_a_version() {
    let server = TestServer::start().await.expect("start");
    let api: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    for api_version in ["apps/", "/", "apps/v1/extra", "a/b/c"] {
        let status = refusal(create(&api, "owned", vec![reference(api_version, "Thing", "t", "u1")]).await);
        assert_eq!(
            causes(&status),
            [cause(
                "metadata.ownerReferences[0].apiVersion",
                "FieldValueInvalid",
                &format!("Invalid value: \"{api_version}\": must be <group>/<version> or <version>")
            )],
            "{api_version}"
        );
        assert_eq!(
            status.message,
            format!(
                "ConfigMap \"owned\" is invalid: metadata.ownerReferences[0].apiVersion: Invalid value: \"{api_version}\": must be <group>/<version> or <version>"
            )
        );
    }
    // One slash splits group and version, whichever side is empty.
    for (index, api_version) in ["v1", "apps/v1", "/v1", "example.com/v1alpha1"]
        .iter()
        .enumerate()
    {
        create(
            &api,
            &format!("owned-{index}"),
            vec![reference(api_version, "Thing", "t", "u1")],
        )
        .await
        .unwrap_or_else(|error| panic!("{api_version}: {error}"));
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_core_event_cannot_own() {
    let server = TestServer::start().await.expect("start");
    let api: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let status = refusal(create(&api, "noted", vec![reference("v1", "Event", "e", "u1")]).await);
    let message = "Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"e\",\"uid\":\"u1\"}: /v1, Kind=Event is disallowed from being an owner";
    assert_eq!(
        causes(&status),
        [cause("metadata.ownerReferences[0]", "FieldValueInvalid", message)]
    );
    assert_eq!(
        status.message,
        format!("ConfigMap \"noted\" is invalid: metadata.ownerReferences[0]: {message}")
    );
    // `/v1` parses as the core group's v1 too; the value shows what was set of the reference.
    let mut event = controller("/v1", "Event", "e", "u1");
    event.block_owner_deletion = Some(false);
    let status = refusal(create(&api, "noted", vec![event]).await);
    assert_eq!(
        causes(&status),
        [cause(
            "metadata.ownerReferences[0]",
            "FieldValueInvalid",
            "Invalid value: {\"apiVersion\":\"/v1\",\"kind\":\"Event\",\"name\":\"e\",\"uid\":\"u1\",\"controller\":true,\"blockOwnerDeletion\":false}: /v1, Kind=Event is disallowed from being an owner"
        )]
    );
    // Only the core group's Event is banned.
    create(
        &api,
        "noted",
        vec![reference("events.k8s.io/v1", "Event", "e", "u1")],
    )
    .await
    .expect("an events.k8s.io Event may own");
    server.shutdown().await;
}

#[tokio::test]
async fn one_reference_at_most_is_the_controller() {
    let server = TestServer::start().await.expect("start");
    let api: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let owners = vec![
        controller("apps/v1", "ReplicaSet", "a", "u1"),
        reference("v1", "Secret", "s", "u2"),
        controller("apps/v1", "Deployment", "b", "u3"),
    ];
    let status = refusal(create(&api, "contested", owners).await);
    let message = "Invalid value: [\
        {\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"a\",\"uid\":\"u1\",\"controller\":true},\
        {\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"name\":\"s\",\"uid\":\"u2\"},\
        {\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"b\",\"uid\":\"u3\",\"controller\":true}]: \
        Only one reference can have Controller set to true. Found \"true\" in references for ReplicaSet/a and Deployment/b";
    assert_eq!(
        causes(&status),
        [cause("metadata.ownerReferences", "FieldValueInvalid", message)]
    );
    // One controller beside owners that are not (`controller: false` included) is fine.
    let mut plain = reference("apps/v1", "Deployment", "b", "u3");
    plain.controller = Some(false);
    create(
        &api,
        "contested",
        vec![controller("apps/v1", "ReplicaSet", "a", "u1"), plain],
    )
    .await
    .expect("one controller");
    server.shutdown().await;
}

#[tokio::test]
async fn updates_and_patches_are_checked_too() {
    let server = TestServer::start().await.expect("start");
    let api: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let created = create(&api, "owned", vec![controller("v1", "Secret", "s", "u1")])
        .await
        .expect("created");
    let mut replaced = created.clone();
    replaced.metadata.owner_references = Some(vec![controller("v1", "Secret", "s", "")]);
    let status = refusal(api.replace("owned", &PostParams::default(), &replaced).await);
    assert_eq!(status.code, 422);
    assert_eq!(
        causes(&status),
        [cause(
            "metadata.ownerReferences[0].uid",
            "FieldValueRequired",
            "Required value: must not be empty"
        )]
    );
    assert_eq!(
        status.message,
        "ConfigMap \"owned\" is invalid: metadata.ownerReferences[0].uid: Required value: must not be empty"
    );
    let patch = json!({"metadata": {"ownerReferences": [
        {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "u1", "controller": true},
        {"apiVersion": "v1", "kind": "Secret", "name": "t", "uid": "u2", "controller": true},
    ]}});
    let status = refusal(
        api.patch("owned", &PatchParams::default(), &Patch::Merge(&patch))
            .await,
    );
    assert_eq!(
        causes(&status)
            .iter()
            .map(|(field, _, _)| field.as_str())
            .collect::<Vec<_>>(),
        ["metadata.ownerReferences"]
    );
    assert!(
        status
            .message
            .ends_with("Found \"true\" in references for Secret/s and Secret/t")
    );
    let stored = api.get("owned").await.expect("get");
    assert_eq!(
        stored.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(
        stored.metadata.owner_references,
        created.metadata.owner_references
    );
    server.shutdown().await;
}

// kube-apiserver's ValidateObjectMeta: the name's problems come first, in the same 422.
#[tokio::test]
async fn name_and_owner_problems_are_reported_together() {
    let server = TestServer::start().await.expect("start");
    let api: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let status = refusal(create(&api, "Bad_Name", vec![reference("v1", "Secret", "s", "")]).await);
    let fields: Vec<String> = causes(&status).into_iter().map(|(field, _, _)| field).collect();
    assert_eq!(fields, ["metadata.name", "metadata.ownerReferences[0].uid"]);
    assert!(
        status
            .message
            .starts_with("ConfigMap \"Bad_Name\" is invalid: [metadata.name: Invalid value: \"Bad_Name\": "),
        "{}",
        status.message
    );
    server.shutdown().await;
}
