//! The measure registry: trec_eval's measure table, its nicknames, and `-m name.params` parsing.
//!
//! Source: trec_eval 10.0-rc3 `measures.c` (table order = print order), `meas_init.c`
//! (parameter parsing and value naming) and each `m_<name>.c` (defaults).

use routeval_core::Error;
use std::borrow::Cow;

/// One trec_eval measure (a row of trec_eval's `measures.c` table), in print order.
///
/// Every measure of the `all_trec` nickname is here, plus `dcg` and `ideal_dcg` (in trec_eval's
/// table but in no nickname). Preference measures (`-R prefs`) are not supported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MeasureId {
    /// `runid`: the run tag of the last line of the run file.
    Runid,
    /// `num_q`: number of queries averaged over.
    NumQ,
    /// `num_ret`: documents retrieved (summary: sum).
    NumRet,
    /// `num_rel`: relevant documents judged (summary: sum).
    NumRel,
    /// `num_rel_ret`: relevant documents retrieved (summary: sum).
    NumRelRet,
    /// `map`: mean average precision.
    Map,
    /// `gm_map`: geometric mean of average precision.
    GmMap,
    /// `Rprec`: precision after R documents.
    Rprec,
    /// `bpref`: binary preference.
    Bpref,
    /// `recip_rank`: reciprocal rank of the first relevant document.
    RecipRank,
    /// `iprec_at_recall`: interpolated precision at recall levels.
    IprecAtRecall,
    /// `P`: precision at cutoffs.
    P,
    /// `relstring`: relevance string of the top documents (per query only).
    Relstring,
    /// `recall`: recall at cutoffs.
    Recall,
    /// `infAP`: inferred average precision.
    InfAP,
    /// `gm_bpref`: geometric mean of bpref.
    GmBpref,
    /// `Rprec_mult`: precision at multiples of R.
    RprecMult,
    /// `utility`: linear set utility.
    Utility,
    /// `11pt_avg`: interpolated precision averaged over recall points.
    ElevenPtAvg,
    /// `binG`: binary G.
    BinG,
    /// `G`: normalized gain.
    G,
    /// `dcg`: discounted cumulative gain (not in `all_trec`).
    Dcg,
    /// `ideal_dcg`: ideal DCG (not in `all_trec`).
    IdealDcg,
    /// `ndcg`: normalized DCG over the whole ranking.
    Ndcg,
    /// `ndcg_rel`: nDCG averaged over relevant documents.
    NdcgRel,
    /// `Rndcg`: nDCG averaged at the R levels.
    Rndcg,
    /// `ndcg_cut`: nDCG at cutoffs.
    NdcgCut,
    /// `map_cut`: average precision at cutoffs.
    MapCut,
    /// `relative_P`: relative precision at cutoffs.
    RelativeP,
    /// `success`: success at cutoffs.
    Success,
    /// `set_P`: set precision.
    SetP,
    /// `set_relative_P`: relative set precision.
    SetRelativeP,
    /// `set_recall`: set recall.
    SetRecall,
    /// `set_map`: unranked set MAP.
    SetMap,
    /// `set_F`: set F measure.
    SetF,
    /// `num_nonrel_judged_ret`: judged non-relevant documents retrieved (summary: sum).
    NumNonrelJudgedRet,
    /// `rbp`: rank-biased precision.
    Rbp,
    /// `rbp_resid`: RBP residual.
    RbpResid,
    /// `unj`: fraction of unjudged documents at cutoffs.
    Unj,
    /// `recip_rank_cut`: reciprocal rank cut at k (MRR@k). A routeval addition, not in
    /// trec_eval 10.0-rc3 (whose `recip_rank` has no cut-off); in no nickname.
    RecipRankCut,
}

