"""shardsim from Python: the CLI's commands as functions returning its JSON as dicts.

    import shardsim
    r = shardsim.simulate("scenarios/quickstart.yaml")      # the keys of `simulate --json`
    r["mfu"], r["memory"]["peak_bytes"], r["fits"]
    shardsim.budget({"base": ..., ...})                     # a dict with the YAML's keys
    shardsim.comm("dgx-h100", 16, "all_reduce", "1GiB")     # `comm --json`
    shardsim.check_claim("1200 tokens/s/GPU", model="llama3-70b", hardware="h100-sxm", gpus=512)
    rows = shardsim.sweep("scenarios/sweeps/llama3-70b-h100x512.yaml", jobs=4)
    rows.to_pandas()                                        # one row per point, as the CSV

A scenario (or sweep spec) is a path or a dict holding what the YAML file would: the dict is
written out as YAML, named "<dict>" in messages (relative paths in it resolve against the current
directory) and read by the same loader as a file. Bad input raises shardsim.Error, whose str is
the CLI's message (``file:line:col: error: key: ...``) and whose .diagnostics lists each problem
as (file, line, col, key, message). The library runs without the GIL.
"""

import collections
import json
import math
import os
import re

__all__ = [
    "Error", "Diagnostic", "SweepProgress", "SweepResult", "simulate", "budget", "comm",
    "check_claim", "sweep", "to_yaml",
]


