"""``python -m xmlthresh.report``: the comparison report of tracked runs (:func:`xmlthresh.report.comparison.main`)."""

import sys

from xmlthresh.report.comparison import PROG, main
from xmlthresh.report.interrupt import end_at_interrupt

if __name__ == "__main__":
    end_at_interrupt(PROG)
    sys.exit(main())
