"""``python -m xmlthresh.report``: the comparison report of tracked runs (:func:`xmlthresh.report.comparison.main`)."""

import sys

from xmlthresh.report.comparison import main

if __name__ == "__main__":
    sys.exit(main())
