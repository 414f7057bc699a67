//! The service account token controller over HTTP.

mod support;

use base64::Engine;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::{
    Api, ResourceExt,
    api::{ObjectMeta, PostParams},
};
use serde_json::json;
use support::{TestResult, wait_for};

fn token_secret(name: &str, account: &str) -> Secret {
    serde_json::from_value(json!({
        "metadata": {"name": name, "annotations": {"kubernetes.io/service-account.name": account}},
        "type": "kubernetes.io/service-account-token",
    }))
    .expect("a valid secret")
}

// kube: pkg/controller/serviceaccount/tokens_controller_test.go, TestTokenCreation's
// "added token secret without token data" and "added token secret for missing
// serviceaccount" cases, over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_secrets_of_a_service_account_are_filled() -> TestResult {
    let cluster = support::cluster().await;
    let client = cluster.client();
    let accounts: Api<ServiceAccount> = Api::default_namespaced(client.clone());
    let builder = ServiceAccount {
        metadata: ObjectMeta {
            name: Some("builder".into()),
            ..ObjectMeta::default()
        },
        ..ServiceAccount::default()
    };
    let builder = accounts.create(&PostParams::default(), &builder).await?;
    let secrets: Api<Secret> = Api::default_namespaced(client.clone());
    secrets
        .create(&PostParams::default(), &token_secret("builder-token", "builder"))
        .await?;
    secrets
        .create(&PostParams::default(), &token_secret("ghost-token", "ghost"))
        .await?;

    wait_for("the token", async || {
        let secret = secrets.get("builder-token").await.expect("the secret");
        secret.data.is_some_and(|data| data.contains_key("token"))
    })
    .await;
    let secret = secrets.get("builder-token").await?;
    assert_eq!(
        secret.annotations().get("kubernetes.io/service-account.uid"),
        builder.metadata.uid.as_ref()
    );
    let data = secret.data.unwrap_or_default();
    assert_eq!(data["namespace"].0, b"default");
    let token = String::from_utf8(data["token"].0.clone())?;
    let payload = token.split('.').nth(1).expect("a JWT");
    let claims: serde_json::Value =
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload)?)?;
    assert_eq!(claims["sub"], "system:serviceaccount:default:builder");

    wait_for("the secret of a missing account deleted", async || {
        secrets.get_opt("ghost-token").await.expect("a get").is_none()
    })
    .await;
    cluster.shutdown().await?;
    Ok(())
}
