"""What a thresholds run writes: thresholds.csv in pandas' to_csv format, without importing pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from xmlthresh.strategies.fitted import FittedRule
from xmlthresh.run.threshold_task import thresholds_csv

FLOATS = st.one_of(st.floats(allow_nan=False), st.sampled_from([np.inf, -np.inf, 0.1, 1e-5, 0.30000000000000004]))
NAMES = st.one_of(st.integers(-10**6, 10**6), st.text(alphabet='ab ,"\\x\'c\n', min_size=1, max_size=5))


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_thresholds_csv_is_what_pandas_wrote(data):
    n = data.draw(st.integers(1, 6))
    names = np.array(data.draw(st.lists(NAMES, min_size=n, max_size=n)), dtype=object)
    names = names.astype(np.int64) if all(isinstance(x, int) for x in names) else names.astype(str)
    cuts = np.array(data.draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n)), dtype=np.int64)
    thresholds = np.array(data.draw(st.lists(FLOATS, min_size=n, max_size=n)), dtype=np.float64)
    kept = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    with_cuts, with_thresholds = data.draw(st.booleans()), data.draw(st.booleans())
    fitted = FittedRule("s", "deterministic", 1.0, {"f_macro": 0.0}, kept, cuts=cuts if with_cuts else None,
                        score_thresholds=thresholds if with_thresholds else None)
    table = {"label_id": names}
    if with_cuts:
        table["cut"] = cuts
    if with_thresholds:
        table["score_threshold"] = thresholds
    table["excluded"] = ~kept
    assert thresholds_csv(fitted, names) == pd.DataFrame(table).to_csv(index=False)
