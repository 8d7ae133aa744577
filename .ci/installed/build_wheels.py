"""Build the wheels users get - xmlthresh and the xmlthresh-peers plugin - from a clean copy of the tree.

    python .ci/installed/build_wheels.py OUT_DIR [SOURCE_ROOT]

Why a copy: pip builds in the source tree, and setuptools never empties ``build/lib``, so a file moved or
deleted since the last build would still be shipped from there. The copy leaves out what is not part of
the project (version control, virtual environments, build output, run outputs, caches). Prints the paths
of the wheels, one per line; exits non-zero (with pip's message) when a build fails.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: what a clean checkout does not hold (and must never end up in a wheel)
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "runs", "*.egg-info", "__pycache__",
                                    ".pytest_cache", ".hypothesis", "*.pyc")
#: the distributions of the repository, relative to its root
DISTRIBUTIONS = (".", "plugins/xmlthresh-peers")


def build_wheels(out_dir: Path, source_root: Path) -> list[Path]:
    """Build every distribution of ``source_root`` into ``out_dir``; returns the wheel files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="xmlthresh-src-") as tmp:
        source = Path(tmp) / "src"
        shutil.copytree(source_root, source, ignore=NOT_SOURCE, symlinks=True)
        command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out_dir),
                   *(str(source / dist) for dist in DISTRIBUTIONS)]
        subprocess.run(command, check=True)
    return sorted(out_dir.glob("*.whl"))


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    root = Path(argv[1]) if len(argv) == 2 else Path(__file__).resolve().parents[2]
    try:
        wheels = build_wheels(Path(argv[0]).resolve(), root.resolve())
    except subprocess.CalledProcessError as exc:
        print(f"build_wheels: pip wheel failed with exit code {exc.returncode}", file=sys.stderr)
        return 1
    print("\n".join(str(w) for w in wheels))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
