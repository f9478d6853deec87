//! [`Doc`]: a compact, cache-friendly representation of one JSON document for fast repeated
//! query evaluation ([`Query::matches_doc`](crate::Query::matches_doc)).
//!
//! A `serde_json::Value` tree (with `preserve_order`) is a web of separate heap allocations:
//! every string, array and object map is its own block, so walking 100k instances is dominated
//! by memory latency. A `Doc` is two allocations: a flat *tape* of 16-byte nodes in document
//! order (pre-order; an array or object node records its member count and the index just past
//! its subtree, so siblings are skipped in O(1)) and one text buffer holding every string and
//! key. Object members are stored as key node + value subtree, in the `Value`'s (insertion)
//! order, so the key order the spec relies on is preserved.
//!
//! The `serde_json::Value` path ([`Query::matches`](crate::Query::matches)) is the reference;
//! `matches_doc` gives the same result (and the same errors) for every document and query
//! (property-tested in `tests/props.rs`).

use crate::pyvalue::{Num, as_num, cmp_num};
use serde_json::Value;
use std::cmp::Ordering;

/// One tape node (16 bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    /// Byte offset and length in [`Doc::text`].
    Str(u32, u32),
    /// Item count; index just past the subtree.
    Array(u32, u32),
    /// Member count; index just past the subtree. Members follow as key `Str` + value subtree.
    Object(u32, u32),
}

/// Error of [`Doc::from_value`]: the tape addresses nodes and text with 32-bit offsets, so a
/// document must have fewer than 2³² nodes and 4 GiB of string text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("JSON document too large for a Doc (more than 2^32 nodes or 4 GiB of text)")]
pub struct DocTooLarge;

/// One JSON document as a flat tape (see the module docs). Build it once with
/// [`Doc::from_value`], evaluate queries on it many times with
/// [`Query::matches_doc`](crate::Query::matches_doc). Immutable, `Send + Sync`.
///
/// ```
/// use routeval_query_dsl::{Doc, OnMissingKey, Query};
/// use serde_json::json;
/// let doc = Doc::from_value(&json!({"lang": "ja", "tags": ["py", "rs"]}))?;
/// let q = Query::parse(&json!({"tags.*": "rs"}))?;
/// assert!(q.matches_doc(&doc, OnMissingKey::Skip)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Doc {
    nodes: Vec<Node>,
    text: String,
}

impl Doc {
    /// Flatten `value` into a tape (key order as in the `Value`).
    ///
    /// # Errors
    /// [`DocTooLarge`] beyond 2³² nodes or 4 GiB of string text.
    pub fn from_value(value: &Value) -> Result<Doc, DocTooLarge> {
        let mut nodes = Vec::new();
        let mut text = String::new();
        push(value, &mut nodes, &mut text)?;
        Ok(Doc { nodes, text })
    }

    /// Parse one JSON text into a `Doc`.
    ///
    /// The text is read by `serde_json`'s deserializer straight into the tape (no `Value` is
    /// built), so syntax errors, number handling (integers as `i64`/`u64`, others as `f64`)
    /// and the nesting limit are exactly those of `serde_json::from_slice::<Value>`. An
    /// object with a repeated key is rebuilt through a `Value` so that, as there (and in
    /// Python's `json.loads`), the last value wins at the first key's position.
    ///
    /// # Errors
    /// A `serde_json` error for invalid JSON, or a custom one wrapping [`DocTooLarge`].
    pub fn from_slice(bytes: &[u8]) -> Result<Doc, serde_json::Error> {
        let mut doc = Doc::default();
        let mut dup = false;
        match parse_value_into(&mut doc, bytes, &mut dup) {
            Ok(()) => Ok(doc),
            Err(_) if dup => {
                let v: Value = serde_json::from_slice(bytes)?;
                Doc::from_value(&v).map_err(<serde_json::Error as serde::de::Error>::custom)
            }
            Err(e) => Err(e),
        }
    }

