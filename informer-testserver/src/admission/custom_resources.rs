//! Objects of CRD-defined types checked against their version's schema: unknown fields are
//! refused (`Strict`) or dropped (with warnings under `Warn`), invalid values are a 422.

use serde_json::Value;

use crate::admission::context::WriteContext;
use crate::admission::crd_schema;
use crate::admission::field_validation::Findings;
use crate::admission::plugin::Plugin;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::state::State;
use crate::storage::store::meta_str;

/// The schema check of custom resources as a write plugin.
pub(crate) struct CustomResourceSchemas;

impl Plugin for CustomResourceSchemas {
    fn admit_create(
        &self,
        state: &State,
        context: &mut WriteContext,
        rt: &ResourceType,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        check(state, context, rt, object)
    }

    fn admit_update(
        &self,
        state: &State,
        context: &mut WriteContext,
        rt: &ResourceType,
        _old: &Value,
        new: &mut Value,
    ) -> Result<(), ApiError> {
        check(state, context, rt, new)
    }
}

/// Prunes and validates `object` by the schema of the CRD version defining `rt`, if any.
fn check(
    state: &State,
    context: &mut WriteContext,
    rt: &ResourceType,
    object: &mut Value,
) -> Result<(), ApiError> {
    let Some(version) = state.crd_version(rt) else {
        return Ok(());
    };
    let schema = &version["schema"]["openAPIV3Schema"];
    if schema.is_null() {
        return Ok(());
    }
    let checked = crd_schema::check(object, schema);
    let warnings = Findings(checked.unknown).resolve(context.field_validation, rt)?;
    context.warnings.extend(warnings);
    if !checked.invalid.is_empty() {
        let name = meta_str(object, "name").unwrap_or_default().to_owned();
        return Err(ApiError::invalid_causes(rt, &name, &checked.invalid));
    }
    Ok(())
}
