"""Plugin discovery: a folder plugin, an entry-point plugin, and a broken one that must not crash."""

from __future__ import annotations

import subprocess
import sys

from xmlthresh.config import plugins
from xmlthresh.datasets import DATASETS


FOLDER_PLUGIN = """
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.registry import DATASETS


@DATASETS.register("folder_plugin_lists")
class FolderPluginLists(Dataset):
    def _load(self):
        return RankedLists.from_relevance_lists([[1, 0, 1], [0, 1, 1]], [2, 2], num_docs=3, name=self.name)
"""


def test_folder_plugin_registers_and_ships_its_config(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "plugins" / "folder_plugin_demo" / "conf" / "dataset").mkdir(parents=True)
    (home / "plugins" / "folder_plugin_demo" / "__init__.py").write_text(FOLDER_PLUGIN)
    (home / "plugins" / "folder_plugin_demo" / "conf" / "dataset" / "folder_plugin_lists.yaml").write_text(
        "loader: folder_plugin_lists\nname: folder_plugin_lists\n")
    monkeypatch.setenv("XMLTHRESH_HOME", str(home))
    monkeypatch.setattr(sys, "path", list(sys.path))  # the folder joined to it is dropped afterwards
    status = plugins.load_plugins()
    assert status["folder_plugin_demo"].loaded, status["folder_plugin_demo"].error
    lists = DATASETS.get("folder_plugin_lists")().load()
    assert lists.n_labels == 2 and lists.num_docs == 3
    from xmlthresh._util.paths import config_search_dirs

    assert any(d.parts[-2:] == ("folder_plugin_demo", "conf") for d in config_search_dirs())


def _fake_distribution(root, module_name: str, body: str):
    """An installed distribution (dist-info with an entry point) plus its module, on sys.path."""
    (root / f"{module_name}.py").write_text(body)
    info = root / f"{module_name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module_name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[xmlthresh.plugins]\n{module_name} = {module_name}\n")


def test_entry_point_plugin_is_imported(tmp_path, monkeypatch):
    body = (
        "from xmlthresh.datasets.registry import DATASETS\n"
        "from xmlthresh.datasets.synthetic import SyntheticRankedLists\n"
        "@DATASETS.register('ep_synthetic')\n"
        "class EpSynthetic(SyntheticRankedLists):\n    pass\n"
    )
    _fake_distribution(tmp_path, "xmlthresh_ep_example", body)
    monkeypatch.syspath_prepend(str(tmp_path))
    status = plugins.load_plugins()
    assert status["xmlthresh_ep_example"].loaded
    assert "entry point" in status["xmlthresh_ep_example"].source
    assert "ep_synthetic" in DATASETS


def test_broken_plugin_is_listed_as_unavailable_not_fatal(tmp_path, monkeypatch):
    _fake_distribution(tmp_path, "xmlthresh_broken_example", "import not_a_real_module_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    status = plugins.load_plugins()
    assert not status["xmlthresh_broken_example"].loaded
    assert "ModuleNotFoundError" in status["xmlthresh_broken_example"].error
    assert "UNAVAILABLE" in plugins.describe()
    assert "UNAVAILABLE" in plugins.describe(check=True)


def test_list_command_shows_registries_and_plugins():
    proc = subprocess.run([sys.executable, "-m", "xmlthresh", "list"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "strategy:" in proc.stdout and "domain" in proc.stdout and "counterexample" in proc.stdout
    folders = proc.stdout.split("option folders", 1)[1].splitlines()[1:]
    assert folders[0].strip().endswith("xmlthresh/conf")  # the package's own options come first
    assert any(line.strip().endswith("xmlthresh_peers/conf") for line in folders)  # an installed plugin's


def test_list_is_read_from_the_option_folders_and_imports_nothing_heavy():
    """``xmlthresh list`` names what users type (espgame, corel5k, transfer/domain_floor) with one line each,
    and imports neither numba, scikit-learn, mlflow, pandas nor any plugin; ``--check`` imports them."""
    script = ("import sys\nsys.argv = ['xmlthresh', 'list']\nfrom xmlthresh.cli.entry import main\nmain()\n"
              "heavy = [m for m in ('numba', 'sklearn', 'mlflow', 'pandas', 'matplotlib', 'xmlthresh_peers',"
              " 'xmlthresh.strategies') if m in sys.modules]\nprint('HEAVY', heavy)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stdout
    for name in ("espgame", "corel5k", "wikilshtc", "transfer/domain_floor", "br_logreg", "crossfit", "nnkcde"):
        assert f"  {name} " in proc.stdout
    assert "ESP Game test set" in proc.stdout  # the option's description
    checked = subprocess.run([sys.executable, "-m", "xmlthresh", "list", "--check"], capture_output=True, text=True,
                             timeout=120)
    assert checked.returncode == 0, checked.stderr
    assert "registered classes" in checked.stdout and "strategy domain" in checked.stdout


def test_help_names_the_project_every_group_and_examples_without_importing_hydra():
    script = ("import sys\nsys.argv = ['xmlthresh', '--help']\nfrom xmlthresh.cli.entry import main\nmain()\n"
              "heavy = [m for m in ('hydra', 'numba', 'sklearn', 'mlflow', 'pandas', 'scipy') if m in sys.modules]\n"
              "print('HEAVY', heavy)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("xmlthresh: find, certify and benchmark") and "HEAVY []" in proc.stdout
    from xmlthresh.config.options import GROUPS, options

    for group in GROUPS:
        assert f"\n{group}:\n" in proc.stdout
        assert all(f"  {option.name} " in proc.stdout or f"  {option.name}\n" in proc.stdout
                   for option in options(group))
    assert proc.stdout.count("\n  xmlthresh") == 3  # three example commands
