"""The ``routeval compare`` / ``routeval frontier`` / ``routeval crb sweep`` invocations the Python
bindings are checked against, on the shipped examples (``examples/data``), each with the
equivalent Python call.

``python cli_cases.py ROUTEVAL_BINARY`` rewrites ``fixtures/cli/<name>.json`` with the CLI's
``--json`` output (run from any directory); ``test_compare_frontier.py`` compares the bindings
with those files, and with the CLI itself when a built ``routeval`` binary is found.
"""

import os
import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples" / "data"
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "cli"
RUNS = ["compare/base.run", "compare/better.run", "compare/noisy.run"]
CRB_BANK = "crb/bank.jsonl"
CRB_PROBS = "crb/tier_probs.jsonl"
CRB_SWEEP = ["crb", "sweep", "--bank", CRB_BANK, "--scores", CRB_PROBS]

#: name -> (CLI arguments after `routeval`, Python call (module name, function, args, kwargs)).
#: The compare cases without their own seed pass `--seed 0` / `seed=0`, compare's old default
#: (now 42, as everywhere): the stored outputs were made with it.
CASES = {
    "compare_default": (
        ["compare", "compare/qrels", *RUNS, "--seed", "0", "--json"],
        ("compare", "compare_runs", ["compare/qrels", RUNS[0], RUNS[1:]], {"seed": 0}),
    ),
    "compare_wilcoxon_all_pairs": (
        ["compare", "compare/qrels", *RUNS, "--test", "wilcoxon", "--all-pairs", "-m", "map", "-m", "P.5,10", "--seed", "0",
         "--json"],
        ("compare", "compare_runs", ["compare/qrels", RUNS[0], RUNS[1:]],
         {"measures": ["map", "P.5,10"], "test": "wilcoxon", "all_pairs": True, "seed": 0}),
    ),
    "compare_fisher_no_ci": (
        ["compare", "compare/qrels", RUNS[0], RUNS[2], "--test", "fisher", "--no-ci", "--correction",
         "bonferroni", "--seed", "7", "--json"],
        ("compare", "compare_runs", ["compare/qrels", RUNS[0], [RUNS[2]]],
         {"test": "fisher", "ci": None, "correction": "bonferroni", "seed": 7}),
    ),
    "compare_bootstrap_options": (
        ["compare", "compare/qrels", *RUNS, "--test", "bootstrap", "--iterations", "2000", "--bootstrap", "300",
         "--ci", "0.9", "--alpha", "0.1", "-l", "2", "-M", "5", "-m", "ndcg_cut.5", "-m", "recip_rank", "--seed", "0", "--json"],
        ("compare", "compare_runs", ["compare/qrels", RUNS[0], RUNS[1:]],
         {"test": "bootstrap", "iterations": 2000, "bootstrap": 300, "ci": 0.9, "alpha": 0.1,
          "relevance_level": 2, "max_docs_per_topic": 5, "measures": ["ndcg_cut.5", "recip_rank"],
          "seed": 0}),
    ),
    # Many systems: Tukey's HSD with the ANOVA and risk blocks; the randomized Tukey HSD.
    "compare_tukey_anova_risk": (
        ["compare", "compare/qrels", *RUNS, "--test", "tukey", "--anova", "--risk", "1", "--risk", "5",
         "-m", "map", "-m", "P.10", "--json"],
        ("compare", "compare_runs", ["compare/qrels", RUNS[0], RUNS[1:]],
         {"test": "tukey", "anova": True, "risk": [1, 5], "measures": ["map", "P.10"]}),
    ),
    "compare_randomized_tukey": (
        ["compare", "compare/qrels", *RUNS, "--test", "randomized-tukey", "--iterations", "3000", "--seed", "4",
         "--no-ci", "-m", "map", "--json"],
        ("compare", "compare_runs", ["compare/qrels", RUNS[0], RUNS[1:]],
         {"test": "randomized-tukey", "iterations": 3000, "seed": 4, "ci": None, "measures": ["map"]}),
    ),
    "compare_ties": (
        ["compare", "trec/qrels.txt", "trec/run.txt", "trec/run-ties.txt", "--ties", "--no-ci",
         "-m", "recip_rank", "-m", "P.5", "--json"],
        ("compare", "compare_runs", ["trec/qrels.txt", "trec/run.txt", ["trec/run-ties.txt"]],
         {"ties": True, "ci": None, "measures": ["recip_rank", "P.5"]}),
    ),
    "frontier_hull": (
        ["frontier", "frontier/points.jsonl", "--json"],
        ("frontier", "frontier", ["frontier/points.jsonl"], {}),
    ),
    "frontier_routerbench": (
        ["frontier", "frontier/points.jsonl", "--method", "routerbench", "--json"],
        ("frontier", "frontier", ["frontier/points.jsonl"], {"method": "routerbench"}),
    ),
    "frontier_strong_share": (
        ["frontier", "frontier/strong_share.jsonl", "--strong-share", "--weak-quality", "0.5",
         "--strong-quality", "0.8", "--json"],
        ("frontier", "strong_share", ["frontier/strong_share.jsonl", 0.5, 0.8], {}),
    ),
    # routeval crb sweep on the shipped 8-row bank and a router's tier probabilities.
    "crb_sweep_readme": (
        CRB_SWEEP + ["--tokenizer-setup", "all_cl100k", "--thresholds", "0:1:0.1", "--target-pass-rate", "75",
                     "--pass-rate", "case", "--json"],
        ("crb", "sweep", [CRB_PROBS], {"bank": CRB_BANK, "tokenizer_setup": "all_cl100k",
                                       "thresholds": "0:1:0.1", "target_pass_rate": 75, "pass_rate": "case"}),
    ),
    "crb_sweep_default_grid_budget": (
        CRB_SWEEP + ["--tokenizer-setup", "all_cl100k", "--max-cost-usd", "0.006", "--json"],
        ("crb", "sweep", [CRB_PROBS], {"bank": CRB_BANK, "tokenizer_setup": "all_cl100k",
                                       "max_cost_usd": 0.006}),
    ),
    "crb_sweep_calibrate_on": (
        CRB_SWEEP + ["--tokenizer-setup", "all_cl100k", "--thresholds", "0,0.25,0.5,0.75,0.9,1",
                     "--target-pass-rate", "75", "--pass-rate", "case", "--calibrate-on",
                     '{"benchmark": "swebench"}', "--json"],
        ("crb", "sweep", [CRB_PROBS], {"bank": CRB_BANK, "tokenizer_setup": "all_cl100k",
                                       "thresholds": [0, 0.25, 0.5, 0.75, 0.9, 1], "target_pass_rate": 75,
                                       "pass_rate": "case", "calibrate_on": {"benchmark": "swebench"}}),
    ),
    "crb_sweep_calibrate_fraction": (
        CRB_SWEEP + ["--tokenizer-setup", "all_cl100k", "--calibrate-fraction", "0.5", "--seed", "7",
                     "--target-pass-rate", "30", "--json"],
        ("crb", "sweep", [CRB_PROBS], {"bank": CRB_BANK, "tokenizer_setup": "all_cl100k",
                                       "calibrate_fraction": 0.5, "seed": 7, "target_pass_rate": 30}),
    ),
    "crb_sweep_subselect_unreachable_target": (
        CRB_SWEEP + ["--tokenizer-setup", "all_cl100k", "--n", "6", "--manifest", "crb/manifest.json", "--seed", "3",
                     "--benchmark", "swebench", "--benchmark", "mtrag", "--where", '{"step_index": {"lte": 3}}',
                     "--target-pass-rate", "101", "--json"],
        ("crb", "sweep", [CRB_PROBS], {"bank": CRB_BANK, "tokenizer_setup": "all_cl100k", "n": 6,
                                       "manifest": "crb/manifest.json", "seed": 3,
                                       "benchmark": ["swebench", "mtrag"], "where": {"step_index": {"lte": 3}},
                                       "target_pass_rate": 101}),
    ),
}


