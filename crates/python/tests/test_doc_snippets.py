"""Every ```python block of README.md and docs/src/*.md runs as written.

Each block runs in a fresh interpreter (`sys.executable -c CODE`) whose working directory is a
temporary directory holding a symlink to every top-level entry of the repository root: the
blocks read `examples/data/...` exactly as from the root, and whatever a block writes (e.g.
`compare.html`) lands in the temporary directory, never in the checkout.
"""

import os
import pathlib
import re
import subprocess
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs" / "src").glob("*.md"))
TIMEOUT = 300
_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```", re.S | re.M)


def python_blocks(text):
    """(line of the opening fence, code) for every ```python block of a Markdown text."""
    return [(text[: m.start()].count("\n") + 1, m.group(1)) for m in _BLOCK.finditer(text)]


def run_block(code, root, timeout=TIMEOUT):
    """Run one block in a fresh interpreter in a scratch copy (symlinks) of root."""
    with tempfile.TemporaryDirectory(prefix="routeval-doc-") as tmp:
        for entry in pathlib.Path(root).iterdir():
            if entry.name != ".git":
                os.symlink(entry, os.path.join(tmp, entry.name))
        return subprocess.run([sys.executable, "-c", code], cwd=tmp, capture_output=True,
                              text=True, timeout=timeout, env=dict(os.environ))


def check_block(where, code, root):
    r = run_block(code, root)
    if r.returncode != 0:
        tail = "\n".join(r.stderr.strip().splitlines()[-15:])
        pytest.fail(f"{where}: python block exits {r.returncode}\n{tail}", pytrace=False)


CASES = [(f"{f.relative_to(ROOT)}:{line}", code)
         for f in DOCS for line, code in python_blocks(f.read_text(encoding="utf-8"))]


def test_docs_have_python_blocks():
    assert len(CASES) >= 10, CASES  # README, python.md (8), scaling-out.md


@pytest.mark.parametrize("where,code", CASES, ids=[w for w, _ in CASES])
def test_doc_block_runs(where, code):
    check_block(where, code, ROOT)


def test_a_raising_block_fails(tmp_path):
    md = ("# t\n\ntext\n\n```python\nprint('ok')\n```\n\n```sh\nexit 1\n```\n\n"
          "```python\nimport nonexistent_module_xyz\n```\n")
    blocks = python_blocks(md)
    assert [line for line, _ in blocks] == [5, 13]
    check_block("t.md:5", blocks[0][1], tmp_path)  # passes
    with pytest.raises(pytest.fail.Exception) as e:
        check_block("t.md:13", blocks[1][1], tmp_path)
    assert "t.md:13" in str(e.value) and "nonexistent_module_xyz" in str(e.value)


def test_a_block_writes_into_scratch_not_root(tmp_path):
    (tmp_path / "data.txt").write_text("x")
    r = run_block("open('out.txt', 'w').write(open('data.txt').read())", tmp_path)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "out.txt").exists()
