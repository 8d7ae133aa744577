"""``python -m xmlthresh``: the command line (:func:`xmlthresh.cli.console`)."""

from .cli import console

if __name__ == "__main__":
    console()
