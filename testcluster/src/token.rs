//! The service account token controller: Secrets of type
//! `kubernetes.io/service-account-token` that name a ServiceAccount
//! (`kubernetes.io/service-account.name`) get its uid annotation and the data kube's tokens
//! controller writes (`token`, `namespace`, `ca.crt`); those whose ServiceAccount does not
//! exist are deleted (kube's `pkg/controller/serviceaccount/tokens_controller.go`).
//!
//! The token is a JWT with the claims of a legacy service account token, but not signed by a
//! key anyone can verify: the test server reads the user from a JWT's `sub` without checking
//! it. `ca.crt` is empty: the server speaks plain HTTP.

use std::{collections::BTreeMap, sync::Arc};

use base64::Engine;
use informer_runtime::{Action, Controller, Manager, ObjectKey, ScopedLister, scope};
use k8s_openapi::{
    ByteString,
    api::core::v1::{Secret, ServiceAccount},
};
use kube::{Api, ResourceExt, core::Selector};
use serde_json::json;

use crate::api;

/// The controller's name in logs.
pub(crate) const NAME: &str = "serviceaccount-token";

/// The type of the secrets the controller fills.
pub(crate) const TOKEN_TYPE: &str = "kubernetes.io/service-account-token";
/// The annotation naming a secret's service account.
pub(crate) const ACCOUNT_NAME: &str = "kubernetes.io/service-account.name";
/// The annotation of the service account's uid.
pub(crate) const ACCOUNT_UID: &str = "kubernetes.io/service-account.uid";

/// What fails a reconcile of a token secret.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The service account cache refused the question.
    #[error("failed to read the service account cache: {0}")]
    Cache(#[from] scope::Error),
    /// A write or read of the API failed.
    #[error("failed to {action} secret {name}: {source}")]
    Api {
        /// What was done.
        action: &'static str,
        /// The secret.
        name: String,
        /// The API's answer.
        source: kube::Error,
    },
}

struct Context {
    client: kube::Client,
    accounts: ScopedLister<ServiceAccount>,
}

/// Adds the controller to `manager`.
pub(crate) fn register(manager: &mut Manager) {
    let factory = manager.factory().clone();
    let secrets = factory.informer::<Secret>().lister();
    let controller = Controller::<Secret>::new(&factory)
        .name(NAME)
        .watches::<ServiceAccount, _>(move |account| secrets_of(&secrets, account));
    let context = Arc::new(Context {
        client: manager.client(),
        accounts: factory.informer::<ServiceAccount>().lister(),
    });
    manager.add_controller(controller, reconcile, api::retry, context);
}

/// The token secrets of the account's namespace that name it.
fn secrets_of(secrets: &ScopedLister<Secret>, account: &ServiceAccount) -> Vec<ObjectKey> {
    let namespace = account.namespace().unwrap_or_default();
    let all = secrets
        .by_namespace(&namespace)
        .list(&Selector::default())
        .unwrap_or_default();
    all.iter()
        .filter(|secret| secret.type_.as_deref() == Some(TOKEN_TYPE))
        .filter(|secret| secret.annotations().get(ACCOUNT_NAME) == Some(&account.name_any()))
        .map(|secret| ObjectKey::new(&namespace, &secret.name_any()))
        .collect()
}

async fn reconcile(secret: Arc<Secret>, context: Arc<Context>) -> Result<Action, Error> {
    let Some(account_name) = secret
        .annotations()
        .get(ACCOUNT_NAME)
        .filter(|_| secret.type_.as_deref() == Some(TOKEN_TYPE))
    else {
        return Ok(Action::await_change());
    };
    let namespace = secret.namespace().unwrap_or_default();
    let secrets: Api<Secret> = Api::namespaced(context.client.clone(), &namespace);
    let api_error = |action| {
        let name = secret.name_any();
        move |source| Error::Api { action, name, source }
    };
    let cached = context.accounts.by_namespace(&namespace).get(account_name)?;
    let account = match cached {
        Some(account) => Some(account),
        // the cache may trail a service account created with the secret: ask the server
        None => Api::<ServiceAccount>::namespaced(context.client.clone(), &namespace)
            .get_opt(account_name)
            .await
            .map_err(api_error("read the service account of"))?
            .map(Arc::new),
    };
    let wanted_uid = secret.annotations().get(ACCOUNT_UID);
    let Some(account) = account.filter(|a| wanted_uid.is_none_or(|uid| a.uid().as_ref() == Some(uid))) else {
        api::delete(&secrets, &secret.name_any())
            .await
            .map_err(api_error("delete"))?;
        return Ok(Action::await_change());
    };
    if is_filled(&secret) {
        return Ok(Action::await_change());
    }
    let data: BTreeMap<&str, ByteString> = BTreeMap::from([
        ("token", ByteString(token(&secret, &account).into_bytes())),
        ("namespace", ByteString(namespace.clone().into_bytes())),
        ("ca.crt", ByteString(Vec::new())),
    ]);
    let patch = json!({"metadata": {"annotations": {ACCOUNT_UID: account.uid()}}, "data": data});
    api::merge(&secrets, &secret.name_any(), &patch)
        .await
        .map_err(api_error("fill"))?;
    Ok(Action::await_change())
}

/// Whether the secret has a token and the account's uid.
fn is_filled(secret: &Secret) -> bool {
    let token = secret.data.as_ref().and_then(|data| data.get("token"));
    token.is_some_and(|token| !token.0.is_empty()) && secret.annotations().contains_key(ACCOUNT_UID)
}

/// A JWT with the claims of a legacy service account token.
fn token(secret: &Secret, account: &ServiceAccount) -> String {
    let namespace = account.namespace().unwrap_or_default();
    let claims = json!({
        "iss": "kubernetes/serviceaccount",
        "kubernetes.io/serviceaccount/namespace": namespace,
        "kubernetes.io/serviceaccount/secret.name": secret.name_any(),
        "kubernetes.io/serviceaccount/service-account.name": account.name_any(),
        "kubernetes.io/serviceaccount/service-account.uid": account.uid(),
        "sub": format!("system:serviceaccount:{namespace}:{}", account.name_any()),
    });
    let encode = |value: &serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
    };
    let signature = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("unsigned");
    format!(
        "{}.{}.{signature}",
        encode(&json!({"alg": "RS256", "kid": ""})),
        encode(&claims)
    )
}
