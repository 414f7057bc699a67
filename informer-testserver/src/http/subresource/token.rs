//! `serviceaccounts/token`: a `TokenRequest` (`authentication.k8s.io/v1`) answered with a
//! token for the service account, as kube-apiserver's token REST answers it: the request's
//! metadata filled in, audiences defaulted to the server's
//! ([`DEFAULT_AUDIENCE`]), `expirationSeconds` defaulted to 3600 and refused below 600, a
//! `boundObjectRef` (Pod, Node or Secret) checked to exist, and `status.token` with
//! `status.expirationTimestamp`.
//!
//! The token is a JWT with kube-apiserver's claims (`iss`, `sub`
//! `system:serviceaccount:<ns>:<name>`, `aud`, `exp`, `iat`, `nbf`, `jti`, and `kubernetes.io`
//! naming the namespace, the service account and the bound objects), in kube-apiserver's RS256
//! form, whose signature is 256 random bytes: no key signs it, so nothing can verify it (a real
//! API server refuses it, and this server does not authenticate requests).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::status::{ApiError, FieldCause};
use crate::storage::state::{State, new_uid};
use crate::storage::store::meta_str;

/// The issuer and default audience of tokens, as a kubeadm or kind cluster sets them.
pub(crate) const DEFAULT_AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";
/// The length of an RS256 signature with a 2048-bit key.
const SIGNATURE_LENGTH: usize = 256;
/// `expirationSeconds` when the request has none.
const DEFAULT_EXPIRATION: i64 = 3600;
/// The shortest expiration kube-apiserver accepts (ten minutes).
const MIN_EXPIRATION: i64 = 600;
/// The longest (2^32 seconds).
const MAX_EXPIRATION: i64 = 1 << 32;

fn token_request_type() -> ResourceType {
    ResourceType::new(
        "authentication.k8s.io",
        "v1",
        "TokenRequest",
        "tokenrequests",
        true,
    )
}

/// The answered `TokenRequest` for the service account `name` of `ns`.
pub(crate) fn request(
    state: &State,
    service_accounts: &ResourceType,
    ns: &str,
    name: &str,
    mut request: Value,
) -> Result<Value, ApiError> {
    if !request.is_object() {
        request = json!({});
    }
    check_names(&request, ns, name)?;
    let account = state.get(service_accounts, Some(ns), name)?;
    let spec = &mut request["spec"];
    if spec["audiences"].as_array().is_none_or(Vec::is_empty) {
        spec["audiences"] = json!([DEFAULT_AUDIENCE]);
    }
    let expiration = spec["expirationSeconds"].as_i64().unwrap_or(DEFAULT_EXPIRATION);
    spec["expirationSeconds"] = json!(expiration);
    check_expiration(expiration)?;
    let bound = bound_objects(state, ns, name, &request["spec"]["boundObjectRef"])?;
    let now = jiff::Timestamp::now().as_second();
    let expires = now + expiration;
    let claims = claims(&account, &request["spec"]["audiences"], bound, now, expires);
    let metadata = &mut request["metadata"];
    metadata["name"] = json!(name);
    metadata["namespace"] = json!(ns);
    metadata["creationTimestamp"] = json!(timestamp(now));
    request["apiVersion"] = json!("authentication.k8s.io/v1");
    request["kind"] = json!("TokenRequest");
    request["status"] = json!({"token": sign(&claims), "expirationTimestamp": timestamp(expires)});
    Ok(request)
}

/// A name or namespace in the body must be those of the URL.
fn check_names(request: &Value, ns: &str, name: &str) -> Result<(), ApiError> {
    let mismatch = |field: &str, value: &str, what: &str| {
        ApiError::invalid_causes(
            &token_request_type(),
            name,
            &[FieldCause::invalid(
                field,
                value,
                &format!("must match the service account {what} if specified"),
            )],
        )
    };
    match (meta_str(request, "name"), meta_str(request, "namespace")) {
        (Some(body), _) if !body.is_empty() && body != name => Err(mismatch("metadata.name", body, "name")),
        (_, Some(body)) if !body.is_empty() && body != ns => {
            Err(mismatch("metadata.namespace", body, "namespace"))
        }
        _ => Ok(()),
    }
}

fn check_expiration(seconds: i64) -> Result<(), ApiError> {
    let problem = if seconds < MIN_EXPIRATION {
        "may not specify a duration less than 10 minutes"
    } else if seconds > MAX_EXPIRATION {
        "may not specify a duration larger than 2^32 seconds"
    } else {
        return Ok(());
    };
    let cause = FieldCause {
        field: "spec.expirationSeconds".into(),
        cause_type: "Invalid value".into(),
        detail: format!("{seconds}: {problem}"),
    };
    Err(ApiError::invalid_causes(&token_request_type(), "", &[cause]))
}

