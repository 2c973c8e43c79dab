"""fmt.format_value: the one place a value becomes the article's text."""

import math

import numpy as np
import pytest

from articlekit.core.fmt import FormatError, format_value


@pytest.mark.parametrize(
    "value, spec, text",
    [
        (0.9219455027665324, ".6f", "0.921946"),
        (2.220446049250313e-16, ".2e", "2.22e-16"),
        (0.9219455027665324, ".1%", "92.2%"),
        (2000, ",d", "2,000"),
        (3.668259537831219, ".2f", "3.67"),
        (5, ".6f", "5.000000"),
    ],
)
def test_a_spec_means_what_it_means_in_an_f_string(value, spec, text):
    assert format_value(value, spec) == text == format(value, spec)


def test_r_and_no_spec_give_the_shortest_round_trip_repr_of_a_float():
    x = 2.220446049250313e-16
    assert format_value(x, "r") == format_value(x) == "2.220446049250313e-16"
    assert float(format_value(0.1 + 0.2)) == 0.1 + 0.2


def test_without_a_spec_text_and_ints_print_as_they_are():
    assert format_value("ValueError: size 5 is different from 4") == "ValueError: size 5 is different from 4"
    assert format_value(42) == "42"


def test_booleans_and_null_print_as_json_words():
    assert format_value(True) == "true"
    assert format_value(False) == "false"
    assert format_value(None) == "null"


def test_a_numeric_spec_on_a_boolean_is_an_error_not_1_00():
    with pytest.raises(FormatError, match="'.2f'.*boolean"):
        format_value(True, ".2f")


def test_nan_and_infinities_print_as_python_spells_them():
    assert format_value(math.nan) == "nan"
    assert format_value(math.inf, ".2e") == "inf"
    assert format_value(-math.inf) == "-inf"


def test_a_list_prints_like_a_numpy_row_with_the_spec_applied_to_each_item():
    row = [0.027843, 0.167136, 0.246698, 0.211041, 0.347282]
    assert format_value(row, ".6f") == "[0.027843 0.167136 0.246698 0.211041 0.347282]"
    assert format_value([[1, 2], [3, 4]]) == "[[1 2] [3 4]]"


@pytest.mark.parametrize("row", [[1.0, 1.0, 1.0], [1.5, 1.0], [0.838357012, 1.937897, 0.66], [10.5, 1.25], [1, 2, 30]])
def test_np_spec_matches_numpy_printing(row):
    assert format_value(row, "np.6") == np.array2string(np.array(row), precision=6)


def test_a_bad_spec_names_the_spec_and_the_value():
    with pytest.raises(FormatError, match=r"'\.6q'.*0\.5"):
        format_value(0.5, ".6q")
    with pytest.raises(FormatError, match=r"',d'"):
        format_value(0.5, ",d")
