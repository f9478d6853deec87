//! The measure registry: trec_eval's measure table, its nicknames, and `-m name.params` parsing.
//!
//! Source: trec_eval 10.0-rc3 `measures.c` (table order = print order), `meas_init.c`
//! (parameter parsing and value naming) and each `m_<name>.c` (defaults).

use routeval_core::Error;

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
    pub const ALL: [MeasureId; 39] = [
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
            P | Recall | NdcgCut | MapCut | RelativeP => ParamKind::Cutoffs(CUT_STD),
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
            NumRel => "Relevant judged documents (rel >= -l). Summary is the sum (m_num_rel.c).",
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
    /// `official`.
    ///
    /// Errors ([`Error::Invalid`]): unknown measure, empty parameter list, cutoffs not positive
    /// or duplicated, non-numeric parameters, malformed `level=gain` pairs, `utility` without
    /// exactly 4 coefficients, `11pt_avg` without values.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<MeasureSet, Error> {
        let mut marked = [false; MeasureId::ALL.len()];
        let mut params: Vec<(String, String)> = Vec::new();
        let default = ["official"];
        let args: Vec<&str> = if args.is_empty() {
            default.to_vec()
        } else {
            args.iter().map(|a| a.as_ref()).collect()
        };
        for arg in args {
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
                params.push((name.to_string(), p.to_string()));
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
                return Err(Error::Invalid(format!("illegal measure '{arg}'")));
            }
        }
        let mut measures = Vec::new();
        let mut offset = 0;
        for (i, id) in MeasureId::ALL.into_iter().enumerate() {
            if !marked[i] {
                continue;
            }
            let given = params
                .iter()
                .find(|(n, _)| n == id.name())
                .map(|(_, p)| p.as_str());
            let m = resolve(id, given, offset)?;
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
    fn fraction_names_truncate_like_snprintf() {
        let s = MeasureSet::parse(&["Rprec_mult.123456"]).unwrap();
        assert_eq!(s.measures()[0].names[0], "Rprec_mult_123456.0");
    }
}
