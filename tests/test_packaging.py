"""The wheels users install hold every option: xmlthresh's wheel has each ``xmlthresh/conf/**/*.yaml`` of
the source tree, the xmlthresh-peers wheel its own strategy YAMLs and its entry point, so "the wheel has no
option groups" cannot come back unnoticed. The wheels are built as ``.ci/installed/check.sh`` builds them
(from a clean copy of the tree, with pip)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILD_WHEELS = ROOT / ".ci" / "installed" / "build_wheels.py"
PEERS = ROOT / "plugins" / "xmlthresh-peers"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, zipfile.ZipFile]:
    out = tmp_path_factory.mktemp("wheels")
    proc = subprocess.run([sys.executable, str(BUILD_WHEELS), str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    built = {path.name.split("-")[0]: zipfile.ZipFile(path) for path in map(Path, proc.stdout.split())}
    assert set(built) == {"xmlthresh", "xmlthresh_peers"}, proc.stdout
    return built


def yaml_files(root: Path, package: str) -> set[str]:
    """Wheel member names of every YAML below ``root/package/conf``."""
    return {p.relative_to(root).as_posix() for p in (root / package / "conf").rglob("*.yaml")}


def test_core_wheel_holds_every_option_group_of_the_source_tree(wheels):
    members = set(wheels["xmlthresh"].namelist())
    expected = yaml_files(ROOT, "xmlthresh")
    groups = {Path(name).parent.name for name in expected if name.count("/") >= 3}
    assert {"strategy", "dataset", "ranker", "estimator", "cde_dataset", "experiment"} <= groups
    assert "xmlthresh/conf/config.yaml" in expected
    missing = sorted(expected - members)
    assert not missing, f"not in the wheel: {missing}"
    shipped = {name for name in members if name.endswith(".yaml")}
    assert shipped == expected, f"in the wheel but not in the source tree: {sorted(shipped - expected)}"


def test_peers_wheel_holds_its_strategy_options_and_entry_point(wheels):
    wheel = wheels["xmlthresh_peers"]
    expected = yaml_files(PEERS, "xmlthresh_peers")
    assert {"xmlthresh_peers/conf/strategy/xcolumns_fw.yaml", "xmlthresh_peers/conf/strategy/xcolumns_bca.yaml",
            "xmlthresh_peers/conf/strategy/sklearn_tuned.yaml"} <= expected
    assert {name for name in wheel.namelist() if name.endswith(".yaml")} == expected
    entry_points = next(name for name in wheel.namelist() if name.endswith(".dist-info/entry_points.txt"))
    text = wheel.read(entry_points).decode()
    assert "[xmlthresh.plugins]" in text and "peers = xmlthresh_peers" in text
