#!/usr/bin/env python3
"""Run CommonRouterBench's own `run_question_bank_eval` (gold predictor) on a bank, offline.

usage: ROUTEVAL_SHARED=../shared python3 benches/crb_reference.py REF_DIR BANK.jsonl OUT.json

REF_DIR is a fetched copy of CommonstackAI/LLMRouterBench at df000711a56b, kept outside this
repository and never committed (issue 26). Needs `pip install tiktoken tokenizers`. Nothing is
downloaded: the two Hugging Face tokenizers that the reference loads with `from_pretrained` are
read from `$ROUTEVAL_SHARED/thirdparty/tokenizers/*/tokenizer.json`, and tiktoken's cl100k_base
from a cache directory seeded with `$ROUTEVAL_SHARED/thirdparty/tokenizers/cl100k_base`.
Time it with `/usr/bin/time -f '%e %U %S %M'` side by side with `routeval crb eval --bank BANK
--predictor gold --tokenizers $ROUTEVAL_SHARED/thirdparty/tokenizers --json -o OUT`; the two
summaries agree on every key but `shard` (the path) and routeval's own `routeval_tokenizers`.
"""
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

# tiktoken's cache file name for cl100k_base: the SHA-1 of its download URL.
CL100K_CACHE_NAME = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"


def run_reference(ref_dir: Path, tok: Path, bank: Path) -> dict:
    """The reference's summary of BANK with the gold predictor, its tokenizers read from TOK."""
    import tokenizers

    local = {
        "MiniMaxAI/MiniMax-Text-01": tok / "minimax-text-01" / "tokenizer.json",
        "deepseek-ai/DeepSeek-V3": tok / "deepseek-v3" / "tokenizer.json",
    }
    tokenizers.Tokenizer.from_pretrained = staticmethod(
        lambda ident, *a, **k: tokenizers.Tokenizer.from_file(str(local[ident]))
    )
    sys.path.insert(0, str(ref_dir))
    from main.eval.predictors import FunctionPredictor
    from main.eval.runner import run_question_bank_eval

    return run_question_bank_eval(
        FunctionPredictor(lambda row: row["target_tier_id"]), predictor_label="gold", shard=bank
    )


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    ref_dir, bank, out = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    shared = os.environ.get("ROUTEVAL_SHARED")
    if not shared:
        print("crb_reference.py: set ROUTEVAL_SHARED", file=sys.stderr)
        return 2
    tok = Path(shared) / "thirdparty" / "tokenizers"
    if os.path.exists(out) and not os.path.isfile(out):
        print(f"crb_reference.py: {out}: not a regular file", file=sys.stderr)
        return 2
    if os.path.exists(out) and os.path.samefile(out, bank):
        print(f"crb_reference.py: {out} is the bank (refusing to write over an input)",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="crb-tiktoken-") as cache:
        shutil.copyfile(tok / "cl100k_base" / "cl100k_base.tiktoken",
                        Path(cache) / CL100K_CACHE_NAME)
        os.environ["TIKTOKEN_CACHE_DIR"] = cache
        summary = run_reference(ref_dir, tok, bank)
    # Atomically: a temporary file beside OUT, renamed over it once complete.
    fd, tmp = tempfile.mkstemp(prefix=".crb-reference-", dir=os.path.dirname(os.path.abspath(out)))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(summary, f, ensure_ascii=False)
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
