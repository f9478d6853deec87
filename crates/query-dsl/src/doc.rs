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
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    nodes: Box<[Node]>,
    text: Box<str>,
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
        Ok(Doc {
            nodes: nodes.into_boxed_slice(),
            text: text.into_boxed_str(),
        })
    }

    /// Parse one JSON text into a `Doc` (via `serde_json`, so duplicate keys, number
    /// handling and errors are exactly those of the `Value` path).
    ///
    /// # Errors
    /// A `serde_json` error for invalid JSON, or a custom one wrapping [`DocTooLarge`].
    pub fn from_slice(bytes: &[u8]) -> Result<Doc, serde_json::Error> {
        let v: Value = serde_json::from_slice(bytes)?;
        Doc::from_value(&v).map_err(<serde_json::Error as serde::de::Error>::custom)
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
