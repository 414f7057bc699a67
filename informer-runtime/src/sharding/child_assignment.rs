//! [`assign_children`]: a sharded manager's client labels each controlled object its shard
//! creates for that shard, in the create request, as the Go sharder's webhook assigns a
//! controlled object at its creation to its controller's shard.
//!
//! A reconcile runs only for an object assigned to its shard, so a child it creates belongs
//! to that shard too. Created unlabelled, the child would be invisible to the shard's
//! restricted cache until the sharder labelled it: one more write per child, and one more
//! reconcile of its owner (the child's arrival in the cache comes after the reconcile that
//! created it has moved on, instead of with the owner's other changes). Created labelled, the
//! create itself reaches the shard's cache, and the next reconcile of the owner waits for it
//! as it waits for its other writes. Should the owner have moved meanwhile, the sharder moves
//! the child after it, as it moves every controlled object whose controller moved.
//!
//! Only JSON creates of a ring's controlled resource with a controller reference to an
//! object of the ring resource that controls it are labelled, and only when they carry no
//! shard label of the ring yet.

use std::sync::Arc;

use http::{Method, Request, header};
use kube::client::Body;
use serde_json::Value;

use super::{labels::shard_label, ring::ControllerRing, shard::Shard};
use crate::{
    api_version::parse_group_version,
    client_layer::{self, BoxError, Layer, ResponseFuture},
};

/// A controlled resource and the ring resource that controls it, by group and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Control {
    child_group: String,
    child_kind: String,
    owner_group: String,
    owner_kind: String,
}

/// The layer: see the [module documentation](self).
#[derive(Debug, Clone)]
struct AssignChildren {
    label: String,
    shard: String,
    controls: Arc<Vec<Control>>,
}

/// `client`, labelling the controlled objects it creates for `shard` (see the
/// [module documentation](self)).
pub(crate) fn assign_children(client: kube::Client, shard: &Shard) -> kube::Client {
    let layer = AssignChildren {
        label: shard_label(shard.ring().name()),
        shard: shard.name().to_owned(),
        controls: Arc::new(controls(shard.ring())),
    };
    client_layer::wrap(client, layer)
}

fn controls(ring: &ControllerRing) -> Vec<Control> {
    ring.resources()
        .iter()
        .flat_map(|resource| {
            resource.controlled().iter().map(|child| Control {
                child_group: child.group().to_owned(),
                child_kind: child.kind().to_owned(),
                owner_group: resource.resource().group().to_owned(),
                owner_kind: resource.resource().kind().to_owned(),
            })
        })
        .collect()
}

impl Layer for AssignChildren {
    fn call(&self, client: kube::Client, request: Request<Body>) -> ResponseFuture {
        let layer = self.clone();
        Box::pin(async move {
            let request =
                if request.method() == Method::POST && is_json(&request) && !layer.controls.is_empty() {
                    layer.label(request).await?
                } else {
                    request
                };
            Ok(client.send(request).await?)
        })
    }
}

