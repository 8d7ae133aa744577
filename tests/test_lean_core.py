"""The lean core: without the framework extra the library works and every entry point that needs the
framework says in one line which pip command adds it (check-installed does the same from the wheel, in a venv
of the library's own dependencies)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

#: runs ``body`` in a fresh interpreter where the framework's modules cannot be imported, as in the lean install
WITHOUT_FRAMEWORK = textwrap.dedent("""
    import sys
    for name in ("hydra", "omegaconf", "mlflow", "pandas", "matplotlib", "plotly", "arff", "skmultilearn"):
        sys.modules[name] = None  # import then raises ModuleNotFoundError, as when it is not installed
""")


def _without_framework(body: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_FRAMEWORK + textwrap.dedent(body), *args],
                          capture_output=True, text=True, timeout=300)


def test_the_library_works_without_the_framework_and_load_dataset_names_the_extra():
    proc = _without_framework("""
        import numpy as np
        import xmlthresh
        rng = np.random.default_rng(0)
        scores = rng.random((80, 4))
        labels = rng.random((80, 4)) < scores * 0.6
        labels[0] = True
        result = xmlthresh.fit_thresholds(scores, labels)
        assert result.lower_bound <= result.f_macro <= result.upper_bound
        try:
            xmlthresh.load_dataset("espgame")
        except ImportError as exc:
            print(type(exc).__name__, exc)
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ('MissingExtraError load_dataset needs hydra-core (module hydra), part of the '
                                   'framework that the lean install leaves out: pip install "xmlthresh[bench]"')


@pytest.mark.parametrize("args, command", [((), "xmlthresh"), (("explain", "dataset=counterexample"), "xmlthresh explain")])
def test_the_command_line_without_the_framework_is_one_line_naming_the_extra(args, command):
    proc = _without_framework("""
        sys.argv = ["xmlthresh", *sys.argv[1:]]
        from xmlthresh.cli.entry import console
        console()
    """, *args)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f'xmlthresh: error: {command} needs hydra-core (module hydra), part of the framework that the lean '
        'install leaves out: pip install "xmlthresh[bench]"']


@pytest.mark.fast
def test_only_framework_modules_are_reported_as_a_missing_extra():
    from xmlthresh._util.extras import missing_extra

    assert missing_extra(ModuleNotFoundError("no", name="mlflow.tracking"), "tracking").startswith(
        "tracking needs mlflow (module mlflow)")
    assert missing_extra(ModuleNotFoundError("no", name="numpy")) is None  # a dependency of the core: a real bug
    assert missing_extra(ValueError("x")) is None