/// Parameters a measure takes, with its defaults (from its `m_<name>.c`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// No parameters.
    None,
    /// Integer document cutoffs (sorted ascending, positive, no duplicates); one value each.
    Cutoffs(&'static [i64]),
    /// Fractional cutoffs (sorted ascending, no duplicates); one value each, named `%3.2f`.
    Fractions(&'static [f64]),
    /// A list of numbers kept in the given order; one value named `name_<params>`.
    Numbers(&'static [f64]),
    /// `level=gain` pairs (and `p=` for rbp); one value named `name_<params>`.
    Pairs,
}

/// How a measure's per-query values become the summary (`all`) value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// Sum over queries, printed as an integer (`num_ret`, ...).
    Sum,
    /// Arithmetic mean over queries.
    Mean,
    /// Geometric mean (`exp(mean(ln(max(v, 0.00001))))`), summary only.
    GeoMean,
    /// The number of queries (`num_q`).
    NumQ,
    /// The run tag (`runid`), summary only.
    Runid,
    /// No summary (`relstring`, per query only).
    NoSummary,
}

const CUT_STD: &[i64] = &[5, 10, 15, 20, 30, 100, 200, 500, 1000];
const CUT_SUCCESS: &[i64] = &[1, 5, 10];
const CUT_UNJ: &[i64] = &[5, 10, 20];
const RECALL_PTS: &[f64] = &[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];
const RPREC_MULT: &[f64] = &[0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0];
const UTILITY: &[f64] = &[1.0, -1.0, 0.0, 0.0];
const RELSTRING: &[f64] = &[10.0];
const SET_F: &[f64] = &[1.0];

impl MeasureId {
    /// Every supported measure, in trec_eval's table (print) order.
    pub const ALL: [MeasureId; 40] = [
        MeasureId::Runid,
        MeasureId::NumQ,
        MeasureId::NumRet,
        MeasureId::NumRel,
        MeasureId::NumRelRet,
        MeasureId::Map,
        MeasureId::GmMap,
        MeasureId::Rprec,
        MeasureId::Bpref,
        MeasureId::RecipRank,
        MeasureId::IprecAtRecall,
        MeasureId::P,
        MeasureId::Relstring,
        MeasureId::Recall,
        MeasureId::InfAP,
        MeasureId::GmBpref,
        MeasureId::RprecMult,
        MeasureId::Utility,
        MeasureId::ElevenPtAvg,
        MeasureId::BinG,
        MeasureId::G,
        MeasureId::Dcg,
        MeasureId::IdealDcg,
        MeasureId::Ndcg,
        MeasureId::NdcgRel,
        MeasureId::Rndcg,
        MeasureId::NdcgCut,
        MeasureId::MapCut,
        MeasureId::RelativeP,
        MeasureId::Success,
        MeasureId::SetP,
        MeasureId::SetRelativeP,
        MeasureId::SetRecall,
        MeasureId::SetMap,
        MeasureId::SetF,
        MeasureId::NumNonrelJudgedRet,
        MeasureId::Rbp,
        MeasureId::RbpResid,
        MeasureId::Unj,
        MeasureId::RecipRankCut,
    ];

    /// trec_eval's name for the measure (`P`, `ndcg_cut`, `11pt_avg`, ...).
    pub fn name(self) -> &'static str {
        use MeasureId::*;
        match self {
            Runid => "runid",
            NumQ => "num_q",
            NumRet => "num_ret",
            NumRel => "num_rel",
            NumRelRet => "num_rel_ret",
            Map => "map",
            GmMap => "gm_map",
            Rprec => "Rprec",
            Bpref => "bpref",
            RecipRank => "recip_rank",
            IprecAtRecall => "iprec_at_recall",
            P => "P",
            Relstring => "relstring",
            Recall => "recall",
            InfAP => "infAP",
            GmBpref => "gm_bpref",
            RprecMult => "Rprec_mult",
            Utility => "utility",
            ElevenPtAvg => "11pt_avg",
            BinG => "binG",
            G => "G",
            Dcg => "dcg",
            IdealDcg => "ideal_dcg",
            Ndcg => "ndcg",
            NdcgRel => "ndcg_rel",
            Rndcg => "Rndcg",
            NdcgCut => "ndcg_cut",
            MapCut => "map_cut",
            RelativeP => "relative_P",
            Success => "success",
            SetP => "set_P",
            SetRelativeP => "set_relative_P",
            SetRecall => "set_recall",
            SetMap => "set_map",
            SetF => "set_F",
            NumNonrelJudgedRet => "num_nonrel_judged_ret",
            Rbp => "rbp",
            RbpResid => "rbp_resid",
            Unj => "unj",
            RecipRankCut => "recip_rank_cut",
        }
    }

    /// The measure named `name` (exact, case-sensitive, as trec_eval), or `None`.
    pub fn from_name(name: &str) -> Option<MeasureId> {
        MeasureId::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The parameters the measure takes, with trec_eval's defaults.
    pub fn param_kind(self) -> ParamKind {
        use MeasureId::*;
        match self {
            P | Recall | NdcgCut | MapCut | RelativeP | RecipRankCut => ParamKind::Cutoffs(CUT_STD),
            Success => ParamKind::Cutoffs(CUT_SUCCESS),
            Unj => ParamKind::Cutoffs(CUT_UNJ),
            IprecAtRecall => ParamKind::Fractions(RECALL_PTS),
            RprecMult => ParamKind::Fractions(RPREC_MULT),
            Utility => ParamKind::Numbers(UTILITY),
            ElevenPtAvg => ParamKind::Numbers(RECALL_PTS),
            Relstring => ParamKind::Numbers(RELSTRING),
            SetF => ParamKind::Numbers(SET_F),
            G | Dcg | IdealDcg | Ndcg | NdcgRel | Rndcg | Rbp | RbpResid => ParamKind::Pairs,
            _ => ParamKind::None,
        }
    }

    /// How the summary value is formed.
    pub fn aggregate(self) -> Aggregate {
        use MeasureId::*;
        match self {
            Runid => Aggregate::Runid,
            NumQ => Aggregate::NumQ,
            NumRet | NumRel | NumRelRet | NumNonrelJudgedRet => Aggregate::Sum,
            GmMap | GmBpref => Aggregate::GeoMean,
            Relstring => Aggregate::NoSummary,
            _ => Aggregate::Mean,
        }
    }

    /// Whether the value is an integer count (printed with `%ld`).
    pub fn is_count(self) -> bool {
        matches!(self.aggregate(), Aggregate::Sum | Aggregate::NumQ)
    }

    /// Whether trec_eval prints the measure for each query under `-q`.
    pub fn printed_per_query(self) -> bool {
        !matches!(
            self,
            MeasureId::Runid | MeasureId::NumQ | MeasureId::GmMap | MeasureId::GmBpref
        )
    }

    /// One paragraph: definition and source (trec_eval `m_<file>.c`), for `--help` and docs.
    pub fn explanation(self) -> &'static str {
        use MeasureId::*;
        match self {
            Runid => "Run tag from the last line of the run file (m_runid.c). Summary only.",
            NumQ => {
                "Number of queries averaged over; with -c, every query in the qrels (m_num_q.c)."
            }
            NumRet => "Documents retrieved (after -M and -J). Summary is the sum (m_num_ret.c).",
            NumRel => {
                "Relevant judged documents (rel >= -l). Summary is the sum; with -c, every qrels line with rel > 0, ignoring -l, as trec_eval (m_num_rel.c)."
            }
            NumRelRet => "Relevant documents retrieved. Summary is the sum (m_num_rel_ret.c).",
            Map => {
                "Average precision: sum of precision at each relevant retrieved doc / num_rel (m_map.c)."
            }
            GmMap => {
                "Geometric mean over queries of AP floored at 0.00001. Summary only (m_gm_map.c)."
            }
            Rprec => "Precision after R = num_rel documents (m_Rprec.c).",
            Bpref => {
                "Binary preference: for each relevant retrieved doc, 1 - min(nonrel above, R) / min(judged nonrel, R); / R (m_bpref.c)."
            }
            RecipRank => "1 / rank of the first relevant retrieved document (m_recip_rank.c).",
            IprecAtRecall => {
                "Interpolated precision (max precision at any rank at or below) at recall fractions; default .0,.1,...,1 (m_iprec_at_recall.c)."
            }
            P => {
                "Precision at document cutoffs, missing ranks count as non-relevant; default 5,10,15,20,30,100,200,500,1000 (m_P.c)."
            }
            Relstring => {
                "Relevance of the top N (default 10) docs as a string: digit, '>' above 9, '-' not judged, '.' in pool but unjudged. Per query only (m_relstring.c)."
            }
            Recall => {
                "Relevant retrieved in the top k / num_rel; default cutoffs as P (m_recall.c)."
            }
            InfAP => {
                "Inferred AP (Yilmaz & Aslam, CIKM 2006) for sampled pools; qrels rel -1 = pooled but unjudged (m_infap.c)."
            }
            GmBpref => {
                "Geometric mean over queries of bpref floored at 0.00001. Summary only (m_gm_bpref.c)."
            }
            RprecMult => "Precision at multiples of R; default 0.2,0.4,...,2.0 (m_Rprec_mult.c).",
            Utility => {
                "p1*relret + p2*nonrelret + p3*relnotret + p4*nonrelnotret (needs -N); default 1,-1,0,0 (m_utility.c)."
            }
            ElevenPtAvg => {
                "Mean of interpolated precision at the given recall points; default 0,.1,...,1 (m_11pt_avg.c)."
            }
            BinG => {
                "Binary G: sum over relevant retrieved of 1/log2(2 + nonrel before) / num_rel (m_binG.c)."
            }
            G => {
                "Normalized gain: gain / log2(2 + ideal_gain - results_gain) summed, / max ideal gain; gains level=gain (m_G.c)."
            }
            Dcg => {
                "Discounted cumulative gain sum gain/log2(rank+1) over the whole ranking; gains level=gain (m_ndcg.c)."
            }
            IdealDcg => "DCG of the ideal ranking (m_ndcg.c).",
            Ndcg => {
                "nDCG (Jarvelin & Kekalainen 2002) over the whole ranking, gain = relevance level unless level=gain params (m_ndcg.c)."
            }
            NdcgRel => "nDCG averaged over the relevant documents (m_ndcg_rel.c).",
            Rndcg => "nDCG averaged at the R-level boundaries of the ideal ranking (m_Rndcg.c).",
            NdcgCut => {
                "nDCG at cutoffs, gain = qrels relevance value; default cutoffs as P (m_ndcg_cut.c)."
            }
            MapCut => {
                "Average precision truncated at cutoffs, / num_rel; default cutoffs as P (m_map_cut.c)."
            }
            RelativeP => {
                "Relevant in the top k / min(k, num_rel); default cutoffs as P (m_rel_P.c)."
            }
            Success => "1 if a relevant doc is in the top k, else 0; default 1,5,10 (m_success.c).",
            SetP => "num_rel_ret / num_ret (m_set_P.c).",
            SetRelativeP => "num_rel_ret / min(num_ret, num_rel) (m_set_rel_P.c).",
            SetRecall => "num_rel_ret / num_rel (m_set_recall.c).",
            SetMap => "num_rel_ret^2 / (num_ret * num_rel) (m_set_map.c).",
            SetF => "(x+1) P R / (x P + R) over the retrieved set; default x = 1 (m_set_F.c).",
            NumNonrelJudgedRet => {
                "Judged non-relevant documents retrieved. Summary is the sum (m_num_nonrel_judged_ret.c)."
            }
            Rbp => {
                "Rank-biased precision (Moffat & Zobel 2008), (1-p) sum gain p^(rank-1), p = 0.9 unless p=..; gains scaled to [0,1] (m_rbp.c)."
            }
            RbpResid => {
                "RBP residual: the most RBP could rise if every unjudged retrieved doc had full gain (m_rbp_resid.c)."
            }
            Unj => {
                "Fraction of the top k documents not judged (not in qrels, or rel -1); default 5,10,20 (m_unjudged.c)."
            }
            RecipRankCut => {
                "routeval addition, not in trec_eval: 1 / rank of the first relevant document if it is in the top k, else 0 (MRR@k as MS MARCO, ranx mrr@k, ir-measures RR@k); equals trec_eval -M k -m recip_rank; default cutoffs as P."
            }
        }
    }
}

