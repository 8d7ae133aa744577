"""``python -m xmlthresh``: the command line (:func:`xmlthresh.cli.entry.console`)."""

from xmlthresh.cli.entry import console

if __name__ == "__main__":
    console()