def _core_dir():
    """Where the compiled core (_core*.so) is: beside this file in a build's python/shardsim/,
    else $SHARDSIM_PYTHON_DIR, else build/python/shardsim/ of the source tree holding this file."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("SHARDSIM_PYTHON_DIR", ""), here,
                  os.path.join(os.path.dirname(here), "build", "python", "shardsim")]
    for d in candidates:
        if d and os.path.isdir(d) and any(n.startswith("_core.") for n in os.listdir(d)):
            return d
    raise ImportError(
        "shardsim: the compiled module (_core) is not built; run ./quickstart.sh (or build the "
        "shardsim_python target) and import from the source tree, or set "
        "PYTHONPATH=<build>/python")


_dir = _core_dir()
if _dir != os.path.dirname(os.path.abspath(__file__)):
    __path__.insert(0, _dir)  # noqa: F821 (the package's own __path__)
from . import _core  # noqa: E402


Diagnostic = collections.namedtuple("Diagnostic", "file line col key message")
Diagnostic.__doc__ = ("One problem of an input: file, 1-based line and column (0 when unknown), "
                      "the dotted key it concerns (None when the message names none), message.")

# The key a message starts with: "parallel.tp: 3 does not divide ..." -> "parallel.tp".
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.\[\]]*): ")


class Error(Exception):
    """Bad input (or a run that cannot be made). str(e) is what the CLI prints on stderr;
    e.diagnostics lists Diagnostic(file, line, col, key, message); e.exit_code is the CLI's
    (2 bad input, 1 infeasible); e.source is the YAML a dict scenario was written out as."""

    def __init__(self, message, diagnostics=(), exit_code=2):
        super().__init__(message)
        self.message = message
        self.diagnostics = []
        for d in diagnostics:
            if isinstance(d, Diagnostic):
                self.diagnostics.append(d)
                continue
            file, line, col, text = d
            m = _KEY.match(text)
            self.diagnostics.append(Diagnostic(file, line, col, m.group(1) if m else None, text))
        self.exit_code = exit_code
        self.source = None

    def __str__(self):
        return self.message


_core._set_error_class(Error)

# ------------------------------------------------------------------ dicts as YAML

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
# Strings written unquoted (as a YAML file would have them: "h100-sxm", "3.35 TB/s", "80 GiB",
# "hf:path/config.json"); anything else is written as a JSON (YAML double-quoted) string.
_PLAIN_VALUE = re.compile(r"[A-Za-z0-9_./~+\-][A-Za-z0-9_./~+\-: ]*")


def _scalar(value, where):
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        plain = (_PLAIN_VALUE.fullmatch(value) and not value.endswith((" ", ":"))
                 and ": " not in value)
        return value if plain else json.dumps(value)
    raise Error(f"<dict>: error: {where}: a {type(value).__name__} cannot be a scenario value; "
                "expected a dict, list, str, int, float, bool or None")


def _key(key, where):
    if not isinstance(key, str):
        raise Error(f"<dict>: error: {where}: key {key!r} is not a str")
    return key if _PLAIN_KEY.fullmatch(key) else json.dumps(key)


def _lines(obj, indent, out, where):
    pad = " " * indent
    for k, v in obj.items():
        path = f"{where}.{k}" if where else str(k)
        key = _key(k, path)
        if isinstance(v, dict) and v:
            out.append(f"{pad}{key}:")
            _lines(v, indent + 2, out, path)
        elif isinstance(v, dict):
            out.append(f"{pad}{key}: {{}}")
        elif isinstance(v, (list, tuple)):
            if not v:
                out.append(f"{pad}{key}: []")
                continue
            out.append(f"{pad}{key}:")
            for i, item in enumerate(v):
                item_path = f"{path}[{i}]"
                if isinstance(item, dict) and item:
                    sub = []
                    _lines(item, 0, sub, item_path)
                    out.append(f"{pad}  - {sub[0]}")
                    out.extend(f"{pad}    {line}" for line in sub[1:])
                elif isinstance(item, (dict, list, tuple)):
                    out.append(f"{pad}  - {json.dumps(item)}")
                else:
                    out.append(f"{pad}  - {_scalar(item, item_path)}")
        else:
            out.append(f"{pad}{key}: {_scalar(v, path)}")


def to_yaml(scenario):
    """The YAML text a dict scenario is read as (one key per line, so that messages point at
    the key)."""
    out = []
    _lines(scenario, 0, out, "")
    return "\n".join(out) + "\n"


def _source(scenario):
    """(path, text): a path and None, or "<dict>" and the dict as YAML."""
    if isinstance(scenario, dict):
        return "<dict>", to_yaml(scenario)
    if isinstance(scenario, (str, os.PathLike)):
        return os.fspath(scenario), None
    raise TypeError("scenario: expected a path or a dict with the YAML's keys, got "
                    f"{type(scenario).__name__}")


def _call(fn, text, *args):
    try:
        return fn(*args)
    except Error as e:
        e.source = text
        raise e.with_traceback(None) from None


def _library(library):
    # A library folder that does not exist is an error, as the CLI's --library and
    # $SHARDSIM_LIBRARY are (sim/cli/cli.cc); it was skipped silently for the default library.
    if library is not None:
        path = os.fspath(library)
        if not os.path.isdir(path):
            text = f"library: '{path}' is not a folder; expected a folder holding models/, hardware/, topologies/"
            raise Error("error: " + text, [("", 0, 0, text)])
        return path
    for part in os.environ.get("SHARDSIM_LIBRARY", "").split(":"):
        if part and not os.path.isdir(part):
            text = (f"SHARDSIM_LIBRARY: '{part}' is not a folder; expected folders holding "
                    "models/, hardware/, topologies/ (':'-separated), or unset it (or pass --library)")
            raise Error("error: " + text, [("", 0, 0, text)])
    return ""


# ------------------------------------------------------------------ the commands


def simulate(scenario, every_rank=False, *, library=None):
    """One training step (`shardsim simulate --json`): step_time_s, tokens_per_s, mfu, hfu,
    bubble_fraction, memory {peak_bytes, ...}, fits, bottlenecks, ... A layout that does not
    fit still returns its result (fits is False), as the CLI prints it before exiting 1."""
    path, text = _source(scenario)
    return json.loads(_call(_core.simulate, text, path, text, bool(every_rank),
                            _library(library)))


def budget(scenario, *, library=None):
    """Parameters, FLOPs and memory per device (`shardsim budget --json`)."""
    path, text = _source(scenario)
    return json.loads(_call(_core.budget, text, path, text, _library(library)))


def comm(topology, gpus, op="all_reduce", size=None, *, sizes=None, algo="auto",
         ranks_per_node=None, concurrent_groups=1, library=None):
    """One collective on a topology (`shardsim comm --json`): time_s, algbw_gbps, busbw_gbps,
    ... `size`: bytes (int) or text ("1GiB"; default 1GiB); `sizes`: "FROM:TO[:FACTOR]" or a
    tuple, for nccl-tests' sweep (then the result holds `results`, one per size)."""
    if size is not None and sizes is not None:
        raise Error("error: size and sizes cannot be given together")
    if isinstance(sizes, (tuple, list)):
        sizes = ":".join(str(s) for s in sizes)
    return json.loads(_call(
        _core.comm, None, os.fspath(topology), int(gpus), str(op),
        "" if size is None else str(size), "" if sizes is None else str(sizes), str(algo),
        None if ranks_per_node is None else int(ranks_per_node), int(concurrent_groups),
        _library(library)))


SweepProgress = collections.namedtuple("SweepProgress", "done total resumed feasible")


def _progress(callback):
    if callback is None:
        return None
    return lambda done, total, resumed, feasible: callback(
        SweepProgress(done, total, resumed, feasible))


