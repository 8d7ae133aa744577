"""Every bad input of issue 17, run through the real command line (in-process: ``xmlthresh.cli.entry.main`` with
``sys.argv``), gets exit code 1 and exactly one line on stderr -- no traceback -- naming the parameter or the
file and the problem. One table (:data:`CASES`) drives the test and the documentation: ``docs/errors.md`` is
rendered from it (:func:`render_table`; ``python tests/test_user_errors.py`` rewrites it), and
:func:`test_the_documented_table_is_the_table_of_the_test` fails when the two differ, so the table a user
reads is the one the test proves.

Each case's ``message`` is the line a user sees, exactly, with ``<tmp>`` for the test's directory; a message
ending in ``...`` is a prefix (the rest lists options that depend on the installed plugins). Memory limits are
computed against ``XMLTHRESH_MAX_MEMORY=16G`` so their numbers do not depend on the machine.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "errors.md"
BUDGET = "16G"


@dataclass(frozen=True)
class Case:
    id: str
    section: str  # the heading of issue 17 the case comes from
    what: str  # the bad input, as a user would describe it
    args: tuple[str, ...]  # command-line arguments; {tmp} is the test's directory
    message: str  # the one line on stderr (``<tmp>`` for the directory; ``...`` at the end: a prefix)
    env: dict[str, str] = field(default_factory=dict)
    tracked: bool = False  # keep tracking on (the store's own errors)
    patch: Callable[[pytest.MonkeyPatch], None] | None = None
    ok: bool = False  # not an error any more: runs and exits 0 (``message`` says what happens)


def _fill_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file the run writes goes to /dev/full (ENOSPC on the first flush), as on a full disk."""
    from xmlthresh._util import files

    original = files._create_temporary

    def on_full_disk(path: Path):
        tmp, handle = original(path)
        full = os.open("/dev/full", os.O_WRONLY)
        os.dup2(full, handle)
        os.close(full)
        return tmp, handle

    monkeypatch.setattr(files, "_create_temporary", on_full_disk)


LISTS = ("dataset=ranked_lists",)
E = "xmlthresh: error: "