def run_cli(binary, args):
    """The CLI's stdout for ``args``, run in ``examples/data`` (paths as the cases give them)."""
    out = subprocess.run([binary, *args], cwd=EXAMPLES, capture_output=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"routeval {' '.join(args)} exited {out.returncode}: {out.stderr.decode()}")
    return out.stdout.decode("utf-8")


def find_cli():
    """A built ``routeval`` binary: ``$ROUTEVAL_BIN``, ``$CARGO_TARGET_DIR/{debug,release}``,
    the checkout's ``target/{debug,release}``, or ``routeval`` on the PATH; ``None`` if none."""
    import shutil

    cands = []
    if os.environ.get("ROUTEVAL_BIN"):
        cands.append(pathlib.Path(os.environ["ROUTEVAL_BIN"]))
    roots = [pathlib.Path(os.environ["CARGO_TARGET_DIR"])] if os.environ.get("CARGO_TARGET_DIR") else []
    roots.append(EXAMPLES.parents[1] / "target")
    for r in roots:
        cands += [r / "debug" / "routeval", r / "release" / "routeval"]
    for c in cands:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    return shutil.which("routeval")


if __name__ == "__main__":
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, (args, _) in CASES.items():
        (FIXTURES / f"{name}.json").write_text(run_cli(sys.argv[1], args), encoding="utf-8")
        print("wrote", name)
