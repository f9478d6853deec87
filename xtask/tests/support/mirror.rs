//! A synthetic mirror of every GQR-Bench registry source in the hub layout
//! (`<repo>/<file>`), in each source's real format (Parquet, CSV, JSON, JSONL), for tests of
//! the whole build. Shared by the xtask and cli tests (`#[path]` include).
#![allow(dead_code)]

use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::path::Path;
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
pub(crate) fn make_mirror(root: &Path) {
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