    /// Replace this document by an object whose members are `members`: each a key and the
    /// JSON text of its value (parsed as by [`Doc::from_slice`]), in the given order. Reuses
    /// this `Doc`'s buffers, so a caller evaluating many lines can keep one `Doc` per thread.
    ///
    /// This is the fast path of `routeval filter`, which hands over only the top-level members
    /// a query reads. The keys must be distinct (a JSON object's repeated key is the caller's
    /// to merge, last value wins); a repeated key is an error here.
    ///
    /// # Errors
    /// The `serde_json` error of a member's invalid JSON text; a custom error for a repeated
    /// key or a document beyond [`DocTooLarge`]'s limits. On error the document's content is
    /// unspecified (but valid).
    pub fn set_object<'a, I>(&mut self, members: I) -> Result<(), serde_json::Error>
    where
        I: IntoIterator<Item = (&'a str, &'a [u8])>,
    {
        self.nodes.clear();
        self.text.clear();
        self.nodes.push(Node::Object(0, 1));
        let mut n = 0u32;
        for (key, json) in members {
            let kpos = self.nodes.len();
            let node = str_node(key, &mut self.text).map_err(custom)?;
            self.nodes.push(node);
            if has_key_before(self, 1, kpos) {
                self.clear();
                return Err(custom("repeated key in Doc::set_object"));
            }
            let mut dup = false;
            let done = parse_value_into(self, json, &mut dup);
            if let Err(e) = done {
                if !dup {
                    self.clear();
                    return Err(e);
                }
                // A repeated key inside the member: rebuild that member through a `Value`.
                self.nodes.truncate(kpos + 1);
                let v: Value = serde_json::from_slice(json)?;
                push(&v, &mut self.nodes, &mut self.text).map_err(custom)?;
            }
            n += 1;
        }
        let end = u32::try_from(self.nodes.len()).map_err(custom)?;
        self.nodes[0] = Node::Object(n, end);
        Ok(())
    }

    /// Parse one JSON text into this document (reusing its buffers), keeping of a top-level
    /// object only the members whose key is in `keys`, in document order; the other members
    /// are validated as fully as `serde_json` validates anything (syntax, escapes, numbers,
    /// nesting limit) but not stored. A text that is not an object is stored whole.
    ///
    /// The result equals [`Doc::from_value`] of `serde_json::from_slice::<Value>(bytes)`
    /// with the unwanted top-level members removed (a repeated key: last value at the first
    /// position, through a `Value`). This is how `routeval filter` reads a line: a query
    /// reads only the members named by its paths' first segments
    /// ([`Query::top_level_keys`](crate::Query::top_level_keys)).
    ///
    /// Members that are not kept are checked by `serde_json`'s `IgnoredAny`, which is laxer than
    /// parsing in three ways, there as in Python's `json.loads`: a number beyond the `f64`
    /// range, a lone surrogate escape (`"\ud800"`) and nesting deeper than 128 levels are
    /// accepted; in a kept member they are errors (`serde_json` cannot represent them). Not
    /// checked: UTF-8 of skipped strings and of top-level keys; callers reading raw bytes
    /// check the whole text first.
    ///
    /// # Errors
    /// The `serde_json` error of an invalid text, or a custom one wrapping [`DocTooLarge`].
    pub fn parse_projected(
        &mut self,
        bytes: &[u8],
        keys: &[&str],
    ) -> Result<(), serde_json::Error> {
        self.parse_projected_from(serde_json::Deserializer::from_slice(bytes), bytes, keys)
    }

    /// [`Doc::parse_projected`] of a text already known to be UTF-8: the same result and
    /// errors, without `serde_json` checking the UTF-8 of each kept string again.
    ///
    /// # Errors
    /// As [`Doc::parse_projected`].
    pub fn parse_projected_str(
        &mut self,
        text: &str,
        keys: &[&str],
    ) -> Result<(), serde_json::Error> {
        self.parse_projected_from(
            serde_json::Deserializer::from_str(text),
            text.as_bytes(),
            keys,
        )
    }

    fn parse_projected_from<'de, R: serde_json::de::Read<'de>>(
        &mut self,
        mut de: serde_json::Deserializer<R>,
        bytes: &[u8],
        keys: &[&str],
    ) -> Result<(), serde_json::Error> {
        use serde::de::DeserializeSeed;
        self.nodes.clear();
        self.text.clear();
        let mut dup = false;
        let done = TopSeed {
            seed: Seed {
                doc: &mut *self,
                dup: &mut dup,
            },
            keys,
        }
        .deserialize(&mut de)
        .and_then(|()| de.end());
        match done {
            Ok(()) => Ok(()),
            Err(_) if dup => {
                let mut v: Value = serde_json::from_slice(bytes)?;
                if let Value::Object(m) = &mut v {
                    m.retain(|k, _| keys.contains(&k.as_str()));
                }
                self.nodes.clear();
                self.text.clear();
                push(&v, &mut self.nodes, &mut self.text).map_err(custom)
            }
            Err(e) => {
                self.clear();
                Err(e)
            }
        }
    }