/// trec_eval's measure nicknames (`-m official`, `-m all_trec`, `-m set`), as in `measures.c`.
pub fn nickname(name: &str) -> Option<&'static [MeasureId]> {
    use MeasureId::*;
    const OFFICIAL: &[MeasureId] = &[
        Runid,
        NumQ,
        NumRet,
        NumRel,
        NumRelRet,
        Map,
        GmMap,
        Rprec,
        Bpref,
        RecipRank,
        IprecAtRecall,
        P,
    ];
    const ALL_TREC: &[MeasureId] = &[
        Runid,
        NumQ,
        NumRet,
        NumRel,
        NumRelRet,
        Map,
        GmMap,
        Rprec,
        Bpref,
        RecipRank,
        IprecAtRecall,
        P,
        Relstring,
        Recall,
        Unj,
        Rbp,
        RbpResid,
        InfAP,
        GmBpref,
        Utility,
        ElevenPtAvg,
        Ndcg,
        RelativeP,
        RprecMult,
        Success,
        MapCut,
        NdcgCut,
        NdcgRel,
        Rndcg,
        BinG,
        G,
        SetP,
        SetRecall,
        SetRelativeP,
        SetMap,
        SetF,
        NumNonrelJudgedRet,
    ];
    const SET: &[MeasureId] = &[
        Runid,
        NumQ,
        NumRet,
        NumRel,
        NumRelRet,
        Utility,
        SetP,
        SetRecall,
        SetRelativeP,
        SetMap,
        SetF,
    ];
    match name {
        "official" => Some(OFFICIAL),
        "all_trec" => Some(ALL_TREC),
        "set" => Some(SET),
        _ => None,
    }
}

