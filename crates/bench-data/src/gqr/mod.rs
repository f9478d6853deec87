//! GQR-Bench (guarded query routing, Šléher et al., ECAI 2025; `specs/gqr.md`): the dataset
//! registry, the exact v1 split procedure, the OOD test sets, the v2 background class and
//! GQR-unseen, rebuilt bit for bit without Python.

pub mod build;
pub mod data;
pub mod hub;
pub mod registry;
pub mod rows;
pub mod select;
pub mod store;
pub mod text;
pub mod v1;

use routeval_core::Domain;

/// The seed every GQR-Bench procedure uses (`SEED`).
pub const SEED: u64 = 42;
/// Rows taken per ID domain (`DATASET_SIZE`).
pub const DATASET_SIZE: usize = 15_000;
/// Test fraction of both v1 splits (`TRAIN_SPLIT`).
pub const TRAIN_SPLIT: f64 = 0.2;
/// Rows per dev subset (`DEV_SIZE`).
pub const DEV_SIZE: usize = 1_000;

/// The nine GQR-unseen sets in processing order, with their domains.
pub const UNSEEN_SETS: [(&str, Domain); 9] = [
    ("banking77", Domain::Finance),
    ("financial_qa_10k", Domain::Finance),
    ("reddit_finance", Domain::Finance),
    ("icliniq", Domain::Healthcare),
    ("medquad", Domain::Healthcare),
    ("med_flashcards", Domain::Healthcare),
    ("legal_reddit", Domain::Law),
    ("legal_qa_v1", Domain::Law),
    ("mmlu_professional_law", Domain::Law),
];

/// The seven OOD test sets in upstream order. Note the trailing space of
/// `"hate_speech_slovak "`, kept as upstream reports it.
pub const OOD_SETS: [&str; 7] = [
    "jigsaw",
    "olid",
    "hate_xplain",
    "hate_speech_slovak ",
    "dkhate",
    "web_questions",
    "ml_questions",
];