def check_claim(claim, scenario=None, *, model=None, hardware=None, topology=None, gpus=None,
                seq_len=None, global_batch=None, precision=None, jobs=None, progress=None,
                library=None):
    """Judge a throughput claim (`shardsim check-claim --json`): the claim under each FLOPs
    convention, the physical ceiling, the best layout a search finds, the verdict. Give a
    scenario (path or dict; its layout is also simulated), or model, hardware and gpus."""
    given = [name for name, v in (("model", model), ("hardware", hardware),
                                  ("topology", topology), ("gpus", gpus), ("seq_len", seq_len),
                                  ("global_batch", global_batch), ("precision", precision))
             if v is not None]
    if scenario is not None:
        if given:
            raise Error("error: check_claim: " + ", ".join(given) + " cannot be combined with "
                        "scenario, which gives the model, hardware, topology, GPU count and "
                        "training; give scenario alone, or model, hardware and gpus")
        path, text = _source(scenario)
    else:
        if model is None or hardware is None or gpus is None:
            raise Error("error: check_claim: give a scenario, or model, hardware and gpus")
        for name, v in (("gpus", gpus), ("seq_len", seq_len), ("global_batch", global_batch)):
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise Error(f"error: check_claim: {name} must be a positive integer, got {v!r}")
        path, text = "", None
    return json.loads(_call(
        _core.check_claim, text, str(claim), path, text, model or "", hardware or "",
        topology or "", gpus or 0, seq_len or 0, global_batch or 0, precision or "bf16", jobs,
        _progress(progress), _library(library)))


class SweepResult(list):
    """The rows of a sweep, one dict per point in point order, keyed and typed as the result
    files (`sweep --jsonl`; the CSV's columns): point, the varied inputs, status, fits, every
    scalar output, bottleneck, reason; None where a value is not known for the point.

    columns: every column, in the CSV's order; input_columns: the varied inputs; report: the
    ranking `shardsim sweep` prints; space_points / shard_points / resumed: points of the sweep,
    of this shard, and rows read back from the result files."""

    def __init__(self, rows, columns, input_columns, report, space_points, shard_points,
                 resumed):
        super().__init__(rows)
        self.columns = columns
        self.input_columns = input_columns
        self.report = report
        self.space_points = space_points
        self.shard_points = shard_points
        self.resumed = resumed

    def feasible(self):
        """The rows that ran and fit (status "ok")."""
        return [r for r in self if r["status"] == "ok"]

    def best(self, n=10, by="tokens_per_s"):
        """The n feasible rows with the highest `by`, ties to the lower point (as the ranking)."""
        return sorted(self.feasible(), key=lambda r: (-r[by], r["point"]))[:n]

    def to_pandas(self):
        """A pandas DataFrame with the CSV's columns (needs pandas: Debian python3-pandas)."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("SweepResult.to_pandas needs pandas (Debian: python3-pandas)") from e
        return pandas.DataFrame(list(self), columns=self.columns)


_RESULT_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl"}


def sweep(spec, jobs=None, shard=None, *, output=None, csv=None, jsonl=None, resume=False,
          overwrite=False, progress=None, rank_by="tokens_per_s", top=10,
          price_per_gpu_hour=None, library=None):
    """Every point of a sweep spec (path or dict: a scenario with a sweep: block, or
    {base: scenario, sweep: ...}) simulated on `jobs` threads (default: every core), as
    `shardsim sweep` runs it. shard: "K/N" or (K, N), 1-based, as --shard (None: every point;
    unlike the CLI, SLURM_ARRAY_* are not read). output / csv / jsonl: result files, written as
    the CLI writes them (resume, overwrite as --resume, --overwrite). progress: called with a
    SweepProgress(done, total, resumed, feasible) after each row. Returns a SweepResult."""
    path, text = _source(spec)
    shard_index, shard_count = 0, 1
    if shard is not None:
        shard_text = shard if isinstance(shard, str) else "/".join(str(s) for s in shard)
        shard_index, shard_count = _call(_core.parse_shard, text, shard_text)
    csv_path = "" if csv is None else os.fspath(csv)
    jsonl_path = "" if jsonl is None else os.fspath(jsonl)
    if output is not None:
        output = os.fspath(output)
        kind = _RESULT_SUFFIXES.get(os.path.splitext(output)[1].lower())
        if kind is None:
            raise Error(f"error: output: cannot tell the format of '{output}'; name it .csv or "
                        ".jsonl")
        if kind == "csv":
            csv_path = output
        else:
            jsonl_path = output
    if resume and not csv_path and not jsonl_path:
        raise Error("error: resume needs the result file: output")
    header, columns, lines, report, space_points, shard_points, resumed = _call(
        _core.sweep, text, path, text, jobs, shard_index, shard_count, csv_path, jsonl_path,
        bool(resume), bool(overwrite), _progress(progress), str(rank_by), int(top),
        None if price_per_gpu_hour is None else float(price_per_gpu_hour), _library(library))
    rows = [json.loads(line) for line in lines.splitlines()]
    return SweepResult(rows, header.rstrip("\n").split(","), columns, report, space_points,
                       shard_points, resumed)