/// A measure's resolved parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Params {
    /// No parameters.
    None,
    /// Integer cutoffs, ascending.
    Cutoffs(Vec<i64>),
    /// Fractional cutoffs, ascending.
    Fractions(Vec<f64>),
    /// Numbers in the order given.
    Numbers(Vec<f64>),
    /// `name=value` pairs in the order given.
    Pairs(Vec<(String, f64)>),
}

/// One requested measure with its parameters and the names of its printed values.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    /// Which measure.
    pub id: MeasureId,
    /// Its parameters (defaults unless given with `-m name.params`).
    pub params: Params,
    /// Printed names of its values (`P_5`, `P_10`, ...; empty for `runid` and `relstring`'s
    /// slot-less value, see [`Measure::text_name`]).
    pub names: Vec<String>,
    /// Index of its first value in a query's value vector.
    pub offset: usize,
    /// The printed name of a text-valued measure (`runid`, `relstring[_N]`).
    pub text_name: Option<String>,
}

impl Measure {
    /// Number of numeric value slots.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the measure has no numeric value slot (`runid`, `relstring`).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The measures to compute, in print order, with parameters resolved as trec_eval resolves them.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasureSet {
    measures: Vec<Measure>,
    n_values: usize,
}

impl MeasureSet {
    /// Resolve `-m` arguments as trec_eval does: each is a measure name or nickname, optionally
    /// followed by `.params`; the first parameter list given for a measure is used; measures are
    /// computed and printed in table order whatever the argument order. No arguments means
    /// `official`. Names people type (`P_10`, `P@10`, `nDCG@10`, `MRR@10`, ...) are accepted
    /// too, as [`canonical_measure`] maps them; cutoffs given in those forms add up
    /// (`-m P@5 -m P@10` = `-m P.5,10`) unless a trec_eval-syntax list is given, which wins.
    ///
    /// Errors ([`Error::Invalid`]): unknown measure (with a "did you mean" suggestion when a
    /// known name is close), empty parameter list, cutoffs not positive
    /// or duplicated, non-numeric parameters, malformed `level=gain` pairs, `utility` without
    /// exactly 4 coefficients, `11pt_avg` without values.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<MeasureSet, Error> {
        let mut marked = [false; MeasureId::ALL.len()];
        // (measure, parameters, given in a typed form such as `P@10` rather than `P.10`)
        let mut params: Vec<(String, String, bool)> = Vec::new();
        let default = ["official"];
        let args: Vec<&str> = if args.is_empty() {
            default.to_vec()
        } else {
            args.iter().map(|a| a.as_ref()).collect()
        };
        for typed in args {
            let canonical = canonical_measure(typed)?;
            let from_alias = matches!(canonical, Cow::Owned(_));
            let arg: &str = &canonical;
            let (name, param) = match arg.split_once('.') {
                Some((n, p)) => {
                    if p.is_empty() {
                        return Err(Error::Invalid(format!(
                            "improper measure in parameter '{n}': empty parameter list"
                        )));
                    }
                    (n, Some(p))
                }
                None => (arg, None),
            };
            if let Some(p) = param {
                params.push((name.to_string(), p.to_string(), from_alias));
            }
            if let Some(list) = nickname(name) {
                for id in list {
                    marked[index_of(*id)] = true;
                }
            } else if let Some(id) = MeasureId::from_name(name) {
                marked[index_of(id)] = true;
            } else if matches!(name, "all_prefs" | "prefs" | "qrels_jg") {
                return Err(Error::Invalid(format!(
                    "measure set '{name}' needs trec_eval's prefs/qrels_jg formats, which routeval does not support"
                )));
            } else {
                return Err(Error::Invalid(format!("illegal measure '{typed}'")));
            }
        }
        let mut measures = Vec::new();
        let mut offset = 0;
        for (i, id) in MeasureId::ALL.into_iter().enumerate() {
            if !marked[i] {
                continue;
            }
            let given = given_params(&params, id.name());
            let m = resolve(id, given.as_deref(), offset)?;
            offset += m.len();
            measures.push(m);
        }
        Ok(MeasureSet {
            measures,
            n_values: offset,
        })
    }

    /// trec_eval's default set (`official`).
    pub fn official() -> MeasureSet {
        MeasureSet::parse(&["official"]).expect("official is valid")
    }

    /// Every measure of `all_trec` with default parameters.
    pub fn all_trec() -> MeasureSet {
        MeasureSet::parse(&["all_trec"]).expect("all_trec is valid")
    }

    /// The measures, in print order.
    pub fn measures(&self) -> &[Measure] {
        &self.measures
    }

    /// Total numeric value slots per query.
    pub fn n_values(&self) -> usize {
        self.n_values
    }

    /// Whether `id` was requested.
    pub fn contains(&self, id: MeasureId) -> bool {
        self.measures.iter().any(|m| m.id == id)
    }
}

