//! A schema transform the result's enums name in their derive
//! (`#[schemars(transform = ...)]`), apart from [`super::schema`], which
//! names every document and so every type of the result.

use schemars::Schema;

/// Gives the key of each externally tagged variant the variant's own
/// description: schemars puts a variant's `///` on the object that wraps
/// the key (`{"au": {...}}`), and an editor showing the key `au` looks on
/// the key. For `#[schemars(transform = ...)]` on such an enum.
pub fn describe_variant_keys(schema: &mut Schema) {
    let Some(serde_json::Value::Array(variants)) = schema.get_mut("oneOf") else {
        return;
    };
    for variant in variants.iter_mut().filter_map(|v| v.as_object_mut()) {
        let Some(description) = variant.get("description").cloned() else {
            continue;
        };
        let Some(serde_json::Value::Object(keys)) = variant.get_mut("properties") else {
            continue;
        };
        if let (1, Some(serde_json::Value::Object(key))) = (keys.len(), keys.values_mut().next()) {
            key.entry("description").or_insert(description);
        }
    }
}