CASES: tuple[Case, ...] = (
    # ------------------------------------------------------------------ silently wrong
    Case("size_above_num_docs", "Silently wrong", "a label's size above num_docs (`1 9 1 0 1 0`, m = 4)",
         (*LISTS, "dataset.path={tmp}/size9.txt", "dataset.num_docs=4"),
         E + "<tmp>/size9.txt line(s) 1 (class id(s) 1): size larger than num_docs = 4, the number of documents (1 "
         "label(s) affected; e.g. size 9); num_docs is too small or the sizes are wrong"),
    Case("duplicate_ids", "Silently wrong", "class id 1 on three lines",
         (*LISTS, "dataset.path={tmp}/dup.txt"),
         E + "<tmp>/dup.txt: class id 1 appears on lines 1, 2, 3; class ids must be unique (1 id(s) repeated), since "
         "thresholds.csv names each label by its id -- when the repeats are meant (copies of one label), set "
         "dataset.allow_duplicate_ids=true"),
    Case("num_docs_float", "Silently wrong", "`dataset.num_docs=4.5`",
         (*LISTS, "dataset.path={tmp}/good.txt", "dataset.num_docs=4.5"),
         E + "dataset.num_docs must be an integer >= 1 (or null), got 4.5 (float)"),
    Case("seed_float", "Silently wrong", "`seed=1.5`", ("seed=1.5",),
         E + "seed must be an integer in [0, 4294967295], got 1.5 (float)"),
    Case("bool_maybe", "Silently wrong", "`dataset.include_predict_all=maybe`", ("dataset.include_predict_all=maybe",),
         E + "dataset.include_predict_all must be true or false, got 'maybe' (str)"),
    Case("bool_no", "Silently wrong", "`dataset.include_predict_all=no`", ("dataset.include_predict_all=no",),
         "(no error: `no` is false, as for every switch; the typed schema of the option groups reads it by the "
         "parameter's declared type)", ok=True),
    *(Case(f"switch_{key.replace('.', '_')}", "Silently wrong", f"`{key}=nope` (a switch of the typed schema)",
           (f"{key}=nope",), E + f"{key} must be true or false (yes/no, on/off, 1/0), got 'nope'")
      for key in ("force", "tracking.enabled", "warm_up", "report.enabled")),
    Case("switch_two", "Silently wrong", "`warm_up=2` (OmegaConf takes any integer for a bool)", ("warm_up=2",),
         E + "warm_up must be true or false (yes/no, on/off, 1/0), got '2'"),
    Case("offline_word", "Silently wrong", "`XMLTHRESH_OFFLINE=maybe` (any value but empty and 0 meant offline)", (),
         E + "environment variable XMLTHRESH_OFFLINE='maybe' must be true or false (yes/no, on/off, 1/0); unset it "
         "for off", env={"XMLTHRESH_OFFLINE": "maybe"}),
    Case("group_null", "Raw errors", "`ranker=null` (Hydra: a traceback)", ("ranker=null",),
         E + "ranker=null: a group takes the name of one of its options (br_logreg, knn, lml_linear, lml_tree, mlknn); "
         "to leave an optional group out, write ~ranker"),
    Case("unread_task_keys", "Silently wrong", "`task=cde strategy=pooled beta=3` (ignored without a word)",
         ("task=cde", "strategy=pooled", "beta=3"),
         E + "task=cde does not read strategy, beta; drop them, or run the task they belong to"),
    Case("interval_resamples_text", "Silently wrong", "`interval.resamples=many`", ("interval.resamples=many",),
         E + "Error merging override interval.resamples=many; Value 'many' of type 'str' could not be converted to "
         "Integer"),
    # ------------------------------------------------------------------ data loss
    Case("full_disk", "Data loss", "a full disk under the run directory", ("dataset.n_labels=5", "dataset.num_docs=50"),
         E + "cannot write <tmp>/run-full_disk/thresholds.csv: No space left on device; free space there or write "
         "elsewhere (hydra.run.dir, XMLTHRESH_HOME, XMLTHRESH_CACHE)", patch=_fill_disk),
    # ------------------------------------------------------------------ hangs and leftovers
    Case("n_angles", "Hangs and leftovers", "`strategy.n_angles=1000000000`",
         ("strategy=domain_fast", "strategy.n_angles=1000000000"),
         E + "strategy.n_angles=1000000000 needs about 48.0 GB of memory (48 bytes per direction), more than the "
         "17.2 GB available (XMLTHRESH_MAX_MEMORY); the limit here is strategy.n_angles <= 357,913,941 "
         "(XMLTHRESH_MAX_MEMORY sets another budget)"),
    Case("linearization_grid", "Hangs and leftovers", "`strategy=linearization strategy.search=grid strategy.grid=100000`",
         ("strategy=linearization", "strategy.search=grid", "strategy.grid=100000"),
         E + "strategy.grid=100000 needs about 960.0 GB of memory ((grid + 1)^2 = 1e+10 grid points x 96 bytes), "
         "more than the 17.2 GB available (XMLTHRESH_MAX_MEMORY); the limit here is strategy.grid <= 13,376 "
         "(XMLTHRESH_MAX_MEMORY sets another budget)"),
    Case("region_grid", "Hangs and leftovers", "`strategy=linearization_region strategy.grid=100000`",
         ("strategy=linearization_region", "strategy.grid=100000"),
         E + "strategy.grid=100000 needs about 6,000.1 GB of memory ((grid + 1)^2 = 1e+10 grid points x 600 bytes), "
         "more than the 17.2 GB available (XMLTHRESH_MAX_MEMORY); the limit here is strategy.grid <= 5,349 "
         "(XMLTHRESH_MAX_MEMORY sets another budget)"),
    Case("max_nodes", "Hangs and leftovers", "`strategy.refine=bnb strategy.max_nodes=10^12`",
         ("strategy.refine=bnb", "strategy.max_nodes=1000000000000"),
         E + "strategy.max_nodes=1000000000000 needs about 56,000.0 GB of memory (56 bytes per node), more than the "
         "17.2 GB available (XMLTHRESH_MAX_MEMORY); the limit here is strategy.max_nodes <= 306,783,378 "
         "(XMLTHRESH_MAX_MEMORY sets another budget)"),
    Case("pcut_n_grid", "Hangs and leftovers", "`strategy=pcut strategy.n_grid=10^10`",
         ("strategy=pcut", "strategy.n_grid=10000000000", "dataset=synthetic_xmc"),
         E + "strategy.n_grid=10000000000 needs about 400.0 GB of memory (40 bytes per grid value), more than the "
         "17.2 GB available (XMLTHRESH_MAX_MEMORY); the limit here is strategy.n_grid <= 429,496,729 "
         "(XMLTHRESH_MAX_MEMORY sets another budget)"),
    Case("synthetic_cells", "Hangs and leftovers", "`dataset=synthetic dataset.num_docs=10^9`",
         ("dataset.num_docs=1000000000",),
         E + "dataset.n_labels x dataset.num_docs = 200 x 1,000,000,000 cells x 40 bytes need about 8,000.0 GB of "
         "memory, more than the 17.2 GB available (XMLTHRESH_MAX_MEMORY); lower them (synthetic_large draws "
         "millions of labels without a documents x labels matrix) (XMLTHRESH_MAX_MEMORY sets another budget)"),
    Case("synthetic_large_labels", "Hangs and leftovers", "`dataset=synthetic_large dataset.n_labels=10^9`",
         ("dataset=synthetic_large", "dataset.n_labels=1000000000"),
         E + "dataset.n_labels = 1,000,000,000 labels x (400 + 160 x dataset.mean_relevant = 13) bytes need about "
         "2,480.0 GB of memory, more than the 17.2 GB available (XMLTHRESH_MAX_MEMORY); lower dataset.n_labels or "
         "dataset.mean_relevant (XMLTHRESH_MAX_MEMORY sets another budget)"),
    Case("synthetic_xmc_docs", "Hangs and leftovers", "`dataset=synthetic_xmc dataset.num_docs=10^9`",
         ("dataset=synthetic_xmc", "dataset.num_docs=1000000000"),
         E + "2,000,000,000 documents (both splits) x 60 scored candidates (top_k + n_distractors) and 10,000 labels "
         "need about 1,216.0 GB of memory, more than the 17.2 GB available (XMLTHRESH_MAX_MEMORY); lower "
         "dataset.num_docs, dataset.top_k or dataset.n_labels (XMLTHRESH_MAX_MEMORY sets another budget)"),
    Case("first_n_labels_huge", "Hangs and leftovers", "`dataset.first_n_labels=10^12` (more than the data has)",
         ("dataset.n_labels=5", "dataset.num_docs=50", "dataset.first_n_labels=1000000000000"),
         E + "dataset.first_n_labels=1000000000000 is above the 5 labels of synthetic: use at most 5, or null for "
             "all labels"),
    Case("ranker_k_huge", "Hangs and leftovers", "`ranker=knn ranker.k=10^12` (bounded by the data)",
         ("dataset=mulan", "dataset.name=toy", "ranker=knn", "ranker.k=1000000000000"),
         "(no error: k above the number of training documents uses them all)", ok=True),
    Case("sweep_unknown_option", "Hangs and leftovers", "`-m strategy=domain,nosuch` (before any sweep or parent run)",
         ("-m", "strategy=domain,nosuch"),
         E + "unknown strategy option 'nosuch'; known: coordinate, domain, domain_fast, independent, ..."),
    # ------------------------------------------------------------------ raw tracebacks
    *(Case(f"beta_{name}", "Raw tracebacks", f"`beta={value}`", (f"beta={value}",),
           E + f"beta must be a number in [1e-06, 1e+06] (F_beta weights recall beta times as much as precision), "
           f"got {shown}")
      for name, value, shown in (("1e200", "1e200", "1e+200 (float)"), ("0", "0", "0 (int)"),
                                 ("negative", "-1", "-1 (int)"), ("nan", "nan", "nan (float)"),
                                 ("inf", "inf", "inf (float)"), ("abc", "abc", "'abc' (str)"))),
    Case("num_docs_text", "Raw tracebacks", "`dataset.num_docs=abc`",
         (*LISTS, "dataset.path={tmp}/good.txt", "dataset.num_docs=abc"),
         E + "dataset.num_docs must be an integer >= 1 (or null), got 'abc' (str)"),
    Case("key_not_in_config", "Raw tracebacks", "`strategy.bogus=1` (a key the option does not have; Hydra's error)",
         ("strategy.bogus=1",),
         E + "strategy.bogus: strategy=domain has no key 'bogus' (its keys: fallback, gap_tol, max_nodes, "
         "max_predicted_per_positive, min_precision, polish, pooling, pooling_space, refine, smoothing), and no "
         "strategy option has it; xmlthresh list strategy describes the options"),
    Case("override_syntax", "Raw tracebacks", "`beta==2` (a malformed override; Hydra's error)", ("beta==2",),
         E + "Error parsing override 'beta==2'; extraneous input '=' expecting ..."),
    Case("cde_dataset_unknown", "Raw tracebacks", "`task=cde cde_dataset=nosuch`", ("task=cde", "cde_dataset=nosuch"),
         E + "unknown cde_dataset option 'nosuch'; known: direct_vs_approx/fork, direct_vs_approx/surd_cube, ..."),
    Case("estimator_unknown", "Raw tracebacks", "`task=cde estimator=nosuch`", ("task=cde", "estimator=nosuch"),
         E + "unknown estimator option 'nosuch'; known: ckde, flexcode, ..."),
    Case("estimator_bogus_param", "Raw tracebacks", "`task=cde +estimator.bogus=1`", ("task=cde", "+estimator.bogus=1"),
         E + "estimator 'nnkcde' has no parameter(s) bogus; its parameters: bandwidth_grid, bounds, k_grid, max_val, "
         "random_state, tune, val_fraction"),
    Case("ranker_unknown", "Raw tracebacks", "`ranker=nosuch` (an optional group)", ("ranker=nosuch",),
         E + "unknown ranker option 'nosuch'; known: br_logreg, knn, lml_linear, lml_tree, mlknn..."),
    Case("protocol_unknown", "Raw tracebacks", "`protocol=nosuch`", ("protocol=nosuch",),
         E + "unknown protocol option 'nosuch'; known: crossfit, holdout, oracle (xmlthresh list describes them; "
         "your own go to conf/protocol/<name>.yaml of the project root, XMLTHRESH_HOME, or of the source checkout)"),
    Case("experiment_unknown", "Raw tracebacks", "`experiment=nosuch`", ("experiment=nosuch",),
         E + "unknown experiment option 'nosuch'; known: argv, beta_sweep, cde_benchmark, ..."),
    Case("strategy_unknown", "Raw tracebacks", "`strategy=nosuch`", ("strategy=nosuch",),
         E + "unknown strategy option 'nosuch'; known: coordinate, domain, ..."),
    Case("dataset_unknown", "Raw tracebacks", "`dataset=nosuch`", ("dataset=nosuch",),
         E + "unknown dataset option 'nosuch'; known: bibtex, birds, ..."),
    Case("cache_not_writable", "Raw tracebacks", "`XMLTHRESH_CACHE` under a file (a read-only or full cache "
         "folder is used without caching, each cache saying so)",
         ("dataset=mulan", "dataset.name=toy", "ranker=knn"),
         E + "XMLTHRESH_CACHE=<tmp>/afile/cache: <tmp>/afile is a file, so the folder cannot be created there",
         env={"XMLTHRESH_CACHE": "{tmp}/afile/cache"}),
    Case("store_is_directory", "Raw tracebacks", "a directory given as the sqlite store",
         ("tracking.uri=sqlite:///{tmp}/adir",),
         E + "tracking store sqlite:///<tmp>/adir: <tmp>/adir is a directory, not a database file...", tracked=True),
    Case("store_is_garbage", "Raw tracebacks", "a garbage file given as the sqlite store",
         ("tracking.uri=sqlite:///{tmp}/good.txt",),
         E + "tracking store sqlite:///<tmp>/good.txt: <tmp>/good.txt is not an SQLite database...", tracked=True),
    Case("tracking_file_store", "Raw tracebacks", "`tracking.uri=file://...` (MLflow 3 refuses file stores)",
         ("tracking.uri=file://{tmp}/fs",),
         E + "tracking.uri=file://<tmp>/fs: MLflow 3 does not write runs to a file store; use a database, e.g. "
         "tracking.uri=sqlite:///<absolute path>/mlflow.db (or set MLFLOW_ALLOW_FILE_STORE=true to use the file store "
         "anyway)", tracked=True),
    Case("tracking_unknown_scheme", "Raw tracebacks", "`tracking.uri=garbage://x`", ("tracking.uri=garbage://x",),
         E + "tracking.uri=garbage://x: unknown scheme 'garbage'; use sqlite:///<path>, http(s)://host:port or a "
         "database URL (sqlite, http, https, postgresql, mysql, mssql, databricks)", tracked=True),
    Case("experiment_name_5000", "Raw tracebacks", "a 5000-character `tracking.experiment`",
         ("tracking.uri=sqlite:///{tmp}/names.db", "tracking.experiment=" + "e" * 5000),
         E + "tracking.experiment has 5000 characters; MLflow allows at most 500", tracked=True),
    Case("option_file_not_yaml", "Raw tracebacks", "an option file of the user's `conf/` that is not valid YAML",
         ("strategy=bad",),
         E + "an option file is not valid YAML: while parsing a flow sequence in \"<tmp>/badhome/conf/strategy/bad.yaml\", "
         "line 1, column 7 expected ',' or ']', but got '<stream end>' in \"<tmp>/badhome/conf/strategy/bad.yaml\", "
         "line 2, column 1; fix the file", env={"XMLTHRESH_HOME": "{tmp}/badhome"}),
    Case("home_is_a_file", "Raw tracebacks", "`XMLTHRESH_HOME` pointing to a file", (),
         E + "XMLTHRESH_HOME=<tmp>/good.txt is a file, not a folder; point XMLTHRESH_HOME at a folder (it is created "
         "when missing)", env={"XMLTHRESH_HOME": "{tmp}/good.txt"}),
    # ------------------------------------------------------------------ messages that named the wrong problem
    Case("path_is_directory", "Wrong problem named", "a directory as `dataset.path`",
         (*LISTS, "dataset.path={tmp}/adir"),
         E + "dataset.path <tmp>/adir is a directory, not a ranked-list file (it holds e.g. inner.txt); give the path "
         "of the file itself"),
    Case("zip_zeroed_block", "Wrong problem named", "a zip with a zeroed block",
         (*LISTS, "dataset.path={tmp}/zeroed.zip"),
         E + "<tmp>/zeroed.zip:lists.txt: corrupt or truncated zip archive (BadZipFile: Bad CRC-32 for file "
         "'lists.txt'); delete the file and download it again (or check it against its published sha256)"),
    Case("text_named_npz", "Wrong problem named", "a text file named `.npz`",
         ("dataset=scores", "dataset.path={tmp}/text.npz"),
         E + "<tmp>/text.npz: not an .npz archive (a text file); write score files with "
         "xmlthresh.data.score_format.save_scores or np.savez"),
    Case("gzip_ranked_lists", "Wrong problem named", "a gzip file given as a ranked list",
         (*LISTS, "dataset.path={tmp}/good.txt.gz"),
         "(no error: gzip files are read transparently, with the result of the uncompressed file)", ok=True),
    Case("seed_text", "Wrong problem named", "`seed=abc`", ("seed=abc",),
         E + "seed must be an integer in [0, 4294967295], got 'abc' (str)"),
    Case("k_grid_text", "Wrong problem named", "`task=cde estimator.k_grid=abc`", ("task=cde", "estimator.k_grid=abc"),
         E + "estimator.k_grid must be a list of integers (like the default [5, 10, 20, 40, 80, 160, 320]), got 'abc' "
         "(str)"),
    Case("all_sizes_zero", "Wrong problem named", "a file whose sizes are all 0",
         (*LISTS, "dataset.path={tmp}/allsize0"),
         E + "<tmp>/allsize0: every label has size 0 (2 line(s)): no label has a relevant document, so no threshold "
         "can be fitted or evaluated; the second number of each line is the label's size s_k"),
    # ------------------------------------------------------------------ Hydra's edges (the third list's open cases)
    Case("sweep_subdir_shared", "Hydra's edges", "`hydra.sweep.subdir=same` for two jobs (each overwrote the "
         "other's results, and the sweep said done 2)", ("-m", "beta=1,2", "hydra.sweep.subdir=same",
                                                        "hydra.sweep.dir={tmp}/shared"),
         E + "hydra.sweep.subdir=same gives jobs 0 and 1 the same folder <tmp>/shared/same: each job would overwrite "
         "the results of the other; use a subdir that differs between jobs, e.g. ${hydra.job.num} (the default) or "
         "${hydra.job.override_dirname}"),
    Case("preset_list", "Hydra's edges", "`experiment=[a,b]` (Hydra merged the two presets into one config)",
         ("experiment=[beta_sweep,f_values]",),
         E + "experiment=[beta_sweep,f_values]: a group takes one option, not a list (Hydra would merge the options "
         "into one config, the later overriding the earlier); give one preset per command (a preset may hold a sweep "
         "of its own)"),
    Case("key_of_other_option", "Hydra's edges", "a key of one cde_dataset swept across others (Hydra advised "
         "adding it with +)", ("-m", "task=cde", "cde_dataset=surd,fork", "cde_dataset.phi=1",
                              "hydra.sweep.dir={tmp}/phi"),
         E + "cde_dataset.phi: cde_dataset=fork has no key 'phi' (its keys: a, m, n_test, n_train, nx, ny); only "
         "cde_dataset=direct_vs_approx/surd_cube, direct_vs_approx/surd_square, direct_vs_approx/surd_thin, "
         "noise/surd, surd have it: drop cde_dataset.phi, or set it in a command that chooses one of those"),
    Case("run_dir_empty", "Hydra's edges", "`hydra.run.dir=` (the run wrote into the current directory)",
         ("hydra.run.dir=",),
         E + "hydra.run.dir is empty, which is the directory the command runs in; give a folder, or leave "
         "hydra.run.dir out for a new folder under runs/"),
    Case("interval_sweep", "Hydra's edges", "`-m 'beta=interval(1,2)'` (Hydra's traceback)",
         ("-m", "beta=interval(1,2)", "hydra.sweep.dir={tmp}/interval"),
         E + "BasicSweeper does not support sweep type : INTERVAL_SWEEP; the basic sweeper takes lists of values "
         "(key=a,b,c, range(...), choice(...)): interval(...) needs a sweeper plugin that samples, e.g. "
         "hydra/sweeper=optuna"),
    Case("sweep_over_experiments", "Hydra's edges", "`-m tracking.experiment=a,b` (the parent run in one experiment, "
         "its jobs in others)", ("-m", "tracking.experiment=a,b", "hydra.sweep.dir={tmp}/experiments"),
         E + "tracking.experiment takes one value per sweep (a sweep's parent run and its job runs are kept together "
         "in one experiment of one store, tracked or not); run one sweep per value"),
    # ------------------------------------------------------------------ handled correctly before (kept so)
    Case("malformed_token", "Handled before", "a relevance token that is not 0 or 1",
         (*LISTS, "dataset.path={tmp}/bad.txt"),
         E + "<tmp>/bad.txt line 2: token 4 ('7') is not 0 or 1 (relevance of list position 2)"),
)


