"""docs/examples/: the notebook holds the script's cells, and runs headless (executed by
nbconvert when Debian's jupyter-nbconvert and a Python kernel are installed, else the script)."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "docs", "examples", "sweep_rank_plot.py")
NOTEBOOK = os.path.join(ROOT, "docs", "examples", "sweep_rank_plot.ipynb")


def script_cells():
    body = open(SCRIPT).read().split("# %%\n")[1:]
    return [c.rstrip("\n") for c in body]


def test_notebook_holds_the_script_cells():
    nb = json.load(open(NOTEBOOK))
    code = ["".join(c["source"]).rstrip("\n") for c in nb["cells"] if c["cell_type"] == "code"]
    assert code == script_cells()
    assert nb["nbformat"] == 4


def have(module):
    return importlib.util.find_spec(module) is not None


def test_example_runs_headless(tmp_path):
    # A script's sys.path starts at its own folder: the package comes from PYTHONPATH, the
    # build's python/ folder (the one ctest names) or else the source tree.
    core = os.environ.get("SHARDSIM_PYTHON_DIR")
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.path.dirname(core) if core else ROOT)
    if have("nbconvert") and have("ipykernel"):
        out = tmp_path / "executed.ipynb"
        subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
                        "--output", str(out), NOTEBOOK], cwd=tmp_path, env=env, check=True)
        text = "".join("".join(o.get("text", "")) for c in json.load(open(out))["cells"]
                       for o in c.get("outputs", []))
    else:
        p = subprocess.run([sys.executable, SCRIPT, str(tmp_path)], cwd=ROOT, env=env,
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        text = p.stdout
    assert "1024 points" in text and "tokens/s/GPU" in text
    if have("matplotlib"):
        assert (tmp_path / "mixtral-sweep.png").stat().st_size > 1000
    else:
        assert "no plot" in text
