//! The pure parts of CommonRouterBench's OpenAI-compatible digit classifier (`specs/crb.md` §6):
//! prompt linearisation, the request body, the URL, and reply parsing. HTTP lives in the CLI.
//!
//! The two prompt texts are the reference's verbatim strings (so that requests are identical
//! and cached replies interchangeable); they are behaviour, pinned by
//! `golden/crb/classifier/classifier_vectors.json`.

use routeval_tier_cost::pyjson::{
    DumpOptions, dumps, is_py_space, py_repr_str, py_rstrip, py_str, py_strip, truthy,
};
use serde_json::{Map, Value, json};

/// The reference's `DEFAULT_ROUTER_SYSTEM_INSTRUCTION`.
pub const DEFAULT_ROUTER_SYSTEM_INSTRUCTION: &str = "You are a machine-facing routing labeler, not a chat assistant.\n\nThe user message contains ONE case (a trajectory excerpt). Your job: pick which capability tier is appropriate for the NEXT model call in that trajectory.\n\nTier ids (pick exactly one digit):\n- 0 = low\n- 1 = mid\n- 2 = mid_high\n- 3 = high\n\nYou MUST NOT explain, think out loud, plan, apologize, or add any prose. No \"THOUGHT:\", no XML/HTML tags, no markdown fences, no bullet lists, no quotes around the digit.\n\nYour assistant message is consumed by a strict parser: it must be ONE line only, and that line must be a single ASCII digit 0\u{2013}3. If you output a second line, or any non-digit character on the line, the run fails.\n\nDo not describe the case. Do not justify. Output the digit only.";

/// The reference's `ROUTER_USER_OUTPUT_SUFFIX`, appended to the right-stripped prompt.
pub const ROUTER_USER_OUTPUT_SUFFIX: &str = "\n---\n[OUTPUT_FORMAT \u{2014} read before you reply]\nYour next assistant message must satisfy ALL of:\n1) Exactly one line (no line breaks inside the message body).\n2) That line is exactly one character.\n3) That character is one of: 0, 1, 2, 3 (tier id for the next model call).\n\nInvalid (parser will reject): multiple lines; leading/trailing words; \"THOUGHT:\"; \"```\"; \"Answer: 2\"; spaces like \" 2 \"; anything except a lone digit on one line.\n\nValid examples (the entire assistant message): 0\nValid examples: 3\n";

/// Tool-call JSON longer than this many code points is truncated in prompts.
pub const TOOL_CALLS_MAX_CHARS: usize = 12000;

/// `linearize_messages_for_openai_compat`: `(role, content)` pairs (tool results become `user`).
///
/// Errors (the reference's `ValueError` texts): unsupported or missing role; a tool message
/// without a truthy `tool_call_id`.
pub fn linearize_messages(messages: &[Value]) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let role = m.get("role");
        let role_s = role.and_then(Value::as_str).unwrap_or("");
        if !matches!(role_s, "system" | "user" | "assistant" | "tool") {
            let shown = match role {
                None | Some(Value::Null) => "None".to_string(),
                Some(Value::String(s)) => py_repr_str(s),
                Some(other) => routeval_tier_cost::pyjson::py_repr(other),
            };
            return Err(format!("Unsupported message role: {shown}"));
        }
        let content = match m.get("content") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => dumps(other, DumpOptions::default()),
        };
        match role_s {
            "assistant" => {
                let mut content = content;
                if let Some(tc) = m.get("tool_calls").filter(|t| truthy(t)) {
                    let extra = dumps(tc, DumpOptions::default());
                    let extra = if extra.chars().count() > TOOL_CALLS_MAX_CHARS {
                        let cut: String = extra.chars().take(TOOL_CALLS_MAX_CHARS).collect();
                        format!("{cut}...(truncated)")
                    } else {
                        extra
                    };
                    content = format!("{content}\n[tool_calls JSON]\n{extra}");
                }
                out.push(("assistant".to_string(), content));
            }
            "tool" => {
                let tid = m
                    .get("tool_call_id")
                    .filter(|t| truthy(t))
                    .ok_or_else(|| "tool message missing tool_call_id".to_string())?;
                out.push((
                    "user".to_string(),
                    format!("[tool result tool_call_id={}]\n{content}", py_str(tid)),
                ));
            }
            r => out.push((r.to_string(), content)),
        }
    }
    Ok(out)
}

/// `format_linear_messages_as_user_prompt`: `"### role\ncontent"` blocks joined by blank lines.
pub fn format_linear_messages(linear: &[(String, String)]) -> String {
    linear
        .iter()
        .map(|(r, c)| format!("### {r}\n{c}"))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// `question_bank_messages_to_classifier_prompt(messages, functions)`: the linearised messages,
/// prefixed by `### available_tools` + `json.dumps(functions, indent=2)` when `functions` is truthy.
pub fn classifier_prompt(messages: &[Value], functions: Option<&Value>) -> Result<String, String> {
    let body = format_linear_messages(&linearize_messages(messages)?);
    match functions.filter(|f| truthy(f)) {
        Some(f) => Ok(format!(
            "### available_tools\n{}\n\n{body}",
            dumps(
                f,
                DumpOptions {
                    indent: Some(2),
                    ..Default::default()
                }
            )
        )),
        None => Ok(body),
    }
}

/// The prompt of a question-bank row (`LlmDigitClassifierPredictor`): `messages` must be a list.
pub fn row_prompt(row: &Value) -> Result<String, String> {
    let id = row.get("id").cloned().unwrap_or(Value::Null);
    let messages = row
        .get("messages")
        .ok_or_else(|| "'messages'".to_string())?
        .as_array()
        .ok_or_else(|| {
            format!(
                "row {} messages must be a list",
                match &id {
                    Value::String(s) => py_repr_str(s),
                    other => other.to_string(),
                }
            )
        })?;
    classifier_prompt(messages, row.get("functions"))
}

/// `_chat_completions_url(base_url)`.
pub fn chat_completions_url(base_url: &str) -> String {
    let b = py_strip(base_url).trim_end_matches('/');
    if b.ends_with("/chat/completions") {
        b.to_string()
    } else {
        format!("{b}/chat/completions")
    }
}

/// How the system prompt is sent (`system_prompt_cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemPromptCache {
    /// Always a cache-control block.
    On,
    /// Always a plain string.
    Off,
    /// A block iff the model id contains `claude` (case-insensitive).
    Auto,
}

