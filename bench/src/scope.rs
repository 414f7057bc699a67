//! The scope of the scoped consumer: which pods it selects, by label.

use informer_runtime::scope::Scope;
use k8s_openapi::api::core::v1::Pod;

use crate::generator::APPS;

/// Apps in the scope, of [`APPS`]: a tenth of the pods.
const APPS_IN_SCOPE: usize = APPS / 10;

/// The apps the scope selects.
pub(crate) fn apps_in_scope() -> Vec<String> {
    (0..APPS_IN_SCOPE).map(|app| format!("app-{app:02}")).collect()
}

/// The scope of the scoped consumer: the pods of [`APPS_IN_SCOPE`] apps, in every namespace.
pub(crate) fn scope() -> Scope<Pod> {
    Scope::all()
        .labels(&format!("app in ({})", apps_in_scope().join(",")))
        .expect("the bench's scope is a valid label selector")
}
