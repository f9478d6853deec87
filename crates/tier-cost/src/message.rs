//! What of a chat message is counted and compared (`specs/crb.md` §9.2, §10.1).
//!
//! * [`message_text`]: the text whose tokens CommonRouterBench counts for one message
//!   (`_message_text`): the content parts and each tool call's name and arguments, joined by `\n`.
//! * [`fingerprint`]: the canonical JSON used by the semantic-prefix test; two messages are
//!   "the same" for prompt caching iff their fingerprints are equal.
//!
//! Both take OpenAI-style message objects as `serde_json::Value`s (with `preserve_order`, so
//! dict arguments are printed in the file's key order, as Python does).

use crate::pyjson::{DumpOptions, dumps, py_str, truthy};
use routeval_core::py::big_int_text;
use serde_json::{Map, Value};

/// A message whose text cannot be built; the reference raises the same way.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageError {
    /// A tool call's `name` is not a string (e.g. `null`): the reference's `"\n".join` raises
    /// `TypeError: sequence item N: expected str instance, X found`.
    #[error(
        "tool call name must be a string, got {found} (the reference raises TypeError: sequence item {item}: expected str instance, {found} found)"
    )]
    NonStringToolName {
        /// 0-based index of the part in the joined list.
        item: usize,
        /// Python type name of the value found (`NoneType`, `int`, ...).
        found: &'static str,
    },
    /// The message is not a JSON object.
    #[error("message must be a JSON object, got {0}")]
    NotAnObject(&'static str),
}

/// Python's type name of a JSON value (`NoneType`, `bool`, `int`, `float`, `str`, `list`, `dict`).
pub fn py_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        // An integer beyond 64 bits, kept as text by `routeval_core::py::mark_big_ints`.
        Value::String(s) if big_int_text(s).is_some() => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Append the texts of a content block list, by the `_message_text` block rules: objects with a
/// truthy `text` give `str(text)`, bare strings are kept (even `""`), anything else is ignored.
fn push_block_texts(parts: &mut Vec<String>, blocks: &[Value]) {
    for b in blocks {
        match b {
            Value::Object(m) => {
                if let Some(t) = m.get("text")
                    && truthy(t)
                {
                    parts.push(py_str(t));
                }
            }
            Value::String(s) if big_int_text(s).is_none() => parts.push(s.clone()),
            _ => {}
        }
    }
}

/// `_message_text(msg)`: the text CommonRouterBench tokenises for one message.
///
/// Content: a string as is (even `""`); a block list by the block rules; anything else adds
/// nothing. Tool calls (if truthy): per call, `function` (or the call itself when it has no
/// `function` key) must be an object to count; its `name` (default `""`) and its `arguments`:
/// an object → `json.dumps(ensure_ascii=False)`, otherwise `str(arguments)` when truthy.
/// Errors: a non-string `name` (the reference raises `TypeError`), a non-object message.
pub fn message_text(msg: &Value) -> Result<String, MessageError> {
    let m = msg
        .as_object()
        .ok_or_else(|| MessageError::NotAnObject(py_type_name(msg)))?;
    message_text_obj(m)
}

fn message_text_obj(m: &Map<String, Value>) -> Result<String, MessageError> {
    let mut parts: Vec<String> = Vec::new();
    match m.get("content") {
        Some(Value::String(s)) if big_int_text(s).is_none() => parts.push(s.clone()),
        Some(Value::Array(blocks)) => push_block_texts(&mut parts, blocks),
        _ => {}
    }
    if let Some(tcs) = m.get("tool_calls")
        && truthy(tcs)
    {
        // A truthy non-list (string, object, number) is iterated by Python; only lists are
        // realistic. A string iterates characters (not objects: skipped); an object iterates
        // keys (strings: skipped). So only list elements can contribute.
        if let Value::Array(calls) = tcs {
            for tc in calls {
                let func = match tc {
                    Value::Object(o) => o.get("function").unwrap_or(tc),
                    other => other,
                };
                let Value::Object(f) = func else { continue };
                match f.get("name") {
                    None => parts.push(String::new()),
                    Some(Value::String(s)) if big_int_text(s).is_none() => parts.push(s.clone()),
                    Some(other) => {
                        return Err(MessageError::NonStringToolName {
                            item: parts.len(),
                            found: py_type_name(other),
                        });
                    }
                }
                match f.get("arguments") {
                    Some(a @ Value::Object(_)) => parts.push(dumps(a, DumpOptions::default())),
                    Some(a) if truthy(a) => parts.push(py_str(a)),
                    _ => {}
                }
            }
        }
    }
    Ok(parts.join("\n"))
}