/// The classifier's request settings.
#[derive(Debug, Clone)]
pub struct ClassifierConfig {
    /// Model id sent in the body.
    pub model: String,
    /// System text (default [`DEFAULT_ROUTER_SYSTEM_INSTRUCTION`]).
    pub system_instruction: String,
    /// System-prompt cache mode.
    pub system_prompt_cache: SystemPromptCache,
    /// `max_tokens` (default 4).
    pub max_completion_tokens: i64,
}

impl ClassifierConfig {
    /// The reference's defaults for `model`.
    pub fn new(model: &str) -> Self {
        ClassifierConfig {
            model: model.to_string(),
            system_instruction: DEFAULT_ROUTER_SYSTEM_INSTRUCTION.to_string(),
            system_prompt_cache: SystemPromptCache::Auto,
            max_completion_tokens: 4,
        }
    }

    /// The JSON body text `requests` sends: ASCII-escaped, default separators.
    pub fn request_body(&self, prompt: &str) -> String {
        let block = match self.system_prompt_cache {
            SystemPromptCache::On => true,
            SystemPromptCache::Off => false,
            SystemPromptCache::Auto => self.model.to_lowercase().contains("claude"),
        };
        let system = if block {
            json!([{"type": "text", "text": self.system_instruction, "cache_control": {"type": "ephemeral"}}])
        } else {
            Value::String(self.system_instruction.clone())
        };
        let user = format!("{}{}", py_rstrip(prompt), ROUTER_USER_OUTPUT_SUFFIX);
        let mut body = Map::new();
        body.insert("model".into(), Value::String(self.model.clone()));
        body.insert(
            "messages".into(),
            json!([{"role": "system", "content": system}, {"role": "user", "content": user}]),
        );
        body.insert("max_tokens".into(), Value::from(self.max_completion_tokens));
        body.insert("temperature".into(), Value::from(0));
        dumps(
            &Value::Object(body),
            DumpOptions {
                ensure_ascii: true,
                ..Default::default()
            },
        )
    }
}

/// `parse_tier_response_to_id(content)`: exactly one ASCII digit 0–3 after stripping whitespace.
pub fn parse_tier_response(content: &str) -> Result<(i64, String), String> {
    let s = content.trim_matches(is_py_space);
    if s.contains('\n') || s.contains('\r') {
        return Err(
            "model content must not contain embedded line breaks (only one line after strip)"
                .into(),
        );
    }
    let n = s.chars().count();
    if n != 1 {
        return Err(format!(
            "expected exactly one character after strip, got length {n}: {}",
            py_repr_str(s)
        ));
    }
    match s {
        "0" | "1" | "2" | "3" => Ok((s.parse().unwrap_or(0), s.to_string())),
        _ => Err(format!("expected digit 0-3, got {}", py_repr_str(s))),
    }
}

/// A parsed successful reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifierReply {
    /// The tier id.
    pub tier_id: i64,
    /// The stripped reply text.
    pub raw_content: String,
    /// The response's `usage` when it is an object.
    pub usage: Option<Value>,
}

/// Interpret a 200 response body (the reference's error texts for every malformed shape).
pub fn parse_response_body(body: &str) -> Result<ClassifierReply, String> {
    let v: Value = serde_json::from_str(body).map_err(|_| {
        let prefix: String = body.chars().take(400).collect();
        format!(
            "response is not JSON (body prefix): {}",
            py_repr_str(&prefix)
        )
    })?;
    let obj = match &v {
        Value::Object(o) => o,
        other => {
            let t = routeval_tier_cost::message::py_type_name(other);
            return Err(format!("'{t}' object has no attribute 'get'"));
        }
    };
    let choices = obj
        .get("choices")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty())
        .ok_or_else(|| {
            format!(
                "unexpected response shape (choices): [{}]",
                obj.keys()
                    .map(|k| py_repr_str(k))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
    let msg = choices[0]
        .get("message")
        .and_then(Value::as_object)
        .ok_or_else(|| "unexpected response shape (choices[0].message)".to_string())?;
    let content = match msg.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err("choices[0].message.content is not a string".into()),
    };
    let (tier_id, raw) = parse_tier_response(&content)?;
    Ok(ClassifierReply {
        tier_id,
        raw_content: raw,
        usage: obj.get("usage").filter(|u| u.is_object()).cloned(),
    })
}

/// Whether an HTTP status is retried (408, 429, 500, 502, 503, 504).
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500 | 502 | 503 | 504)
}

/// The error text of a non-200 response: `HTTP <status> from <url>: <first 800 chars>`.
pub fn http_error_message(status: u16, url: &str, body: &str) -> String {
    let prefix: String = body.chars().take(800).collect();
    format!("HTTP {status} from {url}: {prefix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_only() {
        assert_eq!(parse_tier_response("\u{a0}2\u{a0}").unwrap().0, 2);
        assert!(parse_tier_response("٣").is_err());
        assert_eq!(
            chat_completions_url("  https://x/v1//  "),
            "https://x/v1/chat/completions"
        );
    }
}
