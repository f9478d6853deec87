//! `cargo xtask build-data` end to end on mirrors generated here (nothing downloads):
//! the same synthetic mirror gives the same manifest twice, `--check` catches one changed
//! byte; tokenizers from the shared copies and from a 127.0.0.1 mock hub.

use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// A column for the test Parquet writer.
enum Col {
    Str(&'static str, Vec<Option<String>>),
    Int(&'static str, Vec<i64>),
}

fn write_parquet(path: &Path, cols: Vec<Col>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let fields: Vec<String> = cols
        .iter()
        .map(|c| match c {
            Col::Str(n, _) => format!("OPTIONAL BYTE_ARRAY {n} (UTF8);"),
            Col::Int(n, _) => format!("REQUIRED INT64 {n};"),
        })
        .collect();
    let schema = Arc::new(
        parse_message_type(&format!("message schema {{ {} }}", fields.join(" "))).unwrap(),
    );
    let props = Arc::new(WriterProperties::builder().build());
    let mut w =
        SerializedFileWriter::new(std::fs::File::create(path).unwrap(), schema, props).unwrap();
    let mut rg = w.next_row_group().unwrap();
    let mut i = 0;
    while let Some(mut col) = rg.next_column().unwrap() {
        match &cols[i] {
            Col::Str(_, v) => {
                let vals: Vec<ByteArray> = v
                    .iter()
                    .flatten()
                    .map(|s| ByteArray::from(s.as_str()))
                    .collect();
                let defs: Vec<i16> = v.iter().map(|x| x.is_some() as i16).collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&vals, Some(&defs), None)
                    .unwrap();
            }
            Col::Int(_, v) => {
                col.typed::<Int64Type>().write_batch(v, None, None).unwrap();
            }
        }
        col.close().unwrap();
        i += 1;
    }
    rg.close().unwrap();
    w.close().unwrap();
}

const WORDS: [&str; 16] = [
    "amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "heron", "indigo", "juniper",
    "kestrel", "lagoon", "maple", "nectar", "opal", "quartz",
];

fn phrase(seed: usize, n: usize) -> String {
    (0..n)
        .map(|k| WORDS[(seed / (k + 1) + k * 7 + seed) % 16])
        .collect::<Vec<_>>()
        .join(" ")
}

fn s(x: String) -> Option<String> {
    Some(x)
}

/// A synthetic mirror with every registry source (hub layout `<repo>/<file>`).
fn make_mirror(root: &Path) {
    let n_id = 2110;
    let id = |prefix: &str, n: usize| -> Vec<Option<String>> {
        (0..n)
            .map(|i| {
                if i == 5 {
                    None
                } else {
                    s(format!("{prefix} question {i} about {}", phrase(i, 3)))
                }
            })
            .collect()
    };
    write_parquet(
        &root.join("dim/law_stackexchange_prompts/data/train-00000-of-00001.parquet"),
        vec![
            Col::Str("prompt", id("law", n_id)),
            Col::Str("response", (0..n_id).map(|_| s("r".into())).collect()),
        ],
    );
    write_parquet(
        &root.join("DeividasM/financial-instruction-aq22/data/train-00000-of-00001.parquet"),
        vec![
            Col::Str("instruction", id("finance", n_id)),
            Col::Str("output", (0..n_id).map(|_| s("o".into())).collect()),
        ],
    );
    write_parquet(
        &root.join(
            "iecjsu/lavita-ChatDoctor-HealthCareMagic-100k/data/train-00000-of-00001.parquet",
        ),
        vec![
            Col::Str("input", id("health", n_id)),
            Col::Str("output", (0..n_id).map(|_| s("o".into())).collect()),
        ],
    );
    // OOD.
    let mut jig =
        String::from("id,comment_text,toxic,severe_toxic,obscene,threat,insult,identity_hate\n");
    for i in 0..40 {
        jig.push_str(&format!(
            "{i},\"jigsaw comment {i}, rude\",{},0,0,0,{},0\n",
            (i % 2),
            (i % 3 == 0) as u8
        ));
    }
    jig.push_str("40,NA,1,0,0,0,0,0\n41,\"  \",1,0,0,0,0,0\n");
    write(
        root,
        "Arsive/toxicity_classification_jigsaw/val_dataset.csv",
        &jig,
    );
    let mut olid = String::from("id,cleaned_tweet\n");
    for i in 0..30 {
        olid.push_str(&format!("{i},@USER tweet {i}\n"));
    }
    write(root, "christophsonntag/OLID/test.csv", &olid);
    write_parquet(
        &root.join("nirmalendu01/hateXplain_filtered/data/train-00000-of-00001.parquet"),
        vec![
            Col::Str(
                "test_case",
                (0..20).map(|i| s(format!("hate case {i}"))).collect(),
            ),
            Col::Str(
                "gold_label",
                (0..20)
                    .map(|i| {
                        s(if i % 4 == 0 {
                            "non-hateful".into()
                        } else {
                            "hateful".into()
                        })
                    })
                    .collect(),
            ),
        ],
    );
    let slovak: String = (0..25)
        .map(|i| {
            format!(
                "{{\"text\": \"slovenska veta {i}\", \"label\": {}}}\n",
                i % 2
            )
        })
        .collect();
    write(root, "TUKE-KEMT/hate_speech_slovak/test.json", &slovak);
    write_parquet(
        &root.join("DDSC/dkhate/data/test-00000-of-00001.parquet"),
        vec![
            Col::Str(
                "text",
                (0..12).map(|i| s(format!("dansk tekst {i}"))).collect(),
            ),
            Col::Int("label", (0..12).collect()),
        ],
    );
    write_parquet(
        &root.join("stanfordnlp/web_questions/data/test-00000-of-00001.parquet"),
        vec![Col::Str(
            "question",
            (0..33)
                .map(|i| s(format!("what is the capital of place {i}?")))
                .collect(),
        )],
    );
    write_parquet(
        &root.join(
            "mjphayes/machine_learning_questions/data/test-00000-of-00001-fbd3905b045b12b8.parquet",
        ),
        vec![Col::Str(
            "question",
            (0..9)
                .map(|i| s(format!("what is gradient descent variant {i}")))
                .collect(),
        )],
    );
    // Background.
    let wt = |off: usize| -> Vec<Option<String>> {
        (0..500)
            .map(|i| {
                let i = i + off;
                s(match i % 10 {
                    0 => " = Heading = \n".to_string(),
                    1 => " \n".to_string(),
                    _ => format!(
                        " The {} @-@ passage , built in 1 @,@ {i} , recalls the {} ( {} ) . \n",
                        WORDS[i % 16],
                        phrase(i, 4),
                        WORDS[(i / 16) % 16]
                    ),
                })
            })
            .collect()
    };
    write_parquet(
        &root.join("Salesforce/wikitext/wikitext-103-raw-v1/train-00000-of-00002.parquet"),
        vec![Col::Str("text", wt(0))],
    );
    write_parquet(
        &root.join("Salesforce/wikitext/wikitext-103-raw-v1/train-00001-of-00002.parquet"),
        vec![Col::Str("text", wt(500))],
    );
    let dolly: String = (0..650)
        .map(|i| format!("{{\"instruction\": \"Which {} recalls item {i} near the {}?\", \"context\": \"\", \"response\": \"x\", \"category\": \"open_qa\"}}\n", phrase(i, 3), WORDS[i % 16]))
        .collect();
    write(
        root,
        "databricks/databricks-dolly-15k/databricks-dolly-15k.jsonl",
        &dolly,
    );
    let yahoo = |off: usize| -> Vec<Col> {
        vec![
            Col::Int("id", (0..500).map(|i| (i + off) as i64).collect()),
            Col::Int("topic", (0..500).map(|i| ((i + off) % 6) as i64).collect()),
            Col::Str(
                "question_title",
                (0..500)
                    .map(|i| {
                        s(format!(
                            "Why does the {} shine {}?",
                            WORDS[(i + off) % 16],
                            i + off
                        ))
                    })
                    .collect(),
            ),
            Col::Str(
                "question_content",
                (0..500).map(|i| s(phrase(i + off, 3))).collect(),
            ),
            Col::Str("best_answer", (0..500).map(|_| s("a".into())).collect()),
        ]
    };
    write_parquet(&root.join("community-datasets/yahoo_answers_topics/yahoo_answers_topics/train-00000-of-00002.parquet"), yahoo(0));
    write_parquet(&root.join("community-datasets/yahoo_answers_topics/yahoo_answers_topics/train-00001-of-00002.parquet"), yahoo(500));
    // Unseen.
    let banking: String = (0..60)
        .map(|i| {
            format!(
                "{{\"text\": \"why was my card declined at shop {i}\", \"label\": {}}}\n",
                i % 7
            )
        })
        .collect();
    write(root, "mteb/banking77/test.jsonl", &banking);
    write_parquet(
        &root.join("virattt/financial-qa-10K/data/train-00000-of-00001.parquet"),
        vec![
            Col::Str(
                "question",
                (0..40)
                    .map(|i| {
                        s(if i % 3 == 0 {
                            format!("what was the weather {i} there")
                        } else {
                            format!("what was the revenue growth in year {i}")
                        })
                    })
                    .collect(),
            ),
            Col::Str("answer", (0..40).map(|_| s("a".into())).collect()),
        ],
    );
    write_parquet(
        &root.join("winddude/reddit_finance_43_250k/data/train-00000-of-00001.parquet"),
        vec![
            Col::Str(
                "title",
                (0..30)
                    .map(|i| {
                        s(if i == 0 {
                            "Daily Discussion Thread".into()
                        } else {
                            format!("should I sell my shares number {i}")
                        })
                    })
                    .collect(),
            ),
            Col::Str(
                "selftext",
                (0..30)
                    .map(|i| {
                        if i % 2 == 0 {
                            None
                        } else {
                            s(format!("body &amp; text {i}"))
                        }
                    })
                    .collect(),
            ),
        ],
    );
    write_parquet(
        &root.join("lavita/ChatDoctor-iCliniq/data/train-00000-of-00001.parquet"),
        vec![Col::Str(
            "input",
            (0..20)
                .map(|i| s(format!("I have a rash on my arm number {i}")))
                .collect(),
        )],
    );
    let mut medquad = String::from("qtype,Question,Answer\n");
    for i in 0..20 {
        medquad.push_str(&format!(
            "information,What are the symptoms of condition {i} ?,answer\n"
        ));
    }
    write(
        root,
        "keivalya/MedQuad-MedicalQnADataset/medDataset_processed.csv",
        &medquad,
    );
    let flash: Vec<String> = (0..20)
        .map(|i| {
            format!(
                "{{\"input\": \"What is the function of organ number {i}?\", \"output\": \"x\"}}"
            )
        })
        .collect();
    write(
        root,
        "medalpaca/medical_meadow_medical_flashcards/medical_meadow_wikidoc_medical_flashcards.json",
        &format!("[{}]", flash.join(",")),
    );
    write_parquet(
        &root.join("jonathanli/legal-advice-reddit/data/test-00000-of-00001.parquet"),
        vec![
            Col::Str(
                "title",
                (0..20)
                    .map(|i| s(format!("landlord kept my deposit case {i}")))
                    .collect(),
            ),
            Col::Str(
                "body",
                (0..20).map(|i| s(format!("what can I do {i}"))).collect(),
            ),
        ],
    );
    let lqa: String = (0..20)
        .map(|i| {
            format!(
                "{{\"question\": \"{}can I sue my neighbour {i}\", \"answer\": \"a\"}}\n",
                if i % 5 == 0 { "" } else { "Q: " }
            )
        })
        .collect();
    write(root, "dzunggg/legal-qa-v1/legalQA.jsonl", &lqa);
    write_parquet(
        &root.join("cais/mmlu/professional_law/test-00000-of-00001.parquet"),
        vec![
            Col::Str(
                "question",
                (0..20)
                    .map(|i| {
                        s(format!(
                            "A pilot crashed a plane in state {i}; is he liable?"
                        ))
                    })
                    .collect(),
            ),
            Col::Str(
                "subject",
                (0..20).map(|_| s("professional_law".into())).collect(),
            ),
        ],
    );
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn xtask(args: &[&str], envs: &[(&str, &Path)]) -> (bool, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xtask"));
    c.args(args)
        .env_remove("HF_TOKEN")
        .env_remove("GQR_HUB_ENDPOINT");
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn gqr_build_is_deterministic_and_check_catches_one_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let mirror = tmp.path().join("mirror");
    make_mirror(&mirror);
    let m = mirror.to_str().unwrap();
    let (c1, c2): (PathBuf, PathBuf) = (tmp.path().join("c1"), tmp.path().join("c2"));
    let args = ["build-data", "gqr", "--from", m, "--dataset-size", "2100"];
    let (ok, err) = xtask(&args, &[("GQR_CACHE_DIR", &c1)]);
    assert!(ok, "{err}");
    let (ok, err2) = xtask(&args, &[("GQR_CACHE_DIR", &c2)]);
    assert!(ok, "{err2}");
    let m1 = std::fs::read_to_string(c1.join("build/manifest.json")).unwrap();
    let m2 = std::fs::read_to_string(c2.join("build/manifest.json")).unwrap();
    assert_eq!(m1, m2, "same mirror, same manifest");
    let man: serde_json::Value = serde_json::from_str(&m1).unwrap();
    assert_eq!(man["missing"].as_array().unwrap().len(), 0, "{err}");
    let rows = |name: &str| {
        man["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == format!("{name}.jsonl"))
            .unwrap_or_else(|| panic!("{name} built: {err}"))["rows"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(rows("id_test"), 1260); // ceil(0.2 * 3 * 2100)
    assert_eq!(rows("train") + rows("eval"), 6300 - 1260);
    assert_eq!(rows("dev_train"), 1000);
    assert_eq!(
        rows("background_train"),
        (rows("train") as f64 / 3.0).round() as u64
    );
    assert_eq!(rows("train_v2"), rows("train") + rows("background_train"));
    // jigsaw: odd or insult rows (27; the NA and blank texts dropped), olid 30, hate_xplain 15
    // hateful, slovak 13 with label 0, dkhate 12, web_questions 33, ml_questions 9.
    assert_eq!(rows("ood_test"), 27 + 30 + 15 + 13 + 12 + 33 + 9);
    assert!(rows("unseen_id") > 100);
    assert!(
        err.contains("fingerprint"),
        "the fingerprint check warns on a non-reference corpus: {err}"
    );
    // --check passes, then catches one changed byte.
    let (ok, err) = xtask(&["build-data", "gqr", "--check"], &[("GQR_CACHE_DIR", &c1)]);
    assert!(ok, "{err}");
    let f = c1.join("build/train.jsonl");
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[10] ^= 1;
    std::fs::write(&f, bytes).unwrap();
    let (ok, err) = xtask(&["build-data", "gqr", "--check"], &[("GQR_CACHE_DIR", &c1)]);
    assert!(!ok, "a changed byte must fail --check");
    assert!(
        err.contains("train.jsonl") && err.contains("blake3"),
        "{err}"
    );
}

#[test]
fn help_works() {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("build-data"));
}

fn shared(test: &str) -> Option<PathBuf> {
    match std::env::var_os("ROUTEVAL_SHARED") {
        Some(p) => Some(PathBuf::from(p)),
        None if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("{test} needs ROUTEVAL_SHARED")
        }
        None => {
            eprintln!("SKIPPED: {test} needs ROUTEVAL_SHARED");
            None
        }
    }
}

const TOKENIZERS: [&str; 3] = ["anthropic", "deepseek-v3", "minimax-text-01"];

#[test]
fn tokenizers_from_shared_copies_then_check() {
    let Some(sh) = shared("tokenizers_from_shared_copies_then_check") else {
        return;
    };
    let src = sh.join("thirdparty/tokenizers");
    for t in TOKENIZERS {
        assert!(
            src.join(t).join("tokenizer.json").is_file(),
            "missing shared tokenizer {t}"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let env = [("ROUTEVAL_CACHE_DIR", tmp.path())];
    let (ok, err) = xtask(
        &[
            "build-data",
            "tokenizers",
            "--from",
            src.to_str().unwrap(),
            "--no-registries",
        ],
        &env,
    );
    assert!(ok, "{err}");
    for t in TOKENIZERS {
        let p = tmp.path().join("tokenizers").join(t).join("tokenizer.json");
        assert_eq!(
            std::fs::read(&p).unwrap(),
            std::fs::read(src.join(t).join("tokenizer.json")).unwrap()
        );
    }
    let (ok, err) = xtask(&["build-data", "tokenizers", "--check"], &env);
    assert!(ok, "{err}");
    let p = tmp.path().join("tokenizers/deepseek-v3/tokenizer.json");
    let mut b = std::fs::read(&p).unwrap();
    b[100] ^= 1;
    std::fs::write(&p, b).unwrap();
    let (ok, err) = xtask(&["build-data", "tokenizers", "--check"], &env);
    assert!(
        !ok && err.contains("deepseek-v3") && err.contains("blake3"),
        "{err}"
    );
}

/// A one-thread HTTP server on 127.0.0.1 serving `routes` (path → body), 404 otherwise.
fn serve(
    routes: Vec<(String, Vec<u8>)>,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log2 = log.clone();
    std::thread::spawn(move || {
        for st in l.incoming() {
            let Ok(mut st) = st else { continue };
            let mut r = BufReader::new(st.try_clone().unwrap());
            let mut line = String::new();
            let _ = r.read_line(&mut line);
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).is_err() || h == "\r\n" || h.is_empty() {
                    break;
                }
            }
            let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            log2.lock().unwrap().push(path.clone());
            let resp = match routes.iter().find(|(p, _)| *p == path) {
                Some((_, b)) => {
                    let mut v = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        b.len()
                    )
                    .into_bytes();
                    v.extend_from_slice(b);
                    v
                }
                None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_vec(),
            };
            let _ = st.write_all(&resp);
        }
    });
    (base, log)
}

#[test]
fn tokenizers_from_mock_hub() {
    let Some(sh) = shared("tokenizers_from_mock_hub") else {
        return;
    };
    let src = sh.join("thirdparty/tokenizers");
    let read = |t: &str| {
        std::fs::read(src.join(t).join("tokenizer.json"))
            .unwrap_or_else(|e| panic!("missing shared tokenizer {t}: {e}"))
    };
    let (base, log) = serve(vec![
        (
            "/deepseek-ai/DeepSeek-V3/resolve/main/tokenizer.json".into(),
            read("deepseek-v3"),
        ),
        // A wrong file for MiniMax: the blake3 check must refuse it.
        (
            "/MiniMaxAI/MiniMax-Text-01/resolve/main/tokenizer.json".into(),
            b"{\"not\": \"it\"}".to_vec(),
        ),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let only_anthropic = tmp.path().join("from");
    std::fs::create_dir_all(only_anthropic.join("anthropic")).unwrap();
    std::fs::write(
        only_anthropic.join("anthropic/tokenizer.json"),
        read("anthropic"),
    )
    .unwrap();
    let cache = tmp.path().join("cache");
    let (ok, err) = xtask(
        &[
            "build-data",
            "tokenizers",
            "--from",
            only_anthropic.to_str().unwrap(),
            "--no-registries",
            "--hub-endpoint",
            &base,
        ],
        &[("ROUTEVAL_CACHE_DIR", &cache)],
    );
    assert!(!ok, "minimax must fail: {err}");
    assert!(
        err.contains("minimax-text-01: FAILED") && err.contains("blake3 mismatch"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(cache.join("tokenizers/deepseek-v3/tokenizer.json")).unwrap(),
        read("deepseek-v3")
    );
    assert!(
        !cache
            .join("tokenizers/minimax-text-01/tokenizer.json")
            .exists()
    );
    assert!(
        !cache
            .join("tokenizers/minimax-text-01/tokenizer.json.part")
            .exists(),
        "no half-written file"
    );
    assert!(
        log.lock()
            .unwrap()
            .iter()
            .any(|p| p == "/deepseek-ai/DeepSeek-V3/resolve/main/tokenizer.json")
    );
}