/// The parameter list to use for measure `name`: the first given in trec_eval syntax
/// (`P.5`), else the union of those given in typed forms (`P@5`, `P_10`), else none.
fn given_params(params: &[(String, String, bool)], name: &str) -> Option<String> {
    if let Some((_, p, _)) = params.iter().find(|(n, _, alias)| n == name && !alias) {
        return Some(p.clone());
    }
    let mut values: Vec<&str> = Vec::new();
    for (_, p, _) in params.iter().filter(|(n, _, _)| n == name) {
        for v in p.split(',').map(str::trim) {
            if !values.contains(&v) {
                values.push(v);
            }
        }
    }
    (!values.is_empty()).then(|| values.join(","))
}

/// Names people type for measures and what `-m` maps them to, for `NAME@k` (a cut-off `k`,
/// or a list `5,10`): (typed name, lower case; trec_eval measure it becomes; where the name
/// comes from). Any measure with document cutoffs also works under its own name
/// (`ndcg_cut@10`, `success@1`, `recip_rank_cut@10`), case-insensitively.
pub const CUTOFF_ALIASES: &[(&str, &str, &str)] = &[
    ("p", "P", "P@k in papers, ir-measures"),
    ("precision", "P", "ranx precision@k"),
    ("r", "recall", "ir-measures R@k"),
    (
        "ndcg",
        "ndcg_cut",
        "nDCG@k in papers, ranx ndcg@k, ir-measures nDCG@k",
    ),
    ("map", "map_cut", "MAP@k in papers, ranx map@k"),
    ("ap", "map_cut", "ir-measures AP@k"),
    ("mrr", "recip_rank_cut", "MS MARCO MRR@10, ranx mrr@k"),
    ("rr", "recip_rank_cut", "ir-measures RR@k"),
    (
        "recip_rank",
        "recip_rank_cut",
        "trec_eval's recip_rank, cut",
    ),
    ("hit_rate", "success", "ranx hit_rate@k"),
    ("hits", "success", "hits@k"),
];

/// Names people type for measures without a cut-off: (typed name, lower case; trec_eval
/// measure; where the name comes from). trec_eval names themselves are matched
/// case-insensitively too (`MAP` = `map`, `nDCG` = `ndcg`, `rprec` = `Rprec`).
pub const PLAIN_ALIASES: &[(&str, &str, &str)] = &[
    ("mrr", "recip_rank", "MRR without a cut-off"),
    ("rr", "recip_rank", "ir-measures RR"),
    ("ap", "map", "ir-measures AP"),
    ("r-prec", "Rprec", "R-precision"),
    ("r_prec", "Rprec", "R-precision"),
];

/// The measure whose name equals `name` ignoring ASCII case (unique in trec_eval's table).
fn measure_ignoring_case(name: &str) -> Option<MeasureId> {
    MeasureId::ALL
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(name))
}