impl AssignChildren {
    /// The create `request`, its object labelled for the shard if it is a controlled child
    /// of a ring object.
    async fn label(&self, request: Request<Body>) -> Result<Request<Body>, BoxError> {
        let (mut parts, body) = request.into_parts();
        let bytes = body.collect_bytes().await?;
        let labelled = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|mut object| self.assign(&mut object).then_some(object))
            .and_then(|object| serde_json::to_vec(&object).ok());
        let Some(labelled) = labelled else {
            return Ok(Request::from_parts(parts, Body::from(bytes)));
        };
        if parts.headers.contains_key(header::CONTENT_LENGTH) {
            parts
                .headers
                .insert(header::CONTENT_LENGTH, labelled.len().into());
        }
        Ok(Request::from_parts(parts, Body::from(labelled)))
    }

    /// Labels `object` for the shard if it is a controlled child of a ring object without a
    /// shard label of the ring; whether it did.
    fn assign(&self, object: &mut Value) -> bool {
        if !self.is_controlled_child(object) {
            return false;
        }
        let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
            return false;
        };
        let labels = metadata
            .entry("labels")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if labels.is_null() {
            *labels = Value::Object(serde_json::Map::new());
        }
        let Some(labels) = labels.as_object_mut() else {
            return false;
        };
        if labels.contains_key(&self.label) {
            return false;
        }
        labels.insert(self.label.clone(), Value::String(self.shard.clone()));
        true
    }

    /// Whether `object` is of a controlled resource of the ring and its controller reference
    /// names an object of the ring resource that controls it.
    fn is_controlled_child(&self, object: &Value) -> bool {
        let (Some(api_version), Some(kind)) = (
            object.get("apiVersion").and_then(Value::as_str),
            object.get("kind").and_then(Value::as_str),
        ) else {
            return false;
        };
        let Some((group, _)) = parse_group_version(api_version) else {
            return false;
        };
        let Some(owner) = controller_reference(object) else {
            return false;
        };
        self.controls.iter().any(|control| {
            control.child_group == group
                && control.child_kind == kind
                && control.owner_group == owner.0
                && control.owner_kind == owner.1
        })
    }
}

/// The group and kind of `object`'s controller reference, if it has a well-formed one.
fn controller_reference(object: &Value) -> Option<(&str, &str)> {
    let references = object.get("metadata")?.get("ownerReferences")?.as_array()?;
    let controller = references
        .iter()
        .find(|reference| reference.get("controller").and_then(Value::as_bool) == Some(true))?;
    let (group, _) = parse_group_version(controller.get("apiVersion")?.as_str()?)?;
    Some((group, controller.get("kind")?.as_str()?))
}

/// Whether `request`'s body is JSON (how kube sends a create).
fn is_json(request: &Request<Body>) -> bool {
    client_layer::content_type(request.headers()).is_some_and(|content_type| content_type.contains("json"))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use serde_json::json;

    use super::*;
    use crate::sharding::RingResource;

    fn layer() -> AssignChildren {
        let ring = ControllerRing::new("web")
            .and_then(|ring| ring.resource(RingResource::of::<ConfigMap>().controls::<Secret>()))
            .expect("a valid ring");
        AssignChildren {
            label: shard_label("web"),
            shard: "web-0".into(),
            controls: Arc::new(controls(&ring)),
        }
    }

    fn secret(owner_kind: &str, owner_api_version: &str, controller: bool) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": "child",
                "ownerReferences": [{
                    "apiVersion": owner_api_version, "kind": owner_kind, "name": "parent",
                    "uid": "u-1", "controller": controller,
                }],
            },
        })
    }

    // kubernetes-controller-sharding: pkg/webhook/sharder/handler.go assigns a controlled
    // object at its creation to its controller's shard; the shard creating it knows that
    // shard: itself.
    #[test]
    fn a_controlled_child_of_a_ring_object_is_labelled_for_the_shard() {
        let layer = layer();
        let mut child = secret("ConfigMap", "v1", true);
        assert!(layer.assign(&mut child));
        assert_eq!(child["metadata"]["labels"][shard_label("web")], "web-0");
        // labelled once: a second pass changes nothing
        assert!(!layer.assign(&mut child));
    }

    #[test]
    fn other_creates_are_left_as_they_are() {
        let layer = layer();
        for mut object in [
            // not the controller
            secret("ConfigMap", "v1", false),
            // a controller outside the ring
            secret("Deployment", "apps/v1", true),
            // the ring resource itself: the sharder assigns it by its own key
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "parent"}}),
            // no owner
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "loose"}}),
        ] {
            let before = object.clone();
            assert!(!layer.assign(&mut object), "{before}");
            assert_eq!(object, before);
        }
        let mut assigned = secret("ConfigMap", "v1", true);
        assigned["metadata"]["labels"] = json!({shard_label("web"): "web-1"});
        assert!(
            !layer.assign(&mut assigned),
            "a child already labelled keeps its label"
        );
        assert_eq!(assigned["metadata"]["labels"][shard_label("web")], "web-1");
    }
}
