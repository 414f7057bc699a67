//! The `default` ServiceAccount of every namespace, as kube-controller-manager's
//! serviceaccounts controller keeps it: created with the namespace, and created again when it
//! is deleted while its namespace is active. A pod that names no service account runs as
//! `default`, so pod admission can refuse a pod whose service account is missing, as
//! kube-apiserver's `ServiceAccount` plugin does.

use serde_json::{Value, json};

use crate::admission::plugin::{Cascade, Plugin};
use crate::registry::ResourceType;
use crate::storage::state::State;
use crate::storage::store::meta_str;

/// The service account every namespace has.
pub(crate) const DEFAULT_SERVICE_ACCOUNT: &str = "default";

/// Keeps a `default` ServiceAccount in every active namespace.
pub(crate) struct DefaultServiceAccounts;

impl Plugin for DefaultServiceAccounts {
    fn stored(&self, writes: &mut dyn Cascade, rt: &ResourceType, object: &Value) {
        if rt.is_core("Namespace") && !writes.is_dry_run() && is_active(object) {
            let namespace = meta_str(object, "name").unwrap_or_default().to_owned();
            ensure_default(writes, &namespace);
        }
    }

    fn removed(&self, writes: &mut dyn Cascade, rt: &ResourceType, object: &Value) {
        if !rt.is_core("ServiceAccount")
            || writes.is_dry_run()
            || meta_str(object, "name") != Some(DEFAULT_SERVICE_ACCOUNT)
        {
            return;
        }
        let namespace = meta_str(object, "namespace").unwrap_or_default().to_owned();
        if namespace_is_active(writes.state(), &namespace) {
            ensure_default(writes, &namespace);
        }
    }
}

/// Whether a namespace object is active (neither terminating nor being deleted).
fn is_active(namespace: &Value) -> bool {
    namespace["status"]["phase"] == "Active" && namespace["metadata"]["deletionTimestamp"].is_null()
}

fn namespace_is_active(state: &State, name: &str) -> bool {
    state
        .registry
        .get("", "v1", "namespaces")
        .and_then(|rt| state.store.get(rt, &(String::new(), name.to_owned())))
        .is_some_and(is_active)
}

/// Creates the `default` ServiceAccount of `namespace` unless it exists.
fn ensure_default(writes: &mut dyn Cascade, namespace: &str) {
    let state = writes.state();
    let Some(rt) = state.registry.get("", "v1", "serviceaccounts").cloned() else {
        return;
    };
    let key = (namespace.to_owned(), DEFAULT_SERVICE_ACCOUNT.to_owned());
    if state.store.get(&rt, &key).is_some() {
        return;
    }
    let account = json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": namespace},
    });
    // The namespace is active and the account missing: nothing refuses this create.
    let _ = writes.create_as_server(&rt, account);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::namespace_lifecycle::create_test_namespace;
    use crate::registry::{Registry, builtin_types};

    fn state() -> (State, ResourceType) {
        let mut s = State::new(Registry::with_types(builtin_types()), 100);
        create_test_namespace(&mut s, "shop");
        let accounts = s
            .registry
            .get("", "v1", "serviceaccounts")
            .cloned()
            .expect("served");
        (s, accounts)
    }

    fn pod(name: &str, spec: Value) -> Value {
        json!({"metadata": {"name": name}, "spec": spec})
    }

    // kube: pkg/controller/serviceaccount/serviceaccounts_controller_test.go,
    // TestServiceAccountCreation: its cases of a new active namespace, a deleted service
    // account and a terminating namespace.
    #[test]
    fn every_active_namespace_has_its_default_service_account() {
        let (mut s, accounts) = state();
        let account = s
            .get(&accounts, Some("shop"), "default")
            .expect("created with the namespace");
        assert!(account["metadata"]["uid"].is_string());
        s.write()
            .delete(&accounts, Some("shop"), "default", &Value::Null)
            .expect("deleted");
        let again = s.get(&accounts, Some("shop"), "default").expect("created again");
        assert_ne!(again["metadata"]["uid"], account["metadata"]["uid"]);
        // a terminating namespace's account is deleted with it, not created again
        let namespaces = s.registry.get("", "v1", "namespaces").cloned().expect("served");
        s.write()
            .delete(&namespaces, None, "shop", &Value::Null)
            .expect("deleted");
        assert!(s.get(&accounts, Some("shop"), "default").is_err());
        assert!(
            s.get(&namespaces, None, "shop").is_err(),
            "the namespace emptied and ended"
        );
    }

    // kube: plugin/pkg/admission/serviceaccount/admission_test.go, TestDeniesInvalidServiceAccount
    // and TestIgnoresMirrorPod.
    #[test]
    fn a_pod_needs_its_service_account_and_a_mirror_pod_is_left_alone() {
        let (mut s, accounts) = state();
        let pods = s.registry.get("", "v1", "pods").cloned().expect("served");
        let containers = json!({"containers": [{"name": "c", "image": "i"}]});
        let created = s
            .write()
            .create(&pods, Some("shop"), pod("web", containers.clone()))
            .expect("the default account exists");
        assert_eq!(created["spec"]["serviceAccountName"], "default");
        let mut named = containers.clone();
        named["serviceAccountName"] = json!("robot");
        let err = s
            .write()
            .create(&pods, Some("shop"), pod("bot", named.clone()))
            .expect_err("no such account");
        assert_eq!(
            (err.code, err.message.as_str()),
            (
                403,
                r#"pods "bot" is forbidden: error looking up service account shop/robot: serviceaccount "robot" not found"#
            )
        );
        s.write()
            .create(&accounts, Some("shop"), json!({"metadata": {"name": "robot"}}))
            .expect("account created");
        s.write()
            .create(&pods, Some("shop"), pod("bot", named))
            .expect("now admitted");
        let mut mirror = pod("static", containers);
        mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "hash"});
        let mirrored = s.write().create(&pods, Some("shop"), mirror).expect("created");
        assert!(mirrored["spec"].get("serviceAccountName").is_none());
        assert!(mirrored["spec"].get("volumes").is_none());
    }
}
