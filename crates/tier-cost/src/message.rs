//! What of a chat message is counted and compared (`specs/crb.md` §9.2, §10.1).
//!
//! * [`message_text`]: the text whose tokens CommonRouterBench counts for one message
//!   (`_message_text`): the content parts and each tool call's name and arguments, joined by `\n`.
//! * [`fingerprint`]: the canonical JSON used by the semantic-prefix test; two messages are
//!   "the same" for prompt caching iff their fingerprints are equal.
//!
//! Both take OpenAI-style message objects as `serde_json::Value`s (with `preserve_order`, so
//! dict arguments are printed in the file's key order, as Python does).

use crate::pyjson::{DumpOptions, dumps, dumps_into, py_str, truthy, write_json_str};
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

/// The parts of `_message_text`, joined by `\n` as they come (no list of parts built).
struct Joined {
    text: String,
    parts: usize,
}

impl Joined {
    /// Start the next part (its separator) and return the text to append it to.
    fn next(&mut self) -> &mut String {
        if self.parts > 0 {
            self.text.push('\n');
        }
        self.parts += 1;
        &mut self.text
    }
}

/// Append the texts of a content block list, by the `_message_text` block rules: objects with a
/// truthy `text` give `str(text)`, bare strings are kept (even `""`), anything else is ignored.
fn push_block_texts(parts: &mut Joined, blocks: &[Value]) {
    for b in blocks {
        match b {
            Value::Object(m) => {
                if let Some(t) = m.get("text")
                    && truthy(t)
                {
                    match t {
                        Value::String(s) if big_int_text(s).is_none() => parts.next().push_str(s),
                        other => parts.next().push_str(&py_str(other)),
                    }
                }
            }
            Value::String(s) if big_int_text(s).is_none() => parts.next().push_str(s),
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
    let mut parts = Joined {
        text: String::new(),
        parts: 0,
    };
    match m.get("content") {
        Some(Value::String(s)) if big_int_text(s).is_none() => parts.next().push_str(s),
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
                    None => {
                        parts.next();
                    }
                    Some(Value::String(s)) if big_int_text(s).is_none() => parts.next().push_str(s),
                    Some(other) => {
                        return Err(MessageError::NonStringToolName {
                            item: parts.parts,
                            found: py_type_name(other),
                        });
                    }
                }
                match f.get("arguments") {
                    Some(a @ Value::Object(_)) => {
                        dumps_into(parts.next(), a, DumpOptions::default())
                    }
                    Some(a) if truthy(a) => parts.next().push_str(&py_str(a)),
                    _ => {}
                }
            }
        }
    }
    Ok(parts.text)
}

/// Append the content normalised for fingerprints, as a JSON string: a string as is, a block
/// list joined by `\n` with the block rules, `null` → `""`, anything else Python `str()`.
fn write_normalized_content(out: &mut String, c: &Value) {
    match c {
        Value::String(s) if big_int_text(s).is_none() => write_json_str(out, s, false),
        Value::Array(blocks) => {
            let mut parts = Joined {
                text: String::new(),
                parts: 0,
            };
            push_block_texts(&mut parts, blocks);
            write_json_str(out, &parts.text, false);
        }
        Value::Null => out.push_str("\"\""),
        other => write_json_str(out, &py_str(other), false),
    }
}

/// The keys that take part in the semantic-prefix comparison.
pub const FINGERPRINT_KEYS: [&str; 5] = ["role", "content", "tool_calls", "tool_call_id", "name"];

/// [`FINGERPRINT_KEYS`] in `sort_keys=True` order (code points: `_` sorts before `s`).
const FINGERPRINT_KEYS_SORTED: [&str; 5] =
    ["content", "name", "role", "tool_call_id", "tool_calls"];

/// The semantic fingerprint of a message: `json.dumps(sub, sort_keys=True, ensure_ascii=False)`
/// of the present keys among [`FINGERPRINT_KEYS`], with `content` normalised to a string.
/// A non-object message gets its own JSON text (it never equals an object's fingerprint).
/// Written straight from the message (no sub-dict built).
pub fn fingerprint(msg: &Value) -> String {
    let Some(m) = msg.as_object() else {
        return format!("!{}", dumps(msg, DumpOptions::default()));
    };
    let sorted = DumpOptions {
        sort_keys: true,
        ..Default::default()
    };
    let mut out = String::from("{");
    for k in FINGERPRINT_KEYS_SORTED {
        if let Some(v) = m.get(k) {
            if out.len() > 1 {
                out.push_str(", ");
            }
            write_json_str(&mut out, k, false);
            out.push_str(": ");
            if k == "content" {
                write_normalized_content(&mut out, v);
            } else {
                dumps_into(&mut out, v, sorted);
            }
        }
    }
    out.push('}');
    out
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

    /// The fingerprint as the spec states it: the sub-dict of the present keys, `content`
    /// normalised to a string, then `json.dumps(sort_keys=True)`.
    fn fingerprint_by_sub_dict(msg: &Value) -> String {
        let m = msg.as_object().unwrap();
        let mut sub = Map::new();
        for k in FINGERPRINT_KEYS {
            if let Some(v) = m.get(k) {
                let v = if k == "content" {
                    let mut out = String::new();
                    write_normalized_content(&mut out, v);
                    serde_json::from_str(&out).unwrap()
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

    #[test]
    fn fingerprints_are_the_sorted_dumps_of_the_sub_dict() {
        let big = routeval_core::py::mark_big_ints(r#"{"content": 123456789012345678901234}"#)
            .unwrap()
            .unwrap();
        let big: Value = serde_json::from_str(&big).unwrap();
        let mut cases = vec![
            json!({}),
            json!({"other": 1}),
            json!({"role": "user", "content": "héllo \"q\"\n", "extra": [1]}),
            json!({"name": "n", "tool_call_id": "c1", "role": "tool", "content": null}),
            json!({"role": "assistant", "content": [{"text": "a"}, "b", {"text": 7}, {"type": "image"}],
                   "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": {"z": 1, "a": [true, 1.5]}}}]}),
            json!({"tool_calls": [], "content": 12, "role": "user"}),
            json!({"content": {"k": 1}, "tool_calls": {"b": 2, "a": 1}}),
            json!({"content": 1.5e300, "name": null}),
        ];
        cases.push(big);
        for m in &cases {
            assert_eq!(fingerprint(m), fingerprint_by_sub_dict(m), "{m}");
        }
        assert_eq!(fingerprint(&cases[0]), "{}");
        assert_eq!(
            fingerprint(&cases[5]),
            "{\"content\": \"12\", \"role\": \"user\", \"tool_calls\": []}"
        );
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
