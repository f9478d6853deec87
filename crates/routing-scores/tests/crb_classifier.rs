//! Pure classifier vectors from `$ROUTEVAL_SHARED/golden/crb/classifier/classifier_vectors.json`:
//! prompts, reply parsing, URLs, exact request bodies and response handling of the HTTP scenarios.

use routeval_routing_scores::crb::classifier::*;
use routeval_test_support::golden::{Count, assert_count};
use serde_json::Value;

fn vectors() -> Option<Value> {
    let sh = routeval_core::fixtures::shared_dir("crb_classifier")?;
    let p = std::path::Path::new(&sh).join("golden/crb/classifier/classifier_vectors.json");
    Some(
        serde_json::from_slice(
            &std::fs::read(&p).unwrap_or_else(|e| panic!("missing {}: {e}", p.display())),
        )
        .unwrap(),
    )
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn constants_prompts_parsing_urls() {
    let Some(v) = vectors() else { return };
    assert_eq!(
        v["DEFAULT_ROUTER_SYSTEM_INSTRUCTION"],
        DEFAULT_ROUTER_SYSTEM_INSTRUCTION
    );
    assert_eq!(v["ROUTER_USER_OUTPUT_SUFFIX"], ROUTER_USER_OUTPUT_SUFFIX);
    // Count guards: the vector file is fixed (its README: 6 rows + 4 invalid, 25 replies, 6
    // base URLs, 17 HTTP scenarios), so every section's size is exact.
    let prompts = v["prompts"].as_array().unwrap();
    let replies = v["parse_tier_response_to_id"].as_array().unwrap();
    let urls = v["chat_completions_url"].as_array().unwrap();
    assert_count("classifier prompts", prompts.len(), Count::Exact(10));
    assert_count("classifier replies", replies.len(), Count::Exact(25));
    assert_count("classifier URLs", urls.len(), Count::Exact(6));
    let (mut prompt_ok, mut prompt_err, mut reply_ok, mut reply_err) = (0, 0, 0, 0);
    for p in prompts {
        let msgs = p["messages"].as_array().unwrap();
        let f = p.get("functions").filter(|f| !f.is_null());
        match (classifier_prompt(msgs, f), p["prompt"].get("value")) {
            (Ok(got), Some(exp)) => {
                assert_eq!(got, exp.as_str().unwrap(), "{}", p["row_id"]);
                prompt_ok += 1;
            }
            (Err(e), None) => {
                assert_eq!(
                    e,
                    p["prompt"]["error"]["message"].as_str().unwrap(),
                    "{}",
                    p["row_id"]
                );
                prompt_err += 1;
            }
            (got, _) => panic!("{}: {got:?}", p["row_id"]),
        }
    }
    for c in replies {
        let got = parse_tier_response(c["content"].as_str().unwrap());
        match (got, c["result"].get("value")) {
            (Ok((t, _)), Some(exp)) => {
                assert_eq!(t, exp.as_i64().unwrap(), "{}", c["content"]);
                reply_ok += 1;
            }
            (Err(e), None) => {
                assert_eq!(e, c["result"]["error"]["message"].as_str().unwrap());
                reply_err += 1;
            }
            (got, _) => panic!("{}: {got:?}", c["content"]),
        }
    }
    assert_eq!(
        (prompt_ok, prompt_err),
        (6, 4),
        "valid / invalid prompt rows"
    );
    assert!(
        reply_ok >= 1 && reply_err >= 1,
        "{reply_ok} parsed, {reply_err} refused"
    );
    for c in urls {
        assert_eq!(
            chat_completions_url(c["base_url"].as_str().unwrap()),
            c["url"].as_str().unwrap()
        );
    }
}

/// The prompt an HTTP scenario sent: the user content of its recorded body minus the suffix.
fn sent_prompt(body_text: &str) -> String {
    let b: Value = serde_json::from_str(body_text).unwrap();
    let user = b["messages"][1]["content"].as_str().unwrap();
    user.strip_suffix(ROUTER_USER_OUTPUT_SUFFIX)
        .unwrap()
        .to_string()
}

#[test]
#[ignore = "needs ROUTEVAL_SHARED"]
fn http_scenarios_bodies_and_replies() {
    let Some(v) = vectors() else { return };
    let e2e = &v["llm_predictor_end_to_end"];
    let row_prompt_text = v["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["row_id"] == e2e["row_id"])
        .unwrap()["prompt"]["value"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        format!(
            "{}{}",
            row_prompt_text.trim_end(),
            ROUTER_USER_OUTPUT_SUFFIX
        ),
        e2e["user_content_sent"].as_str().unwrap()
    );
    let mut bodies = 0;
    let scenarios = v["http"].as_array().unwrap();
    assert_count(
        "classifier HTTP scenarios",
        scenarios.len(),
        Count::Exact(17),
    );
    for h in scenarios {
        let kw = &h["constructor_kwargs"];
        let mut cfg = ClassifierConfig::new(kw["model"].as_str().unwrap());
        if let Some(s) = kw["system_instruction"].as_str() {
            cfg.system_instruction = s.to_string();
        }
        if let Some(m) = kw["max_completion_tokens"].as_i64() {
            cfg.max_completion_tokens = m;
        }
        cfg.system_prompt_cache = match kw["system_prompt_cache"].as_str() {
            Some("on") => SystemPromptCache::On,
            Some("off") => SystemPromptCache::Off,
            _ => SystemPromptCache::Auto,
        };
        for r in h["requests"].as_array().unwrap() {
            if let Some(bt) = r["body_text"].as_str() {
                assert_eq!(cfg.request_body(&sent_prompt(bt)), bt, "{}", h["name"]);
                bodies += 1;
            }
            assert_eq!(r["path"], "/v1/chat/completions");
        }
        // The final response decides the result (retries are the CLI's business).
        let last = h["server_script"].as_array().unwrap().last().unwrap();
        let status = last["status"].as_u64().unwrap() as u16;
        let body = last["body"].as_str().unwrap();
        let url = chat_completions_url("http://127.0.0.1:<PORT>/v1/");
        let got = if status == 200 {
            parse_response_body(body)
        } else {
            Err(http_error_message(status, &url, body))
        };
        match (got, h["result"].get("value")) {
            (Ok(r), Some(exp)) => {
                assert_eq!(r.tier_id, exp["tier_id"].as_i64().unwrap(), "{}", h["name"]);
                assert_eq!(r.raw_content, exp["raw_content"].as_str().unwrap());
                assert_eq!(r.usage.unwrap_or(Value::Null), exp["usage"]);
            }
            (Err(e), None) => assert_eq!(
                e,
                h["result"]["error"]["message"].as_str().unwrap(),
                "{}",
                h["name"]
            ),
            (got, _) => panic!("{}: {got:?}", h["name"]),
        }
    }
    assert!(bodies >= 4);
}