/// Map a `-m` argument as people type it to trec_eval's syntax (`name[.params]`); a valid
/// trec_eval argument comes back unchanged (borrowed), a mapped one owned.
///
/// Accepted besides trec_eval's own syntax:
/// * the printed form of one value, `NAME_k` (`P_10` = `P.10`, `ndcg_cut_20`,
///   `iprec_at_recall_0.10`), for measures with cutoffs or recall fractions;
/// * `NAME@k` and `NAME@k1,k2` with a name of [`CUTOFF_ALIASES`] (`P@10`, `nDCG@10` =
///   `ndcg_cut.10`, `MRR@10` = `recip_rank_cut.10`, `map@100` = `map_cut.100`) or of any
///   measure with document cutoffs (`ndcg_cut@10`, `success@1`), case-insensitively;
/// * trec_eval names in any case (`MAP`, `NDCG.1=0,2=3`, `rprec`) and [`PLAIN_ALIASES`]
///   (`MRR` = `recip_rank`).
///
/// # Errors
/// [`Error::Invalid`] `illegal measure 'X'`, with `(did you mean 'Y'?)` when a known name
/// is close (Jaro-Winkler similarity, as clap suggests flags), or saying that the measure
/// takes no cut-off for `NAME@k` on a measure without document cutoffs.
pub fn canonical_measure(arg: &str) -> Result<Cow<'_, str>, Error> {
    let name = arg.split_once('.').map_or(arg, |(n, _)| n);
    if nickname(name).is_some()
        || MeasureId::from_name(name).is_some()
        || matches!(name, "all_prefs" | "prefs" | "qrels_jg")
    {
        return Ok(Cow::Borrowed(arg));
    }
    if let Some((base, cuts)) = arg.split_once('@') {
        let lower = base.to_ascii_lowercase();
        let target = CUTOFF_ALIASES
            .iter()
            .find(|(typed, _, _)| *typed == lower)
            .map(|(_, trec, _)| *trec)
            .or_else(|| {
                measure_ignoring_case(base)
                    .filter(|m| matches!(m.param_kind(), ParamKind::Cutoffs(_)))
                    .map(MeasureId::name)
            });
        if let Some(t) = target {
            if cuts.is_empty() {
                return Err(Error::Invalid(format!(
                    "illegal measure '{arg}': give the cut-off after '@' (e.g. '{base}@10')"
                )));
            }
            return Ok(Cow::Owned(format!("{t}.{cuts}")));
        }
        if let Some(m) = measure_ignoring_case(base).or_else(|| plain_alias(&lower)) {
            return Err(Error::Invalid(format!(
                "illegal measure '{arg}': '{}' has no document cut-off in trec_eval (-M {cuts} \
                 cuts every measure's ranking instead); measures taking '@k': {}",
                m.name(),
                cutoff_measure_names().join(", ")
            )));
        }
        return Err(unknown_measure(arg, base, Some(cuts)));
    }
    // The printed form of one value: NAME_k.
    if let Some((base, num)) = arg.rsplit_once('_')
        && let Some(m) = MeasureId::from_name(base).or_else(|| measure_ignoring_case(base))
    {
        let ok = match m.param_kind() {
            ParamKind::Cutoffs(_) => num.parse::<i64>().is_ok(),
            ParamKind::Fractions(_) => num.parse::<f64>().is_ok_and(f64::is_finite),
            _ => false,
        };
        if ok {
            return Ok(Cow::Owned(format!("{}.{num}", m.name())));
        }
    }
    let rest = arg.split_once('.').map(|(_, p)| p);
    let with_rest = |n: &str| match rest {
        Some(p) => format!("{n}.{p}"),
        None => n.to_string(),
    };
    if let Some(m) = measure_ignoring_case(name) {
        return Ok(Cow::Owned(with_rest(m.name())));
    }
    if let Some(m) = plain_alias(&name.to_ascii_lowercase()) {
        return Ok(Cow::Owned(with_rest(m.name())));
    }
    Err(unknown_measure(arg, name, None))
}

fn plain_alias(lower: &str) -> Option<MeasureId> {
    PLAIN_ALIASES
        .iter()
        .find(|(typed, _, _)| *typed == lower)
        .and_then(|(_, trec, _)| MeasureId::from_name(trec))
}

/// trec_eval names of the measures that take document cutoffs (`@k` applies to them).
fn cutoff_measure_names() -> Vec<&'static str> {
    MeasureId::ALL
        .into_iter()
        .filter(|m| matches!(m.param_kind(), ParamKind::Cutoffs(_)))
        .map(MeasureId::name)
        .collect()
}

/// `illegal measure 'ARG'`, with the closest known name when one is close enough.
fn unknown_measure(arg: &str, name: &str, cuts: Option<&str>) -> Error {
    let lower = name.to_ascii_lowercase();
    let candidates: Vec<&str> = match cuts {
        Some(_) => CUTOFF_ALIASES
            .iter()
            .map(|(typed, _, _)| *typed)
            .chain(cutoff_measure_names())
            .collect(),
        None => MeasureId::ALL
            .into_iter()
            .map(MeasureId::name)
            .chain(["official", "all_trec", "set"])
            .chain(PLAIN_ALIASES.iter().map(|(typed, _, _)| *typed))
            .collect(),
    };
    let mut best: Option<(f64, &str)> = None;
    for c in candidates {
        let score = strsim::jaro_winkler(&lower, &c.to_ascii_lowercase());
        if score > 0.8 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, c));
        }
    }
    match (best, cuts) {
        (Some((_, s)), Some(c)) => {
            Error::Invalid(format!("illegal measure '{arg}' (did you mean '{s}@{c}'?)"))
        }
        (Some((_, s)), None) => {
            Error::Invalid(format!("illegal measure '{arg}' (did you mean '{s}'?)"))
        }
        (None, _) => Error::Invalid(format!(
            "illegal measure '{arg}' (see `routeval trec --help` for the measure list)"
        )),
    }
}

fn index_of(id: MeasureId) -> usize {
    MeasureId::ALL
        .iter()
        .position(|m| *m == id)
        .expect("every id is in ALL")
}

/// Parse a number as C's `atof` would for a well-formed number; garbage is an error here.
fn parse_num(s: &str, what: &str) -> Result<f64, Error> {
    let t = s.trim();
    t.parse::<f64>()
        .ok()
        .filter(|v| !v.is_nan())
        .ok_or_else(|| Error::Invalid(format!("non-numeric parameter '{s}' in {what}")))
}

