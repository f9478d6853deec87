//! The exact GQR-Bench v1 split procedure (`specs/gqr.md` §2.2): ID test split, pandas
//! shuffle, scikit-learn stratified train/eval split and the dev subsets.

use crate::nprandom::{
    SplitError, hf_train_test_split, pandas_sample, stratified_train_test_split,
};
use routeval_core::Domain;

/// One in-domain row: its text and domain (the label is `domain.label()`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdRow {
    /// The text, as the source gives it (not stripped).
    pub text: String,
    /// The domain.
    pub domain: Domain,
}

/// A frame: rows plus their pandas index labels (kept through `train_test_split` and
/// `sample`, as upstream does).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Frame {
    /// Rows in frame order.
    pub rows: Vec<IdRow>,
    /// The pandas index label of each row.
    pub index: Vec<usize>,
}

impl Frame {
    fn take(&self, positions: &[usize]) -> Frame {
        Frame {
            rows: positions.iter().map(|&p| self.rows[p].clone()).collect(),
            index: positions.iter().map(|&p| self.index[p]).collect(),
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the frame has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// The v1 splits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V1Splits {
    /// The ID test set (9000 rows at full scale), fresh RangeIndex.
    pub id_test: Frame,
    /// The HF train part after `sample(frac=1, random_state=42).reset_index(drop=True)`.
    pub shuffled_train: Frame,
    /// scikit-learn's train part (28,800 rows), index labels of `shuffled_train`.
    pub train: Frame,
    /// scikit-learn's eval part (7,200 rows).
    pub eval: Frame,
}

/// A v1 build failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum V1Error {
    /// A source has fewer filtered rows than it must contribute (upstream: `IndexError`).
    #[error("{domain} source has {have} rows after filtering, needs {need}")]
    TooFewRows {
        /// The domain.
        domain: Domain,
        /// Filtered rows.
        have: usize,
        /// `min(dataset_size, unfiltered rows)`.
        need: usize,
    },
    /// A split failed.
    #[error(transparent)]
    Split(#[from] SplitError),
}

/// One ID source after filtering: its filtered texts and the unfiltered row count.
#[derive(Debug, Clone)]
pub struct IdSource {
    /// The domain.
    pub domain: Domain,
    /// Texts of the rows that passed the filters, in source order.
    pub filtered_texts: Vec<String>,
    /// Rows of the unfiltered split.
    pub unfiltered_rows: usize,
}

/// Run the v1 procedure on the three ID sources (law, finance, healthcare, in that order):
/// take the first `min(dataset_size, unfiltered)` filtered rows of each, concatenate, split.
pub fn v1_splits(
    sources: &[IdSource],
    dataset_size: usize,
    seed: u64,
) -> Result<V1Splits, V1Error> {
    let mut all = Vec::new();
    for s in sources {
        let need = dataset_size.min(s.unfiltered_rows);
        if s.filtered_texts.len() < need {
            return Err(V1Error::TooFewRows {
                domain: s.domain,
                have: s.filtered_texts.len(),
                need,
            });
        }
        all.extend(s.filtered_texts[..need].iter().map(|t| IdRow {
            text: t.clone(),
            domain: s.domain,
        }));
    }
    let n = all.len();
    let (hf_train, hf_test) = hf_train_test_split(n, super::TRAIN_SPLIT, seed)?;
    let pick = |ids: &[usize]| Frame {
        rows: ids.iter().map(|&i| all[i].clone()).collect(),
        index: (0..ids.len()).collect(),
    };
    let id_test = pick(&hf_test);
    let hf_train = pick(&hf_train);
    let perm = pandas_sample(hf_train.len(), hf_train.len(), seed as u32)?;
    let mut shuffled_train = hf_train.take(&perm);
    shuffled_train.index = (0..shuffled_train.len()).collect();
    let y: Vec<&str> = shuffled_train
        .rows
        .iter()
        .map(|r| r.domain.name())
        .collect();
    let split = stratified_train_test_split(&y, super::TRAIN_SPLIT, seed as u32)?;
    let train = shuffled_train.take(&split.train);
    let eval = shuffled_train.take(&split.test);
    Ok(V1Splits {
        id_test,
        shuffled_train,
        train,
        eval,
    })
}

/// `load_dev_dataset()`'s subset of one frame: `frame.sample(size, random_state=seed)`, index
/// labels kept. Errors (as pandas) when the frame has fewer than `size` rows.
pub fn dev_subset(frame: &Frame, size: usize, seed: u64) -> Result<Frame, SplitError> {
    let pos = pandas_sample(frame.len(), size, seed as u32)?;
    Ok(frame.take(&pos))
}

/// `DataFrame.sample(frac=1, random_state=seed).reset_index(drop=True)` on any rows.
pub fn pandas_shuffle<T: Clone>(rows: &[T], seed: u64) -> Vec<T> {
    match pandas_sample(rows.len(), rows.len(), seed as u32) {
        Ok(perm) => perm.iter().map(|&p| rows[p].clone()).collect(),
        Err(_) => rows.to_vec(),
    }
}
