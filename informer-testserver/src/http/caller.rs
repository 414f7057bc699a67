//! The caller of a request, as `UserInfo`.
//!
//! Who a caller is, and who a token names, the server learns without checking anything (it has
//! no credentials to check):
//! - a request without an `Authorization` header is `system:anonymous` in the group
//!   `system:unauthenticated`, as with kube-apiserver's anonymous authentication;
//! - a bearer token that is a JWT (a service account token) names the user of its `sub` claim;
//!   `system:serviceaccount:NS:NAME` users are in `system:serviceaccounts` and
//!   `system:serviceaccounts:NS`;
//! - any other bearer token names the user of that name (the token `alice` is user `alice`);
//! - basic authentication names the user of its user name.
//!
//! Authenticated users are also in `system:authenticated`. A `TokenReview` reviews its
//! `spec.token` by the same rules, so every non-empty token is authenticated.

use base64::Engine as _;
use serde_json::{Value, json};

/// The `UserInfo` of the caller whose request carries this `Authorization` header value (empty
/// when there is none).
pub(crate) fn caller(authorization: &str) -> Value {
    let authorization = authorization.trim();
    if let Some(token) = authorization.strip_prefix("Bearer ") {
        return user_of_token(token.trim());
    }
    if let Some(user) = authorization
        .strip_prefix("Basic ")
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b.trim()).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.split(':').next().map(str::to_string))
        .filter(|user| !user.is_empty())
    {
        return authenticated(&user, &[]);
    }
    json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]})
}

/// The `UserInfo` a bearer token names (see the module doc).
pub(crate) fn user_of_token(token: &str) -> Value {
    match jwt_subject(token) {
        Some(subject) => {
            let namespace = subject
                .strip_prefix("system:serviceaccount:")
                .and_then(|rest| rest.split(':').next())
                .map(str::to_string);
            match namespace {
                Some(ns) => authenticated(
                    &subject,
                    &["system:serviceaccounts", &format!("system:serviceaccounts:{ns}")],
                ),
                None => authenticated(&subject, &[]),
            }
        }
        None => authenticated(token, &[]),
    }
}

fn authenticated(username: &str, groups: &[&str]) -> Value {
    let mut all: Vec<&str> = groups.to_vec();
    all.push("system:authenticated");
    json!({"username": username, "groups": all})
}

/// The `sub` claim of a JWT, when `token` is one.
fn jwt_subject(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims["sub"].as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_are_named_by_their_credentials() {
        assert_eq!(caller("")["username"], "system:anonymous");
        assert_eq!(caller("Bearer alice")["username"], "alice");
        assert_eq!(caller("Bearer alice")["groups"], json!(["system:authenticated"]));
        let basic = base64::engine::general_purpose::STANDARD.encode("bob:secret");
        assert_eq!(caller(&format!("Basic {basic}"))["username"], "bob");
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(r#"{"sub":"system:serviceaccount:ns:builder"}"#);
        let sa = caller(&format!("Bearer eyJhbGciOiJSUzI1NiJ9.{payload}.c2ln"));
        assert_eq!(sa["username"], "system:serviceaccount:ns:builder");
        assert_eq!(
            sa["groups"],
            json!([
                "system:serviceaccounts",
                "system:serviceaccounts:ns",
                "system:authenticated"
            ])
        );
    }
}