fn resolve(id: MeasureId, given: Option<&str>, offset: usize) -> Result<Measure, Error> {
    let name = id.name();
    let what = format!("measure '{name}'");
    let (params, names, text_name) = match id.param_kind() {
        ParamKind::None => {
            let names = if matches!(id, MeasureId::Runid) {
                vec![]
            } else {
                vec![name.to_string()]
            };
            let text = matches!(id, MeasureId::Runid).then(|| name.to_string());
            (Params::None, names, text)
        }
        ParamKind::Cutoffs(def) => {
            let mut cuts: Vec<i64> = match given {
                Some(p) => p
                    .split(',')
                    .map(|c| {
                        c.trim().parse::<i64>().map_err(|_| {
                            Error::Invalid(format!("non-integer cutoff '{c}' in {what}"))
                        })
                    })
                    .collect::<Result<_, _>>()?,
                None => def.to_vec(),
            };
            cuts.sort_unstable();
            if cuts[0] <= 0 {
                return Err(Error::Invalid(format!(
                    "cutoffs of {what} must be positive (got {})",
                    cuts[0]
                )));
            }
            if cuts.windows(2).any(|w| w[0] == w[1]) {
                return Err(Error::Invalid(format!("duplicate cutoffs in {what}")));
            }
            let names = cuts.iter().map(|c| format!("{name}_{c}")).collect();
            (Params::Cutoffs(cuts), names, None)
        }
        ParamKind::Fractions(def) => {
            let mut cuts: Vec<f64> = match given {
                Some(p) => p
                    .split(',')
                    .map(|c| parse_num(c, &what))
                    .collect::<Result<_, _>>()?,
                None => def.to_vec(),
            };
            cuts.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
            if cuts.windows(2).any(|w| w[0] == w[1]) {
                return Err(Error::Invalid(format!("duplicate cutoffs in {what}")));
            }
            // trec_eval: snprintf(buf, strlen(name)+10, "%s_%3.2f") truncates long values.
            let names = cuts
                .iter()
                .map(|c| {
                    let mut s = format!("{name}_{:3.2}", c);
                    s.truncate(name.len() + 9);
                    s
                })
                .collect();
            (Params::Fractions(cuts), names, None)
        }
        ParamKind::Numbers(def) => {
            let values: Vec<f64> = match given {
                Some(p) => p
                    .split(',')
                    .map(|c| parse_num(c, &what))
                    .collect::<Result<_, _>>()?,
                None => def.to_vec(),
            };
            if id == MeasureId::Utility && values.len() != 4 {
                return Err(Error::Invalid(format!(
                    "measure 'utility' needs exactly 4 coefficients (got {})",
                    values.len()
                )));
            }
            let full = match given {
                Some(p) => format!("{name}_{p}"),
                None => name.to_string(),
            };
            if id == MeasureId::Relstring {
                (Params::Numbers(values), vec![], Some(full))
            } else {
                (Params::Numbers(values), vec![full], None)
            }
        }
        ParamKind::Pairs => {
            let pairs = match given {
                Some(p) => parse_pairs(p, &what)?,
                None => vec![],
            };
            let full = match given {
                Some(p) => format!("{name}_{p}"),
                None => name.to_string(),
            };
            (Params::Pairs(pairs), vec![full], None)
        }
    };
    Ok(Measure {
        id,
        params,
        names,
        offset,
        text_name,
    })
}

fn parse_pairs(p: &str, what: &str) -> Result<Vec<(String, f64)>, Error> {
    let mut out = Vec::new();
    for item in p.split(',') {
        let Some((k, v)) = item.split_once('=') else {
            return Err(Error::Invalid(format!(
                "malformed pair parameters in '{p}' for {what} (want level=gain,...)"
            )));
        };
        if v.contains('=') {
            return Err(Error::Invalid(format!(
                "malformed pair parameters in '{p}' for {what}"
            )));
        }
        out.push((k.to_string(), parse_num(v, what)?));
    }
    Ok(out)
}

/// A trec_eval release whose definitions an evaluation follows where releases differ.
///
/// The differences routeval knows of (checked against pytrec-eval-terrier 0.5.11, which
/// builds trec_eval 9.0.8, on random collections in `crates/python/tests`): `iprec_at_recall`
/// and `11pt_avg` turn a recall fraction `f` into a count of relevant documents as
/// `floor(f * num_rel + 0.5)` in 10.0-rc3 and `floor(f * num_rel + 0.9)` in 9.0.8; and 9.0.8's
/// `all_trec` has no `unj`, `rbp`, `rbp_resid` (a nickname matter, handled by the caller).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TrecEvalVersion {
    /// trec_eval 10.0-rc3 (the `routeval trec` default).
    #[default]
    V10,
    /// trec_eval 9.0.8, as pytrec_eval / pytrec-eval-terrier build it.
    V9_0_8,
}

