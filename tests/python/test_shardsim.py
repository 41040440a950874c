"""The Python module against the CLI: each function returns exactly what the command prints with
--json, a dict scenario reads as its YAML file does, bad input raises shardsim.Error with the
CLI's message. Run by ctest (python_test) from the source tree, with SHARDSIM_BINARY naming the
CLI and SHARDSIM_PYTHON_DIR the module just built."""

import json
import os
import subprocess
import threading
import time

import pytest

import shardsim

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("SHARDSIM_BINARY", os.path.join(ROOT, "build", "shardsim"))
QUICKSTART = os.path.join(ROOT, "scenarios", "quickstart.yaml")

# scenarios/quickstart.yaml as a dict.
QUICKSTART_DICT = {
    "name": "llama3-70b-h100x512",
    "model": "llama3-70b",
    "hardware": "h100-sxm",
    "topology": "dgx-h100",
    "gpus": 512,
    "training": {
        "seq_len": 8192, "global_batch": 1024, "micro_batch": 1, "precision": "bf16",
        "optimizer": "adam", "grad_dtype": "fp32", "recompute": "selective",
        "flash_attention": True, "tokens": 15e12,
    },
    "parallel": {
        "dp": 16, "tp": 8, "pp": 4, "cp": 1, "zero_stage": 1, "sequence_parallel": True,
        "schedule": "interleaved_1f1b", "virtual_stages": 2,
    },
}

# A small sweep (8 points) over the quickstart scenario; its base resolves against the cwd.
SMALL_SWEEP = {
    "base": "scenarios/quickstart.yaml",
    "sweep": {"training.recompute": ["selective", "full"], "parallel.pp": [2, 4],
              "parallel.dp": [32, 16], "zip": [["parallel.pp", "parallel.dp"]],
              "training.micro_batch": [1, 2]},
}


