#!/usr/bin/env bash
# The package as users get it: build the wheels (xmlthresh, xmlthresh-peers), install them into a fresh
# virtual environment outside the repository, and from a temporary directory run the default job, ESP Game,
# a two-job sweep, a folder plugin + user option of that directory, `xmlthresh list` / `python -m xmlthresh
# list` and the API smoke test; then uninstall the plugin and check that its options are gone. Each step checks the output (result.json, listings), not only
# the exit code. Fails on the first error, showing that step's log.
#
#   .ci/installed/check.sh            # called by `make test` (after pytest); `make check-installed` alone
#
# PYTHON: interpreter for the fresh venv (default python3); BUILD_PYTHON: one with pip to build the wheels
# (default PYTHON); XMLTHRESH_DATA: real data (the ESP Game step is skipped without berger/ESPGameNN.txt);
# KEEP=1 keeps the temporary directory.
# Speed: pip's cache is reused, and the dependencies' wheels are kept in a wheelhouse outside the repository
# (XMLTHRESH_WHEELHOUSE, default ~/.cache/xmlthresh/wheelhouse): the next run installs them from there
# without asking the package index (~30 s of CPU less); a new or changed dependency is not in it, so that
# run resolves from the index and refreshes the wheelhouse. XMLTHRESH_WHEELHOUSE= (empty) always resolves
# from the index; delete the folder to pick up newer releases of the dependencies.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
# absolute paths: the steps run in the temporary directory
absolute() { local found; found="$(command -v "$1")" || { echo "check-installed: no interpreter $1" >&2; exit 1; }
             [[ "$found" == /* ]] && echo "$found" || echo "$PWD/$found"; }
PYTHON="$(absolute "${PYTHON:-python3}")"
BUILD_PYTHON="$(absolute "${BUILD_PYTHON:-$PYTHON}")"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/xmlthresh-installed.XXXXXX")"
case "$TMP" in "$REPO"/*) echo "check-installed: temporary directory $TMP is inside the repository" >&2; exit 1;; esac
VENV="$TMP/venv" WORK="$TMP/work" LOGS="$TMP/logs"
WHEELHOUSE="${XMLTHRESH_WHEELHOUSE-${XDG_CACHE_HOME:-$HOME/.cache}/xmlthresh/wheelhouse}"
mkdir -p "$WORK" "$LOGS"
cleanup() { if [[ "${KEEP:-0}" == 1 ]]; then echo "check-installed: kept $TMP"; else rm -rf "$TMP"; fi; }
trap cleanup EXIT

START=$SECONDS
STEP_START=$SECONDS
N_STEPS=0

say() { printf 'check-installed: %s\n' "$*"; }
fail() {
    say "FAILED: $*" >&2
    if [[ -n "${LOG:-}" && -s "$LOG" ]]; then
        echo "---- last lines of $LOG" >&2
        tail -n 40 "$LOG" >&2
        echo "----" >&2
    fi
    say "$N_STEPS passed, 1 failed" >&2
    exit 1
}
# step NAME CMD...: run CMD in $WORK with stdout+stderr in $LOGS/NAME.log; $LOG names it for the checks
step() {
    local name="$1"
    shift
    LOG="$LOGS/$name.log"
    if ! (cd "$WORK" && "$@") >"$LOG" 2>&1; then
        fail "$name: '$*' exited non-zero"
    fi
}
begin() { STEP_START=$SECONDS; }
ok() { N_STEPS=$((N_STEPS + 1)); say "ok   $(printf '%-34s' "$1") $((SECONDS - STEP_START)) s${2:+  ($2)}"; }
# pyjson FILE EXPR: evaluate the Python expression EXPR with r = the JSON of FILE (prints what EXPR returns)
pyjson() { "$VENV/bin/python" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
expect() { # expect DESCRIPTION PYTHON-EXPRESSION-ON-r FILE
    local result
    result="$(pyjson "$3" "$2")" || fail "cannot read $3"
    [[ "$result" == True ]] || fail "$1: $2 is $result in $3"
}
grep_log() { grep -q -- "$1" "$LOG" || fail "'$1' not in the output of ${LOG##*/}"; }

# ---------------------------------------------------------------------------------------------- build
# a clean environment: the user's settings and this checkout must not leak into the installed package
unset XMLTHRESH_HOME PYTHONPATH VIRTUAL_ENV
# like a user's environment, the fresh one keeps its bytecode (pip --no-compile saves the install time, the
# first import of each module writes it): every command here is a new process importing numpy, sklearn, ...
unset PYTHONDONTWRITEBYTECODE
export XMLTHRESH_CACHE="$TMP/cache" MPLBACKEND=Agg
say "building wheels from $REPO, installing into $VENV, running in $WORK"
begin
step build "$BUILD_PYTHON" "$HERE/build_wheels.py" "$TMP/wheels" "$REPO"
CORE_WHEEL="$(ls "$TMP"/wheels/xmlthresh-*.whl)" || fail "no xmlthresh wheel"
PEERS_WHEEL="$(ls "$TMP"/wheels/xmlthresh_peers-*.whl)" || fail "no xmlthresh-peers wheel"
ok "build wheels" "$(basename "$CORE_WHEEL"), $(basename "$PEERS_WHEEL")"

begin
step venv "$PYTHON" -m venv "$VENV"
REQUIREMENTS=("$CORE_WHEEL[all]" "$PEERS_WHEEL[xcolumns]")
offline_install() { "$VENV/bin/python" -m pip install --quiet --no-compile --no-index --find-links "$WHEELHOUSE" "${REQUIREMENTS[@]}"; }
if [[ -z "$WHEELHOUSE" ]]; then
    INSTALLED_FROM="dependencies resolved from the package index"
    step install "$VENV/bin/python" -m pip install --quiet --no-compile "${REQUIREMENTS[@]}"
elif (cd "$WORK" && offline_install) >"$LOGS/install.log" 2>&1; then
    INSTALLED_FROM="dependencies from $WHEELHOUSE"
else
    # the first time, or a dependency changed: resolve from the package index like a user's pip does, keep
    # the dependencies' wheels (not ours: they change with every build), install from them
    INSTALLED_FROM="dependencies resolved from the package index into $WHEELHOUSE"
    step wheelhouse "$VENV/bin/python" -m pip wheel --quiet --wheel-dir "$WHEELHOUSE" "${REQUIREMENTS[@]}"
    rm -f "$WHEELHOUSE"/xmlthresh-*.whl "$WHEELHOUSE"/xmlthresh_peers-*.whl
    step install offline_install
fi
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
[[ -f "$SITE/xmlthresh/conf/strategy/domain.yaml" ]] || fail "the installed package has no strategy/domain.yaml"
[[ -f "$SITE/xmlthresh_peers/conf/strategy/xcolumns_fw.yaml" ]] || fail "the installed plugin has no xcolumns_fw.yaml"
ok "fresh venv + install" "$("$VENV/bin/python" -V), $INSTALLED_FROM"
XMLTHRESH="$VENV/bin/xmlthresh"

# ---------------------------------------------------------------------------------------------- the lean core
# pip install xmlthresh (no extra): the library alone, in a venv of its own; the command line names the extra
begin
LEAN="$TMP/lean"
step lean_venv "$PYTHON" -m venv "$LEAN"
if [[ -n "$WHEELHOUSE" ]]; then
    step lean_install "$LEAN/bin/python" -m pip install --quiet --no-compile --no-index --find-links "$WHEELHOUSE" \
        "$CORE_WHEEL"
else
    step lean_install "$LEAN/bin/python" -m pip install --quiet --no-compile "$CORE_WHEEL"
fi
N_LEAN="$("$LEAN/bin/python" -m pip list --format=freeze 2>/dev/null | grep -cvE '^(pip|setuptools|wheel)==')"
[[ "$N_LEAN" -le 15 ]] || fail "the lean install has $N_LEAN packages, more than 15"
step lean_api "$LEAN/bin/python" "$HERE/api_smoke.py" --lean
grep_log "api smoke: ok"
LOG="$LOGS/lean_cli.log"
if (cd "$WORK" && "$LEAN/bin/xmlthresh") >"$LOG" 2>&1; then fail "xmlthresh ran without the framework"; fi
grep_log 'xmlthresh: error: xmlthresh needs hydra-core (module hydra), part of the framework'
[[ "$(wc -l <"$LOG")" -eq 1 ]] || fail "the lean command line says more than one line"
ok "lean install (library only)" "$N_LEAN packages with xmlthresh; the command line names xmlthresh[bench]"

# ---------------------------------------------------------------------------------------------- runs
begin
step default_job "$XMLTHRESH"
grep_log "F-macro"
grep_log "certified"
mapfile -t RESULTS < <(find "$WORK/runs" -mindepth 3 -maxdepth 3 -name result.json)
[[ ${#RESULTS[@]} == 1 ]] || fail "default job: expected one runs/<date>/<time>/result.json in $WORK, found ${#RESULTS[@]}"
expect "default job" "r['strategy'] == 'domain' and r['dataset'] == 'synthetic'" "${RESULTS[0]}"
expect "default job" "0 < r['f_macro'] <= 1 and r['lower_bound'] <= r['f_macro'] <= r['upper_bound'] + 1e-12" "${RESULTS[0]}"
[[ -s "$(dirname "${RESULTS[0]}")/thresholds.csv" ]] || fail "default job wrote no thresholds.csv"
grep_log "sending in the background"
[[ ! -e "$SITE/runs" ]] || fail "outputs went into site-packages ($SITE/runs)"
ok "xmlthresh (default job)" "F-macro $(pyjson "${RESULTS[0]}" "r['f_macro']"), outputs in ./runs/"

# the default job's record went to MLflow from the installed background syncer; `sync --wait` waits for it
begin
step sync "$XMLTHRESH" sync --wait
grep_log "0 not sent"
[[ -s "$WORK/runs/mlflow.db" ]] || fail "default job: no MLflow store in ./runs/mlflow.db"
expect "default job in MLflow" "bool(r['mlflow_run_id'])" "${RESULTS[0]}"
(cd "$WORK" && "$VENV/bin/python" - "${RESULTS[0]}" <<'PY') || fail "the default job's MLflow run is missing or not FINISHED"
import json, sys
import mlflow
run_id = json.load(open(sys.argv[1]))["mlflow_run_id"]
run = mlflow.MlflowClient("sqlite:///runs/mlflow.db").get_run(run_id)
assert run.info.status == "FINISHED" and run.data.metrics["f_macro"] > 0, run.info
PY
ok "xmlthresh sync --wait" "run $(pyjson "${RESULTS[0]}" "r['mlflow_run_id'][:8]") FINISHED in ./runs/mlflow.db"

begin
step ui "$XMLTHRESH" ui --dry-run --port 5123
grep_log "mlflow server --backend-store-uri sqlite:///$WORK/runs/mlflow.db --host 127.0.0.1 --port 5123"
ok "xmlthresh ui --dry-run" "MLflow's server on ./runs/mlflow.db, 127.0.0.1"

if [[ -f "${XMLTHRESH_DATA:-/nonexistent}/berger/ESPGameNN.txt" ]]; then
    begin
    step espgame "$XMLTHRESH" strategy=domain dataset=espgame tracking.enabled=false hydra.run.dir=runs/espgame
    grep_log "F-macro"
    expect "espgame" "abs(r['f_macro'] - 0.5685122) < 1e-6 and r['n_labels'] == 268 and r['n_docs'] == 2080" \
        "$WORK/runs/espgame/result.json"
    ok "xmlthresh strategy=domain dataset=espgame" "F-macro $(pyjson "$WORK/runs/espgame/result.json" "round(r['f_macro'], 7)")"
else
    say "skip ESP Game: XMLTHRESH_DATA does not hold berger/ESPGameNN.txt"
fi

begin
step multirun "$XMLTHRESH" -m strategy=domain,independent dataset=example
mapfile -t SWEEP < <(find "$WORK/runs/multirun" -name result.json | sort)
[[ ${#SWEEP[@]} == 2 ]] || fail "multirun: expected 2 result.json under ./runs/multirun, found ${#SWEEP[@]}"
for result in "${SWEEP[@]}"; do
    expect "multirun" "r['dataset'] == 'example' and r['strategy'] in ('domain', 'independent') and 0 < r['f_macro'] <= 1" "$result"
done
[[ "$(for r in "${SWEEP[@]}"; do pyjson "$r" "r['strategy']"; done | sort | tr '\n' ' ')" == "domain independent " ]] \
    || fail "multirun: the two jobs are not domain and independent"
ok "xmlthresh -m (2 jobs)" "result.json of domain and independent"

# the project root of an installed package is the current directory: its conf/ and plugins/ are picked up
begin
mkdir -p "$WORK/plugins/my_lists/conf/dataset" "$WORK/conf/dataset"
cat >"$WORK/plugins/my_lists/__init__.py" <<'PLUGIN'
"""A folder plugin of the project: three labels over five documents as a data set (dataset=my_lists)."""
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.registry import DATASETS


@DATASETS.register("my_lists")
class MyLists(Dataset):
    def __init__(self, name: str = "my_lists", include_predict_all: bool = True, first_n_labels: int | None = None):
        super().__init__(name=name, include_predict_all=include_predict_all, first_n_labels=first_n_labels)

    def _load(self) -> RankedLists:
        return RankedLists.from_relevance_lists([[1, 0, 1, 0, 0], [0, 1, 1, 0, 1], [1, 1, 0, 0, 0]], [2, 3, 2],
                                                num_docs=5, include_predict_all=self.include_predict_all,
                                                name=self.name)
PLUGIN
printf 'loader: my_lists\nname: my_lists\ninclude_predict_all: true\nfirst_n_labels: null\n' \
    >"$WORK/plugins/my_lists/conf/dataset/my_lists.yaml"
printf 'loader: counterexample\nname: my_counterexample\ninclude_predict_all: true\nfirst_n_labels: null\n' \
    >"$WORK/conf/dataset/my_counterexample.yaml"
step project_root "$XMLTHRESH" dataset=my_counterexample tracking.enabled=false plots=false hydra.run.dir=runs/project
expect "project root" "r['n_labels'] == 2 and abs(r['f_macro'] - 0.7895) < 1e-4" "$WORK/runs/project/result.json"
step folder_plugin "$XMLTHRESH" dataset=my_lists tracking.enabled=false plots=false hydra.run.dir=runs/folder_plugin
expect "folder plugin" "r['n_labels'] == 3 and 0 < r['f_macro'] <= 1" "$WORK/runs/folder_plugin/result.json"
step explain "$XMLTHRESH" explain dataset=counterexample --start 4,1
grep -q "0.7895" "$LOG" || fail "xmlthresh explain dataset=counterexample: the optimum 0.7895 is not printed"
ok "./conf + ./plugins of the project" "option conf/dataset/my_counterexample.yaml, folder plugin plugins/my_lists, explain"

begin
step list "$XMLTHRESH" list
for word in "domain" "xcolumns_fw" "xcolumns_bca" "sklearn_tuned" "espgame" "option folders"; do grep_log "$word"; done
grep -Eq "peers +entry point of xmlthresh-peers" "$LOG" || fail "xmlthresh list: the peers plugin is not listed"
step list_check "$XMLTHRESH" list --check
grep -Eq "peers +entry point of xmlthresh-peers: loaded" "$LOG" || fail "xmlthresh list --check: the peers plugin is not loaded"
grep -Eq "strategy xcolumns_fw +xmlthresh_peers.xcolumns_fw" "$LOG" || fail "xmlthresh list --check: xcolumns_fw not registered"
step list "$XMLTHRESH" list
grep -q "$SITE/xmlthresh_peers/conf" "$LOG" || fail "xmlthresh list: the plugin's option folder is not $SITE/xmlthresh_peers/conf"
cp "$LOG" "$LOGS/list.script"
step list_module "$VENV/bin/python" -m xmlthresh list
cmp -s "$LOGS/list.script" "$LOG" || fail "'python -m xmlthresh list' differs from 'xmlthresh list'"
ok "xmlthresh list = python -m xmlthresh list"

begin
step api "$VENV/bin/python" "$HERE/api_smoke.py"
grep_log "api smoke: ok"
ok "API smoke test" "$(tail -n 1 "$LOG")"

begin
step peer_option "$XMLTHRESH" strategy=xcolumns_fw --cfg job
grep_log "name: xcolumns_fw"
ok "plugin option composes"

# ---------------------------------------------------------------------------------------------- uninstall
begin
step uninstall "$VENV/bin/python" -m pip uninstall --quiet --yes xmlthresh-peers
LOG="$LOGS/peer_gone.log"
if (cd "$WORK" && "$XMLTHRESH" strategy=xcolumns_fw tracking.enabled=false) >"$LOG" 2>&1; then
    fail "strategy=xcolumns_fw still runs after uninstalling xmlthresh-peers"
fi
grep_log "unknown strategy option 'xcolumns_fw'"
# the one-line error's list of the known options (checked before Hydra composes)
AVAILABLE="$(sed -n "s/.*unknown strategy option 'xcolumns_fw'; known: //p" "$LOG")"
[[ "$AVAILABLE" == *scut* && "$AVAILABLE" == *domain* ]] || fail "the built-in strategies are no longer listed"
[[ "$AVAILABLE" != *xcolumns* && "$AVAILABLE" != *sklearn_tuned* ]] || fail "the plugin's options are still listed"
ok "uninstalled plugin: options gone" "strategy=xcolumns_fw unknown, the built-in options listed"

say "the installed package works: all checks passed in $((SECONDS - START)) s"
say "$N_STEPS passed, 0 failed"