    /// Whether the root is an object.
    pub fn is_object(&self) -> bool {
        matches!(self.nodes.first(), Some(Node::Object(..)))
    }

    /// Make this the empty object `{}` (keeping the buffers).
    fn clear(&mut self) {
        self.nodes.clear();
        self.text.clear();
        self.nodes.push(Node::Object(0, 1));
    }

    /// The root node.
    pub(crate) fn root(&self) -> DocRef<'_> {
        DocRef { doc: self, i: 0 }
    }

    /// Approximate heap size in bytes (tape + text).
    pub fn heap_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>() + self.text.len()
    }
}

fn str_node(s: &str, text: &mut String) -> Result<Node, DocTooLarge> {
    let off = u32::try_from(text.len()).map_err(|_| DocTooLarge)?;
    let len = u32::try_from(s.len()).map_err(|_| DocTooLarge)?;
    text.push_str(s);
    if u32::try_from(text.len()).is_err() {
        return Err(DocTooLarge);
    }
    Ok(Node::Str(off, len))
}

fn push(v: &Value, nodes: &mut Vec<Node>, text: &mut String) -> Result<(), DocTooLarge> {
    match v {
        Value::Null => nodes.push(Node::Null),
        Value::Bool(b) => nodes.push(Node::Bool(*b)),
        Value::Number(n) => nodes.push(if let Some(i) = n.as_i64() {
            Node::Int(i)
        } else if let Some(u) = n.as_u64() {
            Node::UInt(u)
        } else {
            Node::Float(n.as_f64().unwrap_or(f64::NAN))
        }),
        Value::String(s) => {
            let node = str_node(s, text)?;
            nodes.push(node);
        }
        Value::Array(items) => {
            let at = nodes.len();
            nodes.push(Node::Null);
            for it in items {
                push(it, nodes, text)?;
            }
            let len = u32::try_from(items.len()).map_err(|_| DocTooLarge)?;
            let end = u32::try_from(nodes.len()).map_err(|_| DocTooLarge)?;
            nodes[at] = Node::Array(len, end);
        }
        Value::Object(m) => {
            let at = nodes.len();
            nodes.push(Node::Null);
            for (k, it) in m {
                let key = str_node(k, text)?;
                nodes.push(key);
                push(it, nodes, text)?;
            }
            let len = u32::try_from(m.len()).map_err(|_| DocTooLarge)?;
            let end = u32::try_from(nodes.len()).map_err(|_| DocTooLarge)?;
            nodes[at] = Node::Object(len, end);
        }
    }
    Ok(())
}

fn custom<T: std::fmt::Display>(e: T) -> serde_json::Error {
    <serde_json::Error as serde::de::Error>::custom(e)
}

/// Whether the key node at `kpos` repeats a key of the object members starting at `first`
/// (key node + complete value subtree each, up to `kpos`).
fn has_key_before(doc: &Doc, first: usize, kpos: usize) -> bool {
    let key = DocRef { doc, i: kpos }.as_str();
    let mut i = first;
    while i < kpos {
        if (DocRef { doc, i }).as_str() == key {
            return true;
        }
        i = DocRef { doc, i: i + 1 }.end();
    }
    false
}

/// Append the JSON text `bytes` (one value, surrounding whitespace allowed) to `doc`'s tape.
/// On a repeated object key sets `*dup` and fails.
fn parse_value_into(doc: &mut Doc, bytes: &[u8], dup: &mut bool) -> Result<(), serde_json::Error> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    Seed { doc, dup }.deserialize(&mut de)?;
    de.end()
}

/// A serde seed/visitor appending one value to a tape, with `Value`'s number mapping.
struct Seed<'t> {
    doc: &'t mut Doc,
    dup: &'t mut bool,
}

/// The root seed of [`Doc::parse_projected`]: an object keeps only the wanted members.
struct TopSeed<'t, 'k> {
    seed: Seed<'t>,
    keys: &'k [&'k str],
}