def cli(*args, check=True):
    """(exit code, stdout, stderr) of the shardsim CLI, run from the source tree."""
    p = subprocess.run([BINARY, *args], cwd=ROOT, capture_output=True, text=True)
    if check and p.returncode not in (0, 1):
        raise AssertionError(f"shardsim {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return p.returncode, p.stdout, p.stderr


@pytest.fixture(autouse=True)
def in_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_simulate_equals_cli_json():
    _, out, _ = cli("simulate", "scenarios/quickstart.yaml", "--json")
    r = shardsim.simulate("scenarios/quickstart.yaml")
    assert r == json.loads(out)
    assert list(r) == list(json.loads(out))  # same keys in the same order
    assert 0 < r["mfu"] < 1 and r["fits"] is True


def test_simulate_every_rank_equals_cli():
    path = "scenarios/mixtral-8x7b-h100x64.yaml"
    _, out, _ = cli("simulate", path, "--json", "--every-rank")
    assert shardsim.simulate(path, every_rank=True) == json.loads(out)


def test_dict_scenario_reads_as_its_file():
    assert shardsim.simulate(QUICKSTART_DICT) == shardsim.simulate(QUICKSTART)
    assert shardsim.budget(QUICKSTART_DICT) == shardsim.budget(QUICKSTART)


def test_dict_relative_paths_resolve_against_cwd(monkeypatch):
    d = dict(QUICKSTART_DICT, model="models/llama3-70b.yaml")
    assert shardsim.simulate(d)["step_time_s"] == shardsim.simulate(QUICKSTART)["step_time_s"]
    monkeypatch.chdir(os.path.join(ROOT, "docs"))
    with pytest.raises(shardsim.Error) as e:
        shardsim.simulate(d)
    assert "models/llama3-70b.yaml" in str(e.value)
    assert e.value.diagnostics[0].file.startswith("<dict>")


def test_dict_error_names_the_key():
    d = json.loads(json.dumps(QUICKSTART_DICT))
    d["parallel"]["tp"] = 3
    d["parallel"]["dp"] = 512 // 12
    with pytest.raises(shardsim.Error) as e:
        shardsim.simulate(d)
    keys = [x.key for x in e.value.diagnostics]
    assert "parallel.tp" in keys, e.value.diagnostics
    d0 = e.value.diagnostics[keys.index("parallel.tp")]
    assert d0.file == "<dict>" and d0.line > 0 and d0.col > 0
    # The line it points at is the key's line of the YAML the dict was written as.
    assert e.value.source.splitlines()[d0.line - 1].strip() == "tp: 3"
    assert str(e.value).startswith(f"<dict>:")
    assert e.value.exit_code == 2


def test_unknown_key_in_dict():
    d = dict(QUICKSTART_DICT, gpuz=512)
    with pytest.raises(shardsim.Error) as e:
        shardsim.budget(d)
    assert any(x.key == "gpuz" and "did you mean" in x.message for x in e.value.diagnostics)


def test_file_error_message_is_the_cli_message(tmp_path):
    bad = tmp_path / "bad.yaml"
    text = open(QUICKSTART).read().replace("  tp: 8", "  tp: 3")
    bad.write_text(text)
    rc, _, err = cli("simulate", str(bad), "--json", check=False)
    assert rc == 2
    with pytest.raises(shardsim.Error) as e:
        shardsim.simulate(bad)
    assert str(e.value) == err.rstrip("\n")
    assert all(d.file == str(bad) for d in e.value.diagnostics)
    assert "parallel.tp" in [d.key for d in e.value.diagnostics]


def test_missing_file():
    with pytest.raises(shardsim.Error) as e:
        shardsim.simulate("no/such/scenario.yaml")
    assert "no/such/scenario.yaml" in str(e.value)


def test_budget_equals_cli_json():
    _, out, _ = cli("budget", "scenarios/quickstart.yaml", "--json")
    b = shardsim.budget("scenarios/quickstart.yaml")
    assert b == json.loads(out)
    assert b["params"]["total"] > 70e9


def test_comm_equals_cli_json():
    _, out, _ = cli("comm", "--topology", "dgx-h100", "--gpus", "16", "--op", "all_reduce",
                    "--size", "1GiB", "--json")
    c = shardsim.comm("dgx-h100", 16, "all_reduce", "1GiB")
    assert c == json.loads(out)
    assert c["busbw_gbps"] > 0
    assert shardsim.comm("dgx-h100", 16, size=1 << 30) == c
    _, out, _ = cli("comm", "--topology", "dgx-h100", "--gpus", "16", "--ranks-per-node", "4",
                    "--sizes", "1KiB:1GiB:4", "--json")
    assert shardsim.comm("dgx-h100", 16, sizes=("1KiB", "1GiB", 4),
                         ranks_per_node=4) == json.loads(out)


def test_comm_bad_op():
    rc, _, err = cli("comm", "--topology", "dgx-h100", "--gpus", "8", "--op", "bogus",
                     check=False)
    with pytest.raises(shardsim.Error) as e:
        shardsim.comm("dgx-h100", 8, "bogus")
    assert rc == 2 and str(e.value) == err.rstrip("\n")


def test_check_claim_equals_cli_json(tmp_path):
    # One GPU: the layout search is a few dozen points.
    args = ["40000 tokens/s/GPU", "--model", "gpt3-125m", "--hardware", "h100-sxm", "--gpus", "1"]
    _, out, _ = cli("check-claim", *args, "--json", "-j", "2", "--progress", "none")
    seen = []
    c = shardsim.check_claim("40000 tokens/s/GPU", model="gpt3-125m", hardware="h100-sxm",
                             gpus=1, jobs=2, progress=seen.append)
    assert c == json.loads(out)
    assert c["verdict"] in ("impossible", "implausible", "plausible", "conservative")
    assert c["best"]["status"] == "ok" and c["given"] is None
    assert seen and seen[-1].done == seen[-1].total == c["searched"]
    # A scenario (here a dict) also simulates its own layout.
    scenario = {"model": "gpt3-125m", "hardware": "h100-sxm", "topology": "dgx-h100", "gpus": 1,
                "training": {"seq_len": 2048, "global_batch": 64, "micro_batch": 4}}
    path = tmp_path / "claim.yaml"
    path.write_text(shardsim.to_yaml(scenario))
    _, out, _ = cli("check-claim", "40000 tokens/s/GPU", "--scenario", str(path), "--json",
                    "--progress", "none")
    c = shardsim.check_claim("40000 tokens/s/GPU", scenario)
    assert c == json.loads(out) and c["given"]["status"] == "ok"


def test_check_claim_usage():
    with pytest.raises(shardsim.Error, match="model, hardware and gpus"):
        shardsim.check_claim("1200 tokens/s/GPU", model="llama3-8b")
    with pytest.raises(shardsim.Error, match="cannot be combined"):
        shardsim.check_claim("1200 tokens/s/GPU", QUICKSTART, gpus=8)
    with pytest.raises(shardsim.Error) as e:
        shardsim.check_claim("fast", model="llama3-8b", hardware="h100-sxm", gpus=8)
    assert e.value.exit_code == 2


def test_sweep_rows_equal_cli_files(tmp_path):
    spec = tmp_path / "sweep.yaml"
    spec.write_text(shardsim.to_yaml(dict(SMALL_SWEEP, base=QUICKSTART)))
    cli("sweep", str(spec), "-j", "2", "--csv", str(tmp_path / "cli.csv"), "--jsonl",
        str(tmp_path / "cli.jsonl"), "--progress", "none")
    rows = shardsim.sweep(str(spec), jobs=2, csv=tmp_path / "py.csv")
    assert (tmp_path / "py.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()
    cli_rows = [json.loads(l) for l in (tmp_path / "cli.jsonl").read_text().splitlines()]
    assert list(rows) == cli_rows
    header = (tmp_path / "cli.csv").read_text().splitlines()[0].split(",")
    assert rows.columns == header
    assert rows.space_points == rows.shard_points == len(rows) == 8
    assert rows.input_columns[:2] == ["training.recompute", "parallel.pp"]
    r = rows[0]
    assert isinstance(r["point"], int) and isinstance(r["parallel.pp"], int)
    assert isinstance(r["training.recompute"], str) and isinstance(r["tokens_per_s"], float)
    assert r["fits"] in (True, False)
    assert "Pareto" in rows.report or "rank" in rows.report.lower()
    best = rows.best(3)
    assert best == sorted(best, key=lambda x: -x["tokens_per_s"])


def test_sweep_report_equals_cli_table(tmp_path):
    # The ranking text is the CLI's, tie marks ("~" within the stated uncertainty) and the tie
    # line included: Python's had neither (module.cc did not set RankOptions.tie_fraction).
    spec = tmp_path / "sweep.yaml"
    spec.write_text(shardsim.to_yaml(dict(SMALL_SWEEP, base=QUICKSTART)))
    _, out, _ = cli("sweep", str(spec), "-j", "2", "--progress", "none")
    rows = shardsim.sweep(str(spec), jobs=2)
    assert "~" in out  # the sweep has ties, so the comparison covers them
    heading, table = out.split("\n", 1)  # "shardsim sweep: FILE, 8 points", then the table
    assert heading.startswith("shardsim sweep: ")
    assert rows.report == table


def test_library_folder_must_exist(monkeypatch):
    # As the CLI: $SHARDSIM_LIBRARY naming no folder is an error (it was skipped silently), with
    # the CLI's message; library= wins over it and must exist too.
    monkeypatch.setenv("SHARDSIM_LIBRARY", "/nonexistent")
    code, _, err = cli("budget", QUICKSTART, check=False)
    with pytest.raises(shardsim.Error) as e:
        shardsim.budget(QUICKSTART)
    assert code == 2 and str(e.value) + "\n" == err
    assert shardsim.budget(QUICKSTART, library=ROOT)["params"]["total"] > 0
    with pytest.raises(shardsim.Error, match="library: '/nonexistent' is not a folder"):
        shardsim.budget(QUICKSTART, library="/nonexistent")


def test_sweep_dict_shard_and_progress():
    seen = []
    whole = shardsim.sweep(SMALL_SWEEP, jobs=1)
    part = shardsim.sweep(SMALL_SWEEP, jobs=2, shard="2/4", progress=seen.append)
    assert [r["point"] for r in part] == [1, 5]
    assert list(part) == [whole[1], whole[5]]
    assert shardsim.sweep(SMALL_SWEEP, shard=(2, 4)) == part
    assert [p.done for p in seen] == [0, 1, 2] and seen[-1].total == 2
    with pytest.raises(shardsim.Error):
        shardsim.sweep(SMALL_SWEEP, shard="5/4")


def test_sweep_to_pandas():
    pd = pytest.importorskip("pandas")
    df = shardsim.sweep(SMALL_SWEEP, jobs=2).to_pandas()
    assert len(df) == 8 and df.columns[0] == "point"
    assert df["parallel.pp"].dtype.kind == "i" and df["mfu"].dtype.kind == "f"


def test_sweep_progress_exception_is_raised():
    def boom(p):
        raise KeyError("stop")
    with pytest.raises(KeyError):
        shardsim.sweep(SMALL_SWEEP, jobs=1, progress=boom)


def test_sweep_releases_the_gil():
    # While the sweep runs in another thread, this one keeps counting: with the GIL held for
    # the whole call it could not run at all until the sweep returned.
    spec = "scenarios/sweeps/mixtral-8x7b-h100x64.yaml"
    done = threading.Event()
    ticks_during = 0

    def run():
        shardsim.sweep(spec, jobs=1)
        done.set()

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.01)
    while not done.is_set():
        ticks_during += 1
        time.sleep(0.001)
    t.join()
    assert ticks_during > 20


def test_sweep_resume(tmp_path):
    out = tmp_path / "rows.jsonl"
    first = shardsim.sweep(SMALL_SWEEP, output=out)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:3]) + lines[3][:10])  # cut mid-row, as a killed run leaves it
    again = shardsim.sweep(SMALL_SWEEP, output=out, resume=True)
    assert again.resumed == 3 and list(again) == list(first)
    assert out.read_text() == "".join(lines)
    with pytest.raises(shardsim.Error, match="exists"):
        shardsim.sweep(SMALL_SWEEP, output=out)
