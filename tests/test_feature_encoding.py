"""The feature encoding of ARFF attributes (one-hot nominal attributes, imputation fitted on the training rows),
dense and sparse, and the exact design matrices of real Mulan and HMC data sets."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from helpers import data_dir_with, no_data

from xmlthresh.data.arff import parse_arff
from xmlthresh.data.feature_encoding import FeatureEncoder, positive_value

HEADER = """@relation toy
@attribute num numeric
@attribute color {red,green,blue}
@attribute flag {YES,NO}
@attribute bit {0,1}
@data
"""
TRAIN = HEADER + "1.0,red,YES,1\n?,green,NO,0\n3.0,?,YES,?\n5.0,green,?,1\n"
TEST = HEADER + "?,blue,NO,0\n2.0,?,?,?\n"
TRAIN_SPARSE = HEADER + "{0 1.0,3 1}\n{0 ?,1 green,2 NO}\n{0 3.0,1 ?,3 ?}\n{0 5.0,1 green,2 ?,3 1}\n"
TEST_SPARSE = HEADER + "{0 ?,1 blue,2 NO}\n{0 2.0,1 ?,2 ?,3 ?}\n"
# num: mean 3 of the train rows; color: green (2 of 3); flag: YES (2 of 3); bit: 1 (2 of 3)
X_TRAIN = [[1, 1, 0, 0, 1, 1], [3, 0, 1, 0, 0, 0], [3, 0, 1, 0, 1, 1], [5, 0, 1, 0, 1, 1]]
X_TEST = [[3, 0, 0, 1, 0, 0], [2, 0, 1, 0, 1, 1]]
FEATURES = ["num", "color=red", "color=green", "color=blue", "flag=YES", "bit"]


def test_one_hot_nominals_and_imputation_from_the_training_rows():
    train, test = parse_arff(TRAIN), parse_arff(TEST)
    encoder = FeatureEncoder(train.attributes).fit(train.values)
    assert encoder.feature_names_.tolist() == FEATURES
    out = encoder.transform(train.values)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, X_TRAIN)
    np.testing.assert_array_equal(encoder.transform(test.values), X_TEST)
    assert encoder.n_all_missing_ == 0


def test_sparse_input_gives_the_same_numbers_as_csr():
    train, test = parse_arff(TRAIN_SPARSE), parse_arff(TEST_SPARSE)
    encoder = FeatureEncoder(train.attributes).fit(train.values)
    out = encoder.transform(train.values)
    assert sp.isspmatrix_csr(out) and out.dtype == np.float64 and out.has_sorted_indices
    assert not np.any(out.data == 0)  # imputed zeros are not stored
    np.testing.assert_array_equal(out.toarray(), X_TRAIN)
    np.testing.assert_array_equal(encoder.transform(test.values).toarray(), X_TEST)


def test_ties_go_to_the_first_declared_value_and_unseen_values_keep_their_column():
    text = "@relation r\n@attribute c {a,b,c}\n@attribute y {no,yes}\n@attribute x numeric\n@data\n"
    train = parse_arff(text + "b,yes,?\na,no,?\n?,?,?\n")
    encoder = FeatureEncoder(train.attributes).fit(train.values)
    assert encoder.feature_names_.tolist() == ["c=a", "c=b", "c=c", "y=yes", "x"]
    np.testing.assert_array_equal(encoder.transform(train.values), [[0, 1, 0, 1, 0], [1, 0, 0, 0, 0], [1, 0, 0, 0, 0]])
    np.testing.assert_array_equal(encoder.transform(parse_arff(text + "c,no,4\n").values), [[0, 0, 1, 0, 4]])
    assert encoder.n_all_missing_ == 1  # x: every training value is missing (imputed with 0)


def test_positive_value_of_two_valued_attributes():
    table = parse_arff("@relation r\n@attribute a {1,0}\n@attribute b {NO,YES}\n@attribute c {t,f}\n"
                       "@attribute d {u,v}\n@data\n")
    assert [positive_value(a) for a in table.attributes] == [0, 1, 0, 1]


def test_text_attributes_cannot_be_features():
    table = parse_arff("@relation r\n@attribute s string\n@data\nx\n")
    with pytest.raises(ValueError, match=r"\['s'\] are not numeric or nominal"):
        FeatureEncoder(table.attributes)


# -------------------------------------------------------------------------------------------- real data
# (data set, split): (rows, features, non-zero entries, sum, label entries, sha256 prefix of the dense
# C-ordered float64 bytes) with validation_fraction=0 -- measured with the former hand-written encoder, except
# the digests of hmc_cellcycle_GO: its imputed means now come from SimpleImputer (numpy's pairwise summation
# instead of a running sum), which moves them by at most 1.7e-16 and closer to the exact mean in 63 of the 71
# columns that differ; every other matrix is bit-identical to the former encoder's
REAL_ENCODED = {
    ('flags', 'train'): (129, 43, 1149, 111516.0, 441, '36cacec51e0fce30'),
    ('flags', 'test'): (65, 43, 560, 31164.0, 217, '3a215989fb12256a'),
    ('birds', 'train'): (322, 271, 51408, 1558094.604009, 341, 'fd6ef4dd3a9d0049'),
    ('birds', 'test'): (323, 271, 51543, 1551062.282698, 313, '22e0bffee2a7be39'),
    ('genbase', 'train'): (463, 1185, 1161, 1161.0, 584, '4f3afd028485634b'),
    ('genbase', 'test'): (199, 1185, 517, 517.0, 245, 'dab830842316f7c7'),
    ('foodtruck', 'train'): (302, 31, 5874, 22514.5, 700, '73e2395046b89024'),
    ('foodtruck', 'test'): (105, 31, 2025, 8001.0, 232, 'c32aab99e0f62a07'),
    ('cal500', 'train'): (370, 68, 25160, -12980.917476, 9686, 'e65953d06640115b'),
    ('cal500', 'test'): (132, 68, 8924, -4531.76895, 3388, 'ddbdd79d625187c4'),
    ('emotions', 'train'): (391, 72, 28059, 77550.03357, 709, '0c66c1cc63125825'),
    ('emotions', 'test'): (202, 72, 14497, 41501.568601, 399, '2c6972e153639e03'),
    ('corel5k', 'train'): (4500, 499, 36794, 36794.0, 15847, '733b3c8565d7fd0a'),
    ('corel5k', 'test'): (500, 499, 4557, 4557.0, 1763, 'c26d0e5f1464fb08'),
    ('medical', 'train'): (333, 1449, 4410, 4410.0, 418, '742095ea9862a8a7'),
    ('medical', 'test'): (645, 1449, 8691, 8691.0, 800, 'bf5d38b50fb1739d'),
    ('yeast', 'train'): (1500, 103, 154500, -3.1967840000000116, 6342, '6ca7965d6bcc37b2'),
    ('yeast', 'test'): (917, 103, 94450, 18.569867000000002, 3899, '5041a8ad4861fbbc'),
    ('scene', 'train'): (1211, 294, 351805, 109279.075549, 1286, 'd5c143589695d69d'),
    ('scene', 'test'): (1196, 294, 347724, 108869.604604, 1299, 'e8347f79318a188c'),
    ('enron', 'train'): (1123, 1001, 94535, 94535.0, 3803, 'f08917d489240ad3'),
    ('enron', 'test'): (579, 1001, 48555, 48555.0, 1947, '0b5f212bf0bfd368'),
    ('hmc_cellcycle_GO', 'train'): (1625, 77, 123524, -662.4031322212609, 51479, 'cced567d99c00ca7'),
    ('hmc_cellcycle_GO', 'validation'): (848, 77, 64472, -331.49829903625925, 26045, '0ccebe428d1f7b55'),
    ('hmc_cellcycle_GO', 'test'): (1278, 77, 97093, -463.76956507561806, 42169, '78fc64c35afc08ab'),
}


@pytest.fixture(scope="module")
def real_sets(tmp_path_factory):
    """Loads each real data set once (validation_fraction=0, a fresh feature cache, downloads off)."""
    root = data_dir_with("corel5k/Corel5k.xml")
    if root is None:
        pytest.skip(no_data("corel5k/Corel5k.xml", "real data sets (the Mulan folders and hmc_cellcycle_GO/)"))
    from xmlthresh.datasets.hmc import HMCDataset
    from xmlthresh.datasets.mulan import MulanDataset

    cache = tmp_path_factory.mktemp("encoding-cache")
    loaded: dict = {}

    def load(name: str):
        if name not in loaded:
            folder = root / name
            if not folder.is_dir():
                pytest.skip(f"{folder} not in XMLTHRESH_DATA={root}")
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("XMLTHRESH_DATA", str(root))
                patch.setenv("XMLTHRESH_CACHE", str(cache))
                patch.setenv("XMLTHRESH_OFFLINE", "1")
                loaded[name] = (HMCDataset(name=name[len("hmc_"):]) if name.startswith("hmc_")
                                else MulanDataset(name=name, validation_fraction=0)).load()
        return loaded[name]

    return load


@pytest.mark.realdata
@pytest.mark.parametrize("name, split", sorted(REAL_ENCODED))
def test_real_design_matrices_are_the_known_ones_bit_for_bit(real_sets, name, split):
    n_rows, n_features, nonzero, total, n_labels, digest = REAL_ENCODED[(name, split)]
    data = real_sets(name)
    X = data.X[split]
    assert X.shape == (n_rows, n_features) and X.dtype == np.float64 and len(data.feature_names) == n_features
    dense = X.toarray() if sp.issparse(X) else X
    assert int(np.count_nonzero(dense)) == nonzero and float(dense.sum()) == pytest.approx(total, rel=1e-12, abs=1e-9)
    assert data.Y[split].nnz == n_labels
    assert hashlib.sha256(np.ascontiguousarray(dense).tobytes()).hexdigest()[:16] == digest
    if sp.issparse(X):
        assert not np.any(X.data == 0) and X.has_sorted_indices


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_most_frequent_code_imputes_what_simple_imputer_does(data):
    """The vectorised imputer equals SimpleImputer(strategy="most_frequent") on codes: dense and CSR input,
    ties to the smallest code, columns missing everywhere, implicit zeros of a sparse matrix counted."""
    from sklearn.impute import SimpleImputer

    from xmlthresh.data.code_imputer import MostFrequentCode

    n_rows = data.draw(st.integers(1, 12))
    n_columns = data.draw(st.integers(1, 6))
    cells = data.draw(st.lists(st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0, np.nan]), min_size=n_rows * n_columns,
                               max_size=n_rows * n_columns))
    values = np.array(cells).reshape(n_rows, n_columns)
    reference = SimpleImputer(strategy="most_frequent", keep_empty_features=True).fit(values)
    ours = MostFrequentCode().fit(values)
    assert np.array_equal(ours.transform(values), reference.transform(values))
    sparse = sp.csr_matrix(np.where(values == 0, 0, values))  # explicit NaNs, implicit zeros
    reference = SimpleImputer(strategy="most_frequent", keep_empty_features=True).fit(sparse)
    ours = MostFrequentCode().fit(sparse)
    assert np.array_equal(ours.transform(sparse).toarray(), reference.transform(sparse).toarray())
    assert sp.issparse(ours.transform(sparse))