impl<'de> serde::de::DeserializeSeed<'de> for TopSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for TopSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.seed.visit_unit()
    }
    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<(), E> {
        self.seed.visit_bool(b)
    }
    fn visit_i64<E: serde::de::Error>(self, i: i64) -> Result<(), E> {
        self.seed.visit_i64(i)
    }
    fn visit_u64<E: serde::de::Error>(self, u: u64) -> Result<(), E> {
        self.seed.visit_u64(u)
    }
    fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<(), E> {
        self.seed.visit_f64(f)
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<(), E> {
        self.seed.visit_str(s)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        self.seed.visit_seq(seq)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        use serde::de::Error;
        let Seed { doc, dup } = self.seed;
        let at = doc.nodes.len();
        doc.nodes.push(Node::Null);
        let mut n = 0u32;
        // The key is decoded once to decide; a wanted one is then stored.
        while let Some(wanted) = map.next_key_seed(KeyCapture(self.keys))? {
            let Some(key) = wanted else {
                map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            };
            let kpos = doc.nodes.len();
            let node = str_node(key, &mut doc.text).map_err(A::Error::custom)?;
            doc.nodes.push(node);
            if n > 0 && has_key_before(doc, at + 1, kpos) {
                *dup = true;
                return Err(A::Error::custom("repeated object key"));
            }
            map.next_value_seed(Seed {
                doc: &mut *doc,
                dup: &mut *dup,
            })?;
            n = n
                .checked_add(1)
                .ok_or_else(|| A::Error::custom(DocTooLarge))?;
        }
        let end = u32::try_from(doc.nodes.len()).map_err(|_| A::Error::custom(DocTooLarge))?;
        doc.nodes[at] = Node::Object(n, end);
        Ok(())
    }
}

/// A top-level key of [`Doc::parse_projected`]: the wanted key it equals, if any.
struct KeyCapture<'k>(&'k [&'k str]);

impl<'de, 'k> serde::de::DeserializeSeed<'de> for KeyCapture<'k> {
    type Value = Option<&'k str>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<&'k str>, D::Error> {
        // As bytes: `serde_json` then unescapes without checking UTF-8 (no per-key
        // `from_utf8`); a key equal to a wanted (valid `&str`) key is that key.
        d.deserialize_bytes(self)
    }
}

impl<'de, 'k> serde::de::Visitor<'de> for KeyCapture<'k> {
    type Value = Option<&'k str>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string key")
    }
    fn visit_bytes<E: serde::de::Error>(self, s: &[u8]) -> Result<Option<&'k str>, E> {
        Ok(self.0.iter().find(|k| k.as_bytes() == s).copied())
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Option<&'k str>, E> {
        self.visit_bytes(s.as_bytes())
    }
}

/// A serde seed appending one object key to a tape.
struct KeySeed<'t>(&'t mut Doc);

impl Seed<'_> {
    fn reborrow(&mut self) -> Seed<'_> {
        Seed {
            doc: &mut *self.doc,
            dup: &mut *self.dup,
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Seed<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for KeySeed<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeySeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<(), E> {
        let node = str_node(s, &mut self.0.text).map_err(E::custom)?;
        self.0.nodes.push(node);
        Ok(())
    }
}