/// The objects a token is bound to, as `kubernetes.io` claims (`pod`, `node`, `secret`).
fn bound_objects(state: &State, ns: &str, account: &str, reference: &Value) -> Result<Value, ApiError> {
    if !reference.is_object() {
        return Ok(json!({}));
    }
    let kind = reference["kind"].as_str().unwrap_or_default();
    let api_version = reference["apiVersion"].as_str().unwrap_or_default();
    let object_name = reference["name"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let (plural, claim, namespaced) = match (group, kind) {
        ("", "Pod") => ("pods", "pod", true),
        ("", "Node") => ("nodes", "node", false),
        ("", "Secret") => ("secrets", "secret", true),
        _ => {
            return Err(ApiError::bad_request(format!(
                "cannot bind token to object of type {group}/{version}, Kind={kind}"
            )));
        }
    };
    let rt = state
        .registry
        .get("", "v1", plural)
        .cloned()
        .ok_or_else(ApiError::unknown_path)?;
    let object = state.get(&rt, namespaced.then_some(ns), object_name)?;
    let uid = meta_str(&object, "uid").unwrap_or_default();
    if kind == "Pod" {
        let runs_as = object["spec"]["serviceAccountName"]
            .as_str()
            .filter(|s| !s.is_empty())
            .unwrap_or("default");
        if runs_as != account {
            return Err(ApiError::bad_request(format!(
                "cannot bind token for serviceaccount {account:?} to pod running with different serviceaccount name."
            )));
        }
    }
    if let Some(expected) = reference["uid"].as_str().filter(|u| !u.is_empty())
        && expected != uid
    {
        return Err(ApiError::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {kind} {object_name:?}: the UID in the bound object reference ({expected}) does not match the UID in record. The object might have been deleted and then recreated"
            ),
        )
        .with_details(json!({"name": object_name, "kind": kind})));
    }
    Ok(json!({claim: {"name": object_name, "uid": uid}}))
}

/// The token's claims.
fn claims(account: &Value, audiences: &Value, bound: Value, now: i64, expires: i64) -> Value {
    let ns = meta_str(account, "namespace").unwrap_or_default();
    let name = meta_str(account, "name").unwrap_or_default();
    let mut kubernetes = json!({
        "namespace": ns,
        "serviceaccount": {"name": name, "uid": meta_str(account, "uid").unwrap_or_default()},
    });
    if let (Some(map), Some(bound)) = (kubernetes.as_object_mut(), bound.as_object()) {
        map.extend(bound.clone());
    }
    json!({
        "aud": audiences,
        "exp": expires,
        "iat": now,
        "iss": DEFAULT_AUDIENCE,
        "jti": new_uid(),
        "kubernetes.io": kubernetes,
        "nbf": now,
        "sub": format!("system:serviceaccount:{ns}:{name}"),
    })
}

/// `header.payload.signature`, base64url without padding; the signature is random bytes.
fn sign(claims: &Value) -> String {
    let header = json!({"alg": "RS256", "kid": "informer-testserver"});
    let signed = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature: Vec<u8> = (0..SIGNATURE_LENGTH).map(|_| fastrand::u8(..)).collect();
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature))
}

fn timestamp(second: i64) -> String {
    jiff::Timestamp::from_second(second)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_jwts_of_kube_apiservers_shape() {
        let account = json!({"metadata": {"name": "sa", "namespace": "ns", "uid": "u1"}});
        let claims = claims(&account, &json!(["api"]), json!({}), 100, 4000);
        let token = sign(&claims);
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        let payload: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).expect("base64")).expect("json");
        assert_eq!(payload["sub"], "system:serviceaccount:ns:sa");
        assert_eq!(payload["kubernetes.io"]["serviceaccount"]["uid"], "u1");
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).expect("base64")).expect("json");
        assert_eq!(header["alg"], "RS256");
        assert_eq!(
            URL_SAFE_NO_PAD.decode(parts[2]).expect("base64").len(),
            SIGNATURE_LENGTH
        );
    }

    #[test]
    fn short_expirations_are_invalid() {
        let err = check_expiration(599).expect_err("short");
        assert_eq!(
            err.message,
            "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"
        );
        assert!(check_expiration(600).is_ok());
    }
}
