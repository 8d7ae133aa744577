"""What the lean install leaves out, and the one line that says how to add it.

``pip install xmlthresh`` installs what the library needs (numpy, scipy, numba, scikit-learn):
:func:`xmlthresh.fit_thresholds`, every strategy, :class:`xmlthresh.ThresholdClassifier`, saving and loading
thresholds. The framework -- the command line (Hydra), tracking (MLflow), pictures and report pages
(matplotlib, plotly), the data readers (pandas, liac-arff) and the multi-label rankers (scikit-multilearn) --
is the extra ``xmlthresh[bench]`` (``xmlthresh[all]``: every extra). A feature that needs a module the install
lacks raises :class:`MissingExtraError`, and every entry point shows it as one line naming the pip command.
"""

from __future__ import annotations

from xmlthresh._util.errors import UserFacingError

#: the command that adds the framework
INSTALL_FRAMEWORK = 'pip install "xmlthresh[bench]"'
#: top-level modules of the framework extra (distribution in parentheses where its name differs)
FRAMEWORK_MODULES = {
    "hydra": "hydra-core", "omegaconf": "hydra-core", "yaml": "PyYAML", "hydra_plugins": "hydra launchers",
    "mlflow": "mlflow", "pandas": "pandas", "matplotlib": "matplotlib", "plotly": "plotly", "tqdm": "tqdm",
    "arff": "liac-arff", "skmultilearn": "scikit-multilearn-ng", "filelock": "filelock", "submitit": "submitit",
}


class MissingExtraError(UserFacingError, ImportError):
    """A feature needs a module of an extra that is not installed (the message names the pip command)."""


def missing_extra(exc: BaseException, feature: str = "this") -> str | None:
    """The one line for a ``ModuleNotFoundError`` of a framework module, or None for any other exception."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.split(".")[0]
    if top not in FRAMEWORK_MODULES:
        return None
    return (f"{feature} needs {FRAMEWORK_MODULES[top]} (module {top}), part of the framework that the lean install "
            f"leaves out: {INSTALL_FRAMEWORK}")


def framework_required(exc: ModuleNotFoundError, feature: str) -> MissingExtraError | ModuleNotFoundError:
    """``exc`` as a :class:`MissingExtraError` when a framework module is missing, else ``exc`` itself."""
    message = missing_extra(exc, feature)
    return exc if message is None else MissingExtraError(message)