impl TrecEvalVersion {
    /// The release's name as users give it (`10.0`, `9.0.8`).
    pub fn name(self) -> &'static str {
        match self {
            TrecEvalVersion::V10 => "10.0",
            TrecEvalVersion::V9_0_8 => "9.0.8",
        }
    }

    /// The release named `10.0` (also `10`, `10.0-rc3`) or `9.0.8` (also `9`).
    pub fn from_name(s: &str) -> Option<TrecEvalVersion> {
        match s {
            "10.0" | "10" | "10.0-rc3" => Some(TrecEvalVersion::V10),
            "9.0.8" | "9" => Some(TrecEvalVersion::V9_0_8),
            _ => None,
        }
    }

    /// Whether the release has the measure (9.0.8 lacks `unj`, `rbp` and `rbp_resid`).
    pub fn has_measure(self, id: MeasureId) -> bool {
        use MeasureId::{Rbp, RbpResid, Unj};
        self == TrecEvalVersion::V10 || !matches!(id, Unj | Rbp | RbpResid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(set: &MeasureSet) -> Vec<String> {
        set.measures()
            .iter()
            .flat_map(|m| m.text_name.iter().cloned().chain(m.names.iter().cloned()))
            .collect()
    }

    #[test]
    fn params_sort_and_name_values() {
        let s = MeasureSet::parse(&["P.10,5", "iprec_at_recall.0.5,.1", "ndcg.1=3.5"]).unwrap();
        assert_eq!(
            names(&s),
            [
                "iprec_at_recall_0.10",
                "iprec_at_recall_0.50",
                "P_5",
                "P_10",
                "ndcg_1=3.5"
            ]
        );
    }

    #[test]
    fn first_params_win_and_nicknames_expand() {
        let s = MeasureSet::parse(&["P.5", "P.10", "official"]).unwrap();
        assert!(names(&s).contains(&"P_5".to_string()));
        assert!(!names(&s).contains(&"P_10".to_string()));
        assert_eq!(names(&s)[0], "runid");
    }

    #[test]
    fn bad_params_are_errors() {
        for bad in [
            "P.0",
            "P.5,5",
            "P.x",
            "nosuch",
            "utility.1,2",
            "P.",
            "ndcg.1=2=3",
        ] {
            assert!(MeasureSet::parse(&[bad]).is_err(), "{bad}");
        }
    }

    #[test]
    fn typed_names_map_to_trec_eval_syntax() {
        for (typed, want) in [
            ("P_10", "P.10"),
            ("P@10", "P.10"),
            ("p@5,10", "P.5,10"),
            ("precision@3", "P.3"),
            ("ndcg_cut@10", "ndcg_cut.10"),
            ("nDCG@10", "ndcg_cut.10"),
            ("ndcg@10", "ndcg_cut.10"),
            ("NDCG_CUT_20", "ndcg_cut.20"),
            ("MRR@10", "recip_rank_cut.10"),
            ("RR@10", "recip_rank_cut.10"),
            ("recall@100", "recall.100"),
            ("R@100", "recall.100"),
            ("map@100", "map_cut.100"),
            ("AP@10", "map_cut.10"),
            ("map_cut_100", "map_cut.100"),
            ("hit_rate@5", "success.5"),
            ("Success@1", "success.1"),
            ("iprec_at_recall_0.10", "iprec_at_recall.0.10"),
            ("Rprec_mult_0.20", "Rprec_mult.0.20"),
            ("MAP", "map"),
            ("nDCG", "ndcg"),
            ("NDCG.1=0,2=3", "ndcg.1=0,2=3"),
            ("rprec", "Rprec"),
            ("MRR", "recip_rank"),
        ] {
            let got = canonical_measure(typed).unwrap_or_else(|e| panic!("{typed}: {e}"));
            assert_eq!(got, want, "{typed}");
            assert!(matches!(got, Cow::Owned(_)), "{typed} is a mapping");
        }
        // trec_eval's own syntax comes back untouched.
        for exact in ["P.10", "ndcg_cut", "official", "recip_rank", "ndcg.1=0,2=3"] {
            assert!(matches!(canonical_measure(exact), Ok(Cow::Borrowed(a)) if a == exact));
        }
    }

    #[test]
    fn typed_names_compute_the_same_values_as_trec_syntax() {
        assert_eq!(
            names(&MeasureSet::parse(&["P_10", "nDCG@10", "map@100"]).unwrap()),
            names(&MeasureSet::parse(&["P.10", "ndcg_cut.10", "map_cut.100"]).unwrap())
        );
        // Typed cut-offs add up; a trec_eval-syntax list still wins (first one).
        assert_eq!(
            names(&MeasureSet::parse(&["P@5", "P@10", "P_5"]).unwrap()),
            ["P_5", "P_10"]
        );
        assert_eq!(
            names(&MeasureSet::parse(&["P@5", "P.20", "P@10"]).unwrap()),
            ["P_20"]
        );
        assert_eq!(
            names(&MeasureSet::parse(&["MRR@10"]).unwrap()),
            ["recip_rank_cut_10"]
        );
    }

    #[test]
    fn unknown_names_suggest_the_closest() {
        let msg = |a: &str| MeasureSet::parse(&[a]).unwrap_err().to_string();
        assert!(
            msg("ndcgg").contains("did you mean 'ndcg'?"),
            "{}",
            msg("ndcgg")
        );
        assert!(msg("ndcgg@10").contains("did you mean 'ndcg@10'?"));
        assert!(msg("recal.5").contains("did you mean 'recall'?"));
        assert!(msg("bpref@10").contains("'bpref' has no document cut-off"));
        assert!(msg("P@").contains("give the cut-off"));
        assert!(msg("zzzzzz").contains("illegal measure 'zzzzzz' (see"));
        // The printed form needs a number of the measure's kind.
        assert!(MeasureSet::parse(&["P_x"]).is_err());
        assert!(MeasureSet::parse(&["map_5"]).is_err());
    }

    #[test]
    fn recip_rank_cut_is_last_and_in_no_nickname() {
        assert_eq!(MeasureId::ALL.last(), Some(&MeasureId::RecipRankCut));
        for n in ["official", "all_trec", "set"] {
            assert!(!nickname(n).unwrap().contains(&MeasureId::RecipRankCut));
        }
    }

    #[test]
    fn fraction_names_truncate_like_snprintf() {
        let s = MeasureSet::parse(&["Rprec_mult.123456"]).unwrap();
        assert_eq!(s.measures()[0].names[0], "Rprec_mult_123456.0");
    }
}
