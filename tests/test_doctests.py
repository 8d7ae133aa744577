"""The examples in the public API's docstrings run and print what they say (numpydoc ``Examples``)."""

from __future__ import annotations

import doctest

import pytest

import xmlthresh.api


@pytest.mark.parametrize("module", [xmlthresh.api], ids=lambda module: module.__name__)
def test_the_docstring_examples_run(module):
    failures, tried = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried > 0 and failures == 0