impl<'de> serde::de::Visitor<'de> for Seed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.doc.nodes.push(Node::Null);
        Ok(())
    }
    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<(), E> {
        self.doc.nodes.push(Node::Bool(b));
        Ok(())
    }
    fn visit_i64<E: serde::de::Error>(self, i: i64) -> Result<(), E> {
        self.doc.nodes.push(Node::Int(i));
        Ok(())
    }
    fn visit_u64<E: serde::de::Error>(self, u: u64) -> Result<(), E> {
        // As `Doc::from_value`: `Number::as_i64` first.
        self.doc.nodes.push(match i64::try_from(u) {
            Ok(i) => Node::Int(i),
            Err(_) => Node::UInt(u),
        });
        Ok(())
    }
    fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<(), E> {
        self.doc.nodes.push(Node::Float(f));
        Ok(())
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<(), E> {
        let node = str_node(s, &mut self.doc.text).map_err(E::custom)?;
        self.doc.nodes.push(node);
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        use serde::de::Error;
        let at = self.doc.nodes.len();
        self.doc.nodes.push(Node::Null);
        let mut n = 0u32;
        while seq.next_element_seed(self.reborrow())?.is_some() {
            n = n
                .checked_add(1)
                .ok_or_else(|| A::Error::custom(DocTooLarge))?;
        }
        let end = u32::try_from(self.doc.nodes.len()).map_err(|_| A::Error::custom(DocTooLarge))?;
        self.doc.nodes[at] = Node::Array(n, end);
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        use serde::de::Error;
        let at = self.doc.nodes.len();
        self.doc.nodes.push(Node::Null);
        let mut n = 0u32;
        while map.next_key_seed(KeySeed(&mut *self.doc))?.is_some() {
            let kpos = self.doc.nodes.len() - 1;
            if n > 0 && has_key_before(self.doc, at + 1, kpos) {
                *self.dup = true;
                return Err(A::Error::custom("repeated object key"));
            }
            map.next_value_seed(self.reborrow())?;
            n = n
                .checked_add(1)
                .ok_or_else(|| A::Error::custom(DocTooLarge))?;
        }
        let end = u32::try_from(self.doc.nodes.len()).map_err(|_| A::Error::custom(DocTooLarge))?;
        self.doc.nodes[at] = Node::Object(n, end);
        Ok(())
    }
}

/// A node of a [`Doc`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct DocRef<'a> {
    doc: &'a Doc,
    i: usize,
}

/// Iterator over the items of an array node (or the members of an object node, as
/// key/value pairs with [`Members`]).
pub(crate) struct Items<'a> {
    doc: &'a Doc,
    next: usize,
    pub(crate) left: u32,
}

impl<'a> Iterator for Items<'a> {
    type Item = DocRef<'a>;
    #[inline]
    fn next(&mut self) -> Option<DocRef<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let r = DocRef {
            doc: self.doc,
            i: self.next,
        };
        self.next = r.end();
        Some(r)
    }
}

/// Iterator over the members of an object node.
pub(crate) struct Members<'a> {
    doc: &'a Doc,
    next: usize,
    pub(crate) left: u32,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, DocRef<'a>);
    #[inline]
    fn next(&mut self) -> Option<(&'a str, DocRef<'a>)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let key = DocRef {
            doc: self.doc,
            i: self.next,
        }
        .as_str()
        .unwrap_or("");
        let v = DocRef {
            doc: self.doc,
            i: self.next + 1,
        };
        self.next = v.end();
        Some((key, v))
    }
}

impl<'a> DocRef<'a> {
    #[inline]
    fn node(self) -> Node {
        self.doc.nodes[self.i]
    }

    /// Index just past this node's subtree.
    #[inline]
    fn end(self) -> usize {
        match self.node() {
            Node::Array(_, end) | Node::Object(_, end) => end as usize,
            _ => self.i + 1,
        }
    }

    #[inline]
    pub(crate) fn as_str(self) -> Option<&'a str> {
        match self.node() {
            Node::Str(off, len) => self.doc.text.get(off as usize..off as usize + len as usize),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn as_num(self) -> Option<Num> {
        match self.node() {
            Node::Bool(b) => Some(Num::Int(i128::from(b))),
            Node::Int(i) => Some(Num::Int(i128::from(i))),
            Node::UInt(u) => Some(Num::Int(i128::from(u))),
            Node::Float(f) => Some(Num::Float(f)),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn is_array(self) -> bool {
        matches!(self.node(), Node::Array(..))
    }

    #[inline]
    pub(crate) fn is_object(self) -> bool {
        matches!(self.node(), Node::Object(..))
    }

    /// The items of an array node.
    #[inline]
    pub(crate) fn items(self) -> Option<Items<'a>> {
        match self.node() {
            Node::Array(len, _) => Some(Items {
                doc: self.doc,
                next: self.i + 1,
                left: len,
            }),
            _ => None,
        }
    }

    /// The members of an object node.
    #[inline]
    pub(crate) fn members(self) -> Option<Members<'a>> {
        match self.node() {
            Node::Object(len, _) => Some(Members {
                doc: self.doc,
                next: self.i + 1,
                left: len,
            }),
            _ => None,
        }
    }

    /// Member `key` of an object node.
    #[inline]
    pub(crate) fn get(self, key: &str) -> Option<DocRef<'a>> {
        self.members()?.find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Python's type name.
    pub(crate) fn type_name(self) -> &'static str {
        match self.node() {
            Node::Null => "NoneType",
            Node::Bool(_) => "bool",
            Node::Int(_) | Node::UInt(_) => "int",
            Node::Float(_) => "float",
            Node::Str(..) => "str",
            Node::Array(..) => "list",
            Node::Object(..) => "dict",
        }
    }