def random_lists(n_labels: int = 100, length: int = 300) -> str:
    """Ranked lists of random 0/1 (incompressible enough for a zip member of some kB), each size = length."""
    import random

    draw = random.Random(0)
    return "".join(f"{i} {length} " + " ".join(draw.choice("01") for _ in range(length)) + "\n"
                   for i in range(n_labels))


def write_inputs(tmp: Path) -> None:
    """The files the cases name, under ``tmp``."""
    from helpers import write_mulan_set

    (tmp / "good.txt").write_text("1 2 1 0 1 0\n2 1 0 1 0 0\n")
    (tmp / "good.txt.gz").write_bytes(gzip.compress((tmp / "good.txt").read_bytes()))
    (tmp / "size9.txt").write_text("1 9 1 0 1 0\n")
    (tmp / "dup.txt").write_text("1 1 1 0\n1 1 0 1\n1 2 1 1\n")
    (tmp / "bad.txt").write_text("0 2 1 0 1\n1 1 0 7 0\n")
    (tmp / "allsize0").write_text("1 0 0 0 0\n2 0 0 0 0\n")
    (tmp / "text.npz").write_text("hello\n")
    (tmp / "adir").mkdir()
    (tmp / "adir" / "inner.txt").write_text("1 1 1\n")
    (tmp / "afile").write_text("a file where the cache directory should be\n")
    with zipfile.ZipFile(tmp / "lists.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("lists.txt", random_lists())
    data = bytearray((tmp / "lists.zip").read_bytes())
    data[2000:2400] = bytes(400)  # a zeroed block inside the compressed member (about 9 kB of it)
    (tmp / "zeroed.zip").write_bytes(bytes(data))
    write_mulan_set(tmp / "data", "toy", n_train=60, n_test=30, n_labels=4, n_features=4)
    (tmp / "badhome" / "conf" / "strategy").mkdir(parents=True)
    (tmp / "badhome" / "conf" / "strategy" / "bad.yaml").write_text("name: [unclosed\n")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("user-errors")
    write_inputs(tmp)
    return tmp


def run_cli(args: list[str]) -> tuple[int, str, str]:
    """``xmlthresh <args>`` in this process: (exit code, stdout, stderr)."""
    from xmlthresh.cli import entry as cli

    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv
    sys.argv = ["xmlthresh", *args]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            cli.main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = saved
    return code, out.getvalue(), err.getvalue()


def case_command(case: Case, tmp: Path) -> list[str]:
    base = [f"hydra.run.dir={tmp}/run-{case.id}", "plots=false", "warm_up=false"]
    if not case.tracked:
        base.append("tracking.enabled=false")
    return [*base, *(arg.replace("{tmp}", str(tmp)) for arg in case.args)]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_every_bad_input_is_one_line_naming_the_problem(case, inputs, monkeypatch):
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    for key, value in {"XMLTHRESH_HOME": str(inputs / "home"), "XMLTHRESH_CACHE": str(inputs / "cache"),
                       "XMLTHRESH_DATA": str(inputs / "data"), "XMLTHRESH_OFFLINE": "1",
                       "XMLTHRESH_MAX_MEMORY": BUDGET, **case.env}.items():
        monkeypatch.setenv(key, value.replace("{tmp}", str(inputs)))
    if case.patch is not None:
        case.patch(monkeypatch)
    code, out, err = run_cli(case_command(case, inputs))
    if case.ok:
        assert code == 0, err
        assert "F-macro" in out
        return
    lines = err.strip("\n").splitlines()
    assert code == 1, err
    assert len(lines) == 1, err
    assert "Traceback" not in err
    seen = lines[0].replace(str(inputs), "<tmp>")
    if case.message.endswith("..."):
        assert seen.startswith(case.message[:-3]), seen
    else:
        assert seen == case.message
    assert not (inputs / f"run-{case.id}" / "result.json").exists()


@pytest.mark.parametrize("args, start", [
    (["ranker=nosuch"], "xmlthresh: error: unknown ranker option 'nosuch'; known: br_logreg, knn, lml_linear, lml_tree, mlknn"),
    (["seed=abc"], "xmlthresh: error: seed must be an integer in [0, 4294967295], got 'abc' (str)"),
])
def test_the_console_command_prints_the_same_one_line(args, start, inputs):
    """The same lines from a real process (``python -m xmlthresh``: the console script's fast exit)."""
    import subprocess

    env = {**os.environ, "XMLTHRESH_HOME": str(inputs / "home"), "XMLTHRESH_CACHE": str(inputs / "cache")}
    env.pop("HYDRA_FULL_ERROR", None)
    proc = subprocess.run([sys.executable, "-m", "xmlthresh", *args, "tracking.enabled=false", "plots=false",
                           "warm_up=false", f"hydra.run.dir={inputs}/run-console"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.startswith(start) and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_corrupt_zip_that_parses_as_garbage_is_reported_as_corrupt(tmp_path):
    """A zeroed block in a stored (uncompressed) member reaches the parser as NUL bytes long before zipfile
    checks the CRC at the member's end: the parse error gives way to "corrupt archive"."""
    from xmlthresh.data.ranked_list_format import read_ranked_lists
    from xmlthresh.data.streaming import CorruptArchiveError

    lines = random_lists()
    with zipfile.ZipFile(tmp_path / "stored.zip", "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("lists.txt", lines)
    data = bytearray((tmp_path / "stored.zip").read_bytes())
    data[5000:5400] = bytes(400)
    (tmp_path / "zeroed.zip").write_bytes(bytes(data))
    assert read_ranked_lists(tmp_path / "stored.zip", chunk_size=4096).n_labels == 100
    with pytest.raises(CorruptArchiveError, match=r"zeroed.zip:lists.txt: corrupt or truncated zip archive \("
                                                  r"BadZipFile: Bad CRC-32"):
        read_ranked_lists(tmp_path / "zeroed.zip", chunk_size=4096)
    # the same bytes outside an archive are a plain format error, named by line
    start = data.index(b"0 300 ")
    (tmp_path / "plain.txt").write_bytes(bytes(data[start:start + len(lines)]))
    with pytest.raises(ValueError, match=r"plain.txt line \d+: "):
        read_ranked_lists(tmp_path / "plain.txt")


def test_gzip_lists_read_like_the_plain_file_and_a_truncated_gzip_is_corrupt(tmp_path):
    from xmlthresh.data.ranked_list_format import read_ranked_lists
    from xmlthresh.data.streaming import CorruptArchiveError

    text = "".join(f"{i} 3 1 0 1 0 0 1\n" for i in range(50)).encode()
    (tmp_path / "lists.txt").write_bytes(text)
    packed = gzip.compress(text)
    (tmp_path / "lists.gz").write_bytes(packed)
    (tmp_path / "named.txt").write_bytes(packed)  # gzip by its bytes, whatever its name
    plain = read_ranked_lists(tmp_path / "lists.txt")
    for name in ("lists.gz", "named.txt"):
        assert read_ranked_lists(tmp_path / name).digest() == plain.digest()
    (tmp_path / "cut.gz").write_bytes(packed[: len(packed) // 2])
    with pytest.raises(CorruptArchiveError, match=r"cut.gz: corrupt or truncated gzip file"):
        read_ranked_lists(tmp_path / "cut.gz")


@pytest.mark.parametrize("args, unknown", [
    (["-m", "strategy=domain,independent", "protocol=oracle,holdout"], None),
    (["strategy=glob(*)", "dataset='espgame'"], None),  # Hydra's own sweep syntax and quoting: left to Hydra
    (["--config-dir", "/elsewhere", "strategy=nosuch"], None),  # another search path: left to Hydra
    (["hydra/launcher=joblib", "strategy.n_angles=10"], None),  # not an option group of xmlthresh
    (["+ranker=nosuch"], "ranker"),
    (["++protocol=nosuch"], "protocol"),
    (["-m", "dataset=espgame,nosuch"], "dataset"),
    (["cde_dataset@elsewhere=nosuch"], "cde_dataset"),
])
def test_unknown_option_message(args, unknown):
    """(``group=null`` has a test of its own: Hydra refused it with a traceback.)"""
    from xmlthresh.cli.command_line import unknown_option_message

    message = unknown_option_message(args)
    if unknown is None:
        assert message is None
    else:
        assert message.startswith(f"unknown {unknown} option 'nosuch'; known: ")


def test_hydra_composition_errors_become_one_line():
    """An unknown option that the early check leaves to Hydra (another search path, a preset's defaults)
    still prints as one line with the options listed, without the config search path."""
    from hydra import compose, initialize_config_module

    from xmlthresh.config.compose import register_resolvers
    from xmlthresh.cli.hydra_messages import hydra_message

    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        with pytest.raises(Exception) as caught:
            compose(config_name="config", overrides=["strategy=nosuch"])
    line = hydra_message(caught.value)
    assert line.startswith("In 'config': Could not find 'strategy/nosuch'; Available options in 'strategy': "
                           "coordinate, domain, domain_fast, ")
    assert "\n" not in line and "search path" not in line and "provider=" not in line


def test_a_cache_directory_without_write_permission_is_one_line(tmp_path, monkeypatch):
    from xmlthresh._util.paths import CacheNotWritableError, writable_cache_dir

    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    assert writable_cache_dir() == tmp_path / "cache" and (tmp_path / "cache").is_dir()
    (tmp_path / "cache").chmod(0o555)
    try:
        if os.geteuid() == 0:  # root writes anyway: only the file-in-the-way case can be tested here
            pytest.skip("running as root: permissions do not stop writes")
        with pytest.raises(CacheNotWritableError, match=r"the cache directory .*cache/scores is not writable "
                                                        r"\(Permission denied\); point XMLTHRESH_CACHE"):
            writable_cache_dir(tmp_path / "cache" / "scores")
    finally:
        (tmp_path / "cache").chmod(0o755)


def test_memory_budget_sources(monkeypatch):
    from xmlthresh.validation import InputError, check_size, memory_budget

    monkeypatch.setenv("XMLTHRESH_MAX_MEMORY", "1M")
    assert memory_budget() == (1 << 20, "XMLTHRESH_MAX_MEMORY")
    assert check_size("strategy.n_angles", 21_845, 48, 3) == 21_845  # 21845 * 48 <= 2^20 < 21846 * 48
    with pytest.raises(InputError, match=r"the limit here is strategy.n_angles <= 21,845 "):
        check_size("strategy.n_angles", 21_846, 48, 3)
    with pytest.raises(InputError, match=r"the limit here is strategy.grid <= 103 "):  # 104^2 * 96 <= 2^20
        check_size("strategy.grid", 104, 96, square=True)
    assert check_size("strategy.grid", 103, 96, square=True) == 103
    monkeypatch.setenv("XMLTHRESH_MAX_MEMORY", "lots")
    with pytest.raises(InputError, match="XMLTHRESH_MAX_MEMORY must be a number of bytes"):
        memory_budget()
    monkeypatch.delenv("XMLTHRESH_MAX_MEMORY")
    budget, source = memory_budget()
    if Path("/proc/meminfo").is_file():
        assert source in ("MemAvailable in /proc/meminfo", "the room left under the cgroup's memory.max")
        assert 0 < budget <= os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def test_default_sizes_fit_in_a_modest_budget(monkeypatch):
    """The limits are generous: every shipped default builds with a 4 GB budget."""
    from xmlthresh.datasets import DATASETS
    from xmlthresh.strategies import STRATEGIES

    monkeypatch.setenv("XMLTHRESH_MAX_MEMORY", "4G")
    for name in ("domain_fast", "linearization", "linearization_region", "pcut", "domain"):
        STRATEGIES.build(name, {})
    STRATEGIES.build("linearization", {"search": "grid"})
    STRATEGIES.build("domain", {"refine": "bnb"})
    for name in ("synthetic", "synthetic_large", "synthetic_xmc"):
        DATASETS.build(name, {})


# ---------------------------------------------------------------------------------------------- the document
def render_table(cases: tuple[Case, ...] = CASES) -> str:
    """docs/errors.md: every case of the bad-input lists with the line a user now sees, and the classes."""
    lines = ["# What a user sees for each bad input (issue 17)", "",
             "Generated from `tests/test_user_errors.py` (`python tests/test_user_errors.py` rewrites it); the test",
             "runs every row through the command line and checks that the run exits with code 1 and prints exactly",
             "this one line on stderr, without a traceback (tracebacks stay behind `HYDRA_FULL_ERROR=1`). `<tmp>` is",
             "the directory of the test's files; a line ending in `...` continues with a list that depends on the",
             "installed plugins (or with advice worded by the tracking layer). Memory limits are shown for `XMLTHRESH_MAX_MEMORY=16G`; without it the budget is",
             "the memory available (`MemAvailable` of /proc/meminfo, or the room under a cgroup limit).", ""]
    section = None
    for case in cases:
        if case.section != section:
            section = case.section
            lines += ["", f"## {section}", "", "| input | command line | what the user sees |", "| --- | --- | --- |"]
        env = [f"{key}={value}" for key, value in case.env.items()]
        command = " ".join([*env, "xmlthresh", *case.args]).replace("{tmp}", "<tmp>").replace("|", "\\|")
        message = case.message.replace("|", "\\|")
        lines.append(f"| {case.what} | `{command}` | {message if case.ok else f'`{message}`'} |")
    lines += ["", "## The classes, and the rule that holds at the boundary", "",
              "| class | rule | where it is enforced (and tested) |", "| --- | --- | --- |",
              "| switches read by truthiness | a bool is a bool: the typed schema of the primary config converts "
              "true/false/yes/no/on/off and refuses anything else; group options and the library API accept only "
              "true/false | `xmlthresh/config/schema.py`, `validation.check_bool` (rows above; tests/test_config_schema.py) |",
              "| stores and caches that break for good | a new sqlite store is migrated under a temporary name and "
              "renamed into place; a store MLflow refuses is repaired by `mlflow db upgrade` or kept aside as it was "
              "and replaced, with one line (only MLflow touches its tables); an unreadable numba cache file is dropped and recompiled, an unwritable cache folder replaced "
              "by a temporary one | `tracking/store.py`, `_util/jit.py` (tests/test_tracking_store.py: 10 kill -9 "
              "trials; tests/test_numba_cache.py) |",
              "| entry points outside the contract | the main command, `xmlthresh explain`, `xmlthresh list` and "
              "`python -m xmlthresh.report` print one line and exit 1 for every error of "
              "`_util.errors.user_error_types` (and MLflow's own, in the report); the library raises `InputError` "
              "| `cli/entry.py`, `report/comparison.py` (tests/test_report.py) |",
              "| nonsense accepted as numbers | grids, sizes and counts are checked where they enter (positive, finite, "
              "within the memory budget); score files refuse complex values, repeated label names and declared label "
              "counts beyond the memory budget; DataFrames are matched by column name | `validation.py`, "
              "`data/score_format.py`, `api.align_frames` (tests/test_score_datasets.py, tests/test_api.py) |",
              "| work that does nothing | a sweep with no job, or whose every swept key its task does not read, is "
              "refused before it starts | `run/sweep.idle_sweep_message` (tests/test_sweeps.py) |",
              "| raw errors at the edges | URI schemes and experiment names MLflow would refuse later are refused "
              "when the run starts; `XMLTHRESH_HOME`/`XMLTHRESH_DATA` naming a file and an `OSError` about the place "
              "a run writes to (a name too long, a read-only or full place) are one line | `tracking/store.py`, "
              "`_util/paths.environment_problem`, `_util/places.placement_message` (rows above) |",
              "| label names | one rule wherever names enter (the library, `ScoredSplit`, score files, saved thresholds): "
              "one name per label, 1-D, no repeats, bytes decoded as text; MultiIndex columns are refused; labels are "
              "0/1 in every split | `validation.check_label_names`, `data/scores.ScoredSplit` "
              "(tests/test_bad_inputs_by_class.py) |",
              "| files edited by hand | every field of a saved thresholds file has its JSON type; a pickled object in a "
              "score file is named by its key | `result._check_field_types`, `data/score_format._pickled_message` "
              "(tests/test_bad_inputs_by_class.py) |",
              "| environment variables | each is read by one rule that names it: switches take the bool words, "
              "choices their words, and they are checked before a run starts | `_util/environment.py` "
              "(tests/test_bad_inputs_by_class.py) |",
              "| settings that cannot work | a switch given a number other than 0/1, `group=null`, keys the task does "
              "not read, a joblib launcher with no worker, a study report of an unknown kind, "
              "a non-finite real number (infinity only where it means something) are refused "
              "before any job runs; extras a protocol cannot compute are said and recorded | `config/schema.py`, "
              "`cli/command_line.py`, `run/sweep.sweep_settings_problem`, `_util/typed_params.py` "
              "(tests/test_bad_inputs_by_class.py) |",
              "| places without room | a tracking store or numba cache on a disk without room is one line, or a "
              "temporary cache that is removed at exit; a store replaced while a process had it open is opened anew | "
              "`tracking/store.check_sqlite_file`, `_util/jit.py`, `tracking/mlflow_runs.open_store` "
              "(tests/test_tracking_store.py, tests/test_numba_cache.py) |",
              "| Hydra's and MLflow's edges | a sweep whose jobs would share a folder, a list of options for a group "
              "and a key that the chosen option of a group lacks are refused before any job, naming the options "
              "that have it; a full disk (or a file-size limit) while Hydra writes `.hydra/` or `multirun.yaml` is "
              "one line naming the folder; a run folder used twice gives two MLflow runs (the earlier record is "
              "sent first; a run still running there is refused); a run whose artifacts cannot be stored ends "
              "FAILED with one line and `xmlthresh sync` completes it; a report appears whole or not at all; what "
              "a killed writer left (a `.tmp`, a staging folder, a store creation's journal) goes at the next start "
              "once stale; an empty `hydra.run.dir`/`hydra.sweep.dir`, an interval sweep and a sweep over "
              "`tracking.*` are refused; relative store paths and `XMLTHRESH_*` folders are resolved where the "
              "command started, also under `hydra.job.chdir=true` | `run/sweep.shared_job_folder_problem`, `cli/command_line.py`, `_util/places.py`, "
              "`tracking/record.settle_earlier_record`, `tracking/sync.py`, `_util/files.folder_as_one_unit` "
              "(tests/test_bad_inputs_by_class.py) |",
              "| notices a library user cannot filter | the library's warnings are Python warnings of their own "
              "categories (`xmlthresh.XmlthreshWarning` and its subclasses); the command line logs them as one line "
              "| `_util/notices.py` (tests/test_bad_inputs_by_class.py, tests/test_fresh_bad_inputs.py) |",
              "| values checked only when their job ran | every value a sweep varies is checked before any job: the "
              "first job that has it is composed and its parts built by the registries' checked builders; a glob "
              "that matches no option is a sweep with no job | `run/sweep.swept_value_problem`, "
              "`run/threshold_task.build_parts`, `run/sweep.sweep_values` (tests/test_bad_inputs_by_class.py, "
              "tests/test_sweeps.py) |",
              "| the library's own building blocks | an unknown name is an `InputError` (a `ValueError`) and a "
              "`KeyError`; the public metric functions refuse precision or recall outside [0, 1] or NaN, a bad "
              "beta and impossible counts (the package's own computations use `f_beta_raw`); estimators refuse a "
              "count below one (`count_params`) | `_util/registry.UnknownNameError`, `metrics.py`, "
              "`cde/base.TunedCDE` (tests/test_bad_inputs_by_class.py) |",
              "| what the user typed, read as they meant it | a value Hydra's grammar refuses names the override "
              "and shows it quoted for Hydra; a `~` in a folder variable is the home; a data file that is not the "
              "published one is said once per version of the file (sha256 against its download record) | "
              "`cli/hydra_messages.grammar_message`, `cli/entry.absolute_environment_paths`, "
              "`data/download.check_once` (tests/test_bad_inputs_by_class.py) |",
              "| reports and options that cannot apply | a study report of runs that lack what the study reads "
              "(the transfer study on oracle runs, consistency without a population regret), a hand-edited number "
              "in a result and a folder without results are one line naming what it needs; an interval under "
              "oracle and `figures=[metric_choice]` for another strategy than domain are said; liblinear's option "
              "string is parsed when the ranker is built; a Mulan split without data rows names its file | "
              "`report/studies.write_study_report`, `run/protocols.py`, `report/plots.py`, "
              "`xmlthresh_libmultilabel.rankers.check_options`, `datasets/mulan.build_mulan` "
              "(tests/test_bad_inputs_by_class.py, tests/test_mulan.py) |",
              "| numbers the machine cannot take | a parameter named `seed` or `random_state` is a seed wherever it "
              "is (0 to 2^32 - 1); a worker count is 1 to 1024 or -1, -2, ...; a size that needs more memory than "
              "there is names the large sizes given (a `MemoryError` deep in numpy is one line); a number inside a "
              "list must be finite too; a CDE grid value or `ranker.k` above what the data allow is said; precision and "
              "recall of other shapes are named | `_util/typed_params.py`, "
              "`_util/errors.memory_message`, `cde/base.TunedCDE.capped_counts`, "
              "`validation.check_n_jobs` (tests/test_bad_input_limits.py, tests/test_reports_and_faults_edges.py) |",
              "| data files that are nearly right | text is decoded by its Unicode mark (UTF-16 ARFF reads as its "
              "UTF-8 copy; a ranked list in UTF-16 says so) and a byte that is not UTF-8 is named by line; a folder "
              "where a file belongs, a file where a folder belongs, an infinite feature value and a header declaring "
              "more than memory holds are named; every published file already present is checked once per version; a "
              "gzipped xmlrepo file is read, an ARFF row of the wrong shape says what is wrong, a score file named "
              "without .npz points to it; a cache that cannot be written gives way (a file as `XMLTHRESH_CACHE` is "
              "refused); a sparse ARFF row giving an attribute twice is named and a split dense beside a sparse one "
              "reads; knn's votes do not depend on how the features are stored "
              "| `data/text_encoding.py`, `data/arff.check_finite_columns`, `data/download.ensure_file`, "
              "`datasets/mulan.py`, `datasets/xmlrepo.py` (tests/test_data_file_edges.py) |",
              "| the library below `fit_thresholds` | registries named by something else than text or given "
              "parameters that are not a mapping, a command-line preset given as a strategy (its Python call is "
              "shown), `load_dataset(name=...)`, 1-D vectors to a metric, fractional counts, a score matrix to "
              "`fit_lists` and a `random_state` scikit-learn cannot take are one `InputError`; bounds of a smoothed "
              "or capped objective (or of the fit before pooling) name it; named labels are paired by name everywhere; "
              "the registries find installed plugins whatever was imported first; settings applied to scores are not "
              "reported as ignored; an empty batch predicts nothing; a CSR in rank order fits as its sorted copy; a "
              "result built by hand holds what a fit makes | `_util/registry.py`, `api.py`, "
              "`metrics.py`, `classifier.py`, `__init__.py`, "
              "`result.ThresholdResult.__repr__` (tests/test_api_boundary.py) |",
              "| command lines that reshape the config | a key every swept option has is set in every job; a "
              "group deleted (`~strategy`) or renamed from outside (`strategy.name=`), presets swept, a sweeper's "
              "values unquoted, an interpolation that does not resolve and a single run of a strategy that cannot "
              "fit its data are one line with the fix; so are two presets, `--cfg` with `-m`, a sweeper "
              "parameter without a preset, a mistyped setting (did you mean) and a user's option file that names "
              "nothing or a preset without its package line; a key given twice is said (the last is used, as Hydra "
              "takes it); a number from an environment variable is a number; "
              "flags after the overrides are read, a stray word is named, joblib's backend is checked, a sweep whose "
              "every job was skipped fails saying why; a value a sweep lists twice and a preset's base config shown by "
              "`--cfg` are noted; figures, fallbacks, report metrics and sweep settings in a "
              "single run that do nothing are said | `cli/command_line.py`, `cli/entry.py`, "
              "`cli/hydra_messages.py`, `cli/hydra_app.py`, `run/threshold_task.py`, `strategies/base.py`, `run/sweep.py` "
              "(tests/test_command_line_shapes.py) |",
              "| what reports read and background work does | every report and study reads a job's `result.json` "
              "by one rule (JSON, an object, numbers where numbers belong, F-measures in [0, 1]) and answers in one line, "
              "also on Ctrl-C wherever it lands; a job's array it cannot read is named, and a study refuses jobs of "
              "another data set than its own; "
              "a study of jobs it cannot read is an error, not an empty page; one sweep at a time holds a sweep "
              "folder; what the background syncer repaired is said by the next command; a tracking store that refuses "
              "MLflow's requests is one line keeping the run; `xmlthresh sync` closes the runs of killed sweeps | "
              "`report/result_files.py`, `report/studies.py`, `run/sweep.hold_sweep_folder`, "
              "`tracking/store.announce_store_notices` (tests/test_reports_and_faults_edges.py) |",
              ]
    lines += ["", "## Not in this table", "",
              "- `num_docs` below a label's size on WikiLSHTC (`num_docs=1000`) is the check of the first row, on a",
              "  file of 168 MB.",
              "- Size parameters bounded by the data claim no memory of their own and are not limited: `ranker.k`",
              "  (knn uses at most the training documents; mlknn refuses k above them), `ranker.top_k`,",
              "  `dataset.first_n_labels`, `strategy.t_max` of rcut (at most the labels), `protocol.folds` (at most",
              "  the training documents). The CDE group's sizes are the CDE layer's (its own size caps).",
              "- Concurrency, sweeps and the tracking server (`tracking.uri=http://127.0.0.1:9`, runs left RUNNING,",
              "  the soak test) and `xmlthresh.report.comparison --sweep nosuchid` are tested with the tracking, sweep and",
              "  report modules."]
    return "\n".join(lines) + "\n"


def test_the_documented_table_is_the_table_of_the_test():
    assert DOC.read_text(encoding="utf-8") == render_table(), \
        "docs/errors.md is out of date: run python tests/test_user_errors.py"


if __name__ == "__main__":
    DOC.write_text(render_table(), encoding="utf-8")
    print(f"wrote {DOC}")


def test_a_run_folder_that_cannot_be_made_is_one_line(tmp_path, monkeypatch):
    """A 300-character folder name (and the like: a read-only or full place) was a raw OSError from Hydra,
    which makes the run folder before any job code runs."""
    monkeypatch.setenv("XMLTHRESH_HOME", str(tmp_path))
    long_name = tmp_path / ("d" * 300)
    code, _, err = run_cli([f"hydra.run.dir={long_name}", "tracking.enabled=false", "warm_up=false"])
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert err.strip() == (f"xmlthresh: error: {long_name}: File name too long; a name in that path is longer than "
                           "the file system allows: choose a shorter one (hydra.run.dir, hydra.sweep.dir, "
                           "XMLTHRESH_HOME)"), err