/// The content normalised for fingerprints: string as is, block list joined by `\n` with the
/// block rules, `null` → `""`, anything else Python `str()`.
fn normalized_content(c: &Value) -> String {
    match c {
        Value::String(s) if big_int_text(s).is_none() => s.clone(),
        Value::Array(blocks) => {
            let mut parts = Vec::new();
            push_block_texts(&mut parts, blocks);
            parts.join("\n")
        }
        Value::Null => String::new(),
        other => py_str(other),
    }
}

/// The keys that take part in the semantic-prefix comparison.
pub const FINGERPRINT_KEYS: [&str; 5] = ["role", "content", "tool_calls", "tool_call_id", "name"];

/// The semantic fingerprint of a message: `json.dumps(sub, sort_keys=True, ensure_ascii=False)`
/// of the present keys among [`FINGERPRINT_KEYS`], with `content` normalised to a string.
/// A non-object message gets its own JSON text (it never equals an object's fingerprint).
pub fn fingerprint(msg: &Value) -> String {
    let Some(m) = msg.as_object() else {
        return format!("!{}", dumps(msg, DumpOptions::default()));
    };
    let mut sub = Map::new();
    for k in FINGERPRINT_KEYS {
        if let Some(v) = m.get(k) {
            let v = if k == "content" {
                Value::String(normalized_content(v))
            } else {
                v.clone()
            };
            sub.insert(k.to_string(), v);
        }
    }
    dumps(
        &Value::Object(sub),
        DumpOptions {
            sort_keys: true,
            ..Default::default()
        },
    )
}

/// `is_semantic_prefix(short, long)`: `short` is no longer than `long` and every message of
/// `short` has the fingerprint of the message at the same position of `long`.
pub fn is_semantic_prefix(short: &[Value], long: &[Value]) -> bool {
    short.len() <= long.len()
        && short
            .iter()
            .zip(long)
            .all(|(a, b)| fingerprint(a) == fingerprint(b))
}

/// Whether `msg` is an object with `role == "assistant"` (the output-token delta rule, §11).
pub fn is_assistant(msg: &Value) -> bool {
    msg.get("role").and_then(Value::as_str) == Some("assistant")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn texts_follow_the_reference_rules() {
        let m = json!({"role":"assistant","content":"","tool_calls":[{"function":{"name":"read_file","arguments":"{\"path\": \"src/app.py\"}"}}]});
        assert_eq!(
            message_text(&m).unwrap(),
            "\nread_file\n{\"path\": \"src/app.py\"}"
        );
        let m =
            json!({"role":"assistant","content":null,"tool_calls":[{"function":{"name":null}}]});
        assert!(message_text(&m).is_err());
        let m = json!({"role":"user","content":[{"type":"text","text":"A"},"raw",{"text":42},{"type":"image"}]});
        assert_eq!(message_text(&m).unwrap(), "A\nraw\n42");
    }

    #[test]
    fn fingerprints_normalise_content() {
        let a = json!({"role":"user","content":"U1"});
        let b = json!({"role":"user","content":[{"type":"text","text":"U1","cache_control":{"type":"ephemeral"}}]});
        assert_eq!(fingerprint(&a), fingerprint(&b));
        let c = json!({"role":"user"});
        let d = json!({"role":"user","content":""});
        assert_ne!(fingerprint(&c), fingerprint(&d));
    }
}