    /// Python `==` between this node and a JSON value (as [`crate::py_eq`]).
    pub(crate) fn py_eq(self, b: &Value) -> bool {
        match (self.node(), b) {
            (Node::Str(..), Value::String(y)) => self.as_str() == Some(y.as_str()),
            (Node::Null, Value::Null) => true,
            (Node::Array(len, _), Value::Array(y)) => {
                len as usize == y.len()
                    && self
                        .items()
                        .is_some_and(|it| it.zip(y).all(|(p, q)| p.py_eq(q)))
            }
            (Node::Object(len, _), Value::Object(y)) => {
                len as usize == y.len()
                    && self
                        .members()
                        .is_some_and(|mut ms| ms.all(|(k, v)| y.get(k).is_some_and(|w| v.py_eq(w))))
            }
            _ => match (self.as_num(), as_num(b)) {
                (Some(x), Some(y)) => cmp_num(x, y) == Some(Ordering::Equal),
                _ => false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Doc;
    use serde_json::{Value, json};

    #[test]
    fn parse_errors_are_serde_json_errors() {
        let bad: [&[u8]; 9] = [
            b"{\"a\": 1",
            b"{\"a\" 1}",
            b"{\"a\": [1, 2}",
            b"{\"a\": tru}",
            b"{\"a\": 1,}",
            b"{\"a\": 1} x",
            b"{\"b\": [1, x]}",
            b"{\"b\": \"\\q\"}",
            b"{a: 1}",
        ];
        // Laxer where `json.loads` is lax, in members that are not kept only.
        let deep = format!("{{\"b\": {}{}}}", "[".repeat(200), "]".repeat(200));
        let lax: [&[u8]; 3] = [
            b"{\"b\": 1e400, \"a\": 1}",
            b"{\"b\": [\"\\ud800\"], \"a\": 1}",
            deep.as_bytes(),
        ];
        for text in lax {
            let mut doc = Doc::default();
            doc.parse_projected(text, &["a"]).unwrap();
            assert!(doc.parse_projected(text, &["b"]).is_err());
            let text = std::str::from_utf8(text).unwrap();
            doc.parse_projected_str(text, &["a"]).unwrap();
            assert!(doc.parse_projected_str(text, &["b"]).is_err());
        }
        for text in bad {
            let want = serde_json::from_slice::<Value>(text)
                .unwrap_err()
                .to_string();
            let mut doc = Doc::default();
            let got = doc.parse_projected(text, &["a"]).unwrap_err().to_string();
            assert_eq!(got, want, "{}", String::from_utf8_lossy(text));
            if let Ok(text) = std::str::from_utf8(text) {
                let got = doc
                    .parse_projected_str(text, &["a"])
                    .unwrap_err()
                    .to_string();
                assert_eq!(got, want, "{text}");
            }
            let got = Doc::from_slice(text).unwrap_err().to_string();
            assert_eq!(got, want, "{}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn repeated_keys_keep_first_position_and_last_value() {
        let text = br#"{"a": 1, "b": {"x": 1, "y": 2, "x": [3]}, "a": {"z": null}, "c": 0}"#;
        let full: Value = serde_json::from_slice(text).unwrap();
        assert_eq!(
            Doc::from_slice(text).unwrap(),
            Doc::from_value(&full).unwrap()
        );
        let mut doc = Doc::default();
        doc.parse_projected(text, &["a", "b"]).unwrap();
        let want = json!({"a": {"z": null}, "b": {"x": [3], "y": 2}});
        assert_eq!(doc, Doc::from_value(&want).unwrap());
        // A reused Doc holds only the latest text.
        doc.parse_projected(b"[1, 2]", &["a"]).unwrap();
        assert!(!doc.is_object());
        assert_eq!(doc, Doc::from_value(&json!([1, 2])).unwrap());
    }
}
