"""The Java properties syntax: separators, comments, continuations, escapes, as
``java.util.Properties.load`` reads them; any key and value written with our escaper read back
unchanged (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.kraft_node.java_properties import (
    PropertiesSyntaxError,
    escape,
    format_properties,
    parse_properties,
)


def test_the_three_separators_and_their_white_space() -> None:
    text = "a=1\nb:2\nc 3\n  d  =  4\ne\t:\t5\nf = = 6\ng\n"
    assert parse_properties(text) == {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5",
                                      "f": "= 6", "g": ""}


def test_comments_and_blank_lines_are_skipped_but_trailing_space_is_kept() -> None:
    text = "# a comment\n! another\n\n   \n  # indented comment\nk=v  \nx=#not a comment\n"
    assert parse_properties(text) == {"k": "v  ", "x": "#not a comment"}


def test_a_line_ending_in_an_odd_number_of_backslashes_continues() -> None:
    text = "list=a,\\\n      b,\\\n   c\neven=x\\\\\nnext=y\n"
    assert parse_properties(text) == {"list": "a,b,c", "even": "x\\", "next": "y"}


def test_a_continued_line_starting_with_hash_is_data_and_a_comment_does_not_continue() -> None:
    text = "k=a\\\n#b\n# comment \\\nz=1\n"
    assert parse_properties(text) == {"k": "a#b", "z": "1"}


def test_line_endings_cr_lf_and_crlf() -> None:
    assert parse_properties("a=1\rb=2\r\nc=3\n") == {"a": "1", "b": "2", "c": "3"}


def test_escapes_in_keys_and_values() -> None:
    text = "my\\ key\\=x=tab\\there\\nnew\\\\back\\u0041\\u00e9\\:\\q\n"
    assert parse_properties(text) == {"my key=x": "tab\there\nnew\\backAé:q"}


def test_a_surrogate_pair_of_escapes_is_one_character() -> None:
    assert parse_properties("k=\\uD83D\\uDE00") == {"k": "\U0001F600"}


def test_a_malformed_unicode_escape_names_its_line() -> None:
    with pytest.raises(PropertiesSyntaxError, match="line 2: malformed"):
        parse_properties("a=1\nb=\\u12g4\n")


def test_a_later_key_wins() -> None:
    assert parse_properties("a=1\nb=2\na=3\n") == {"a": "3", "b": "2"}


def test_escape_writes_what_needs_it() -> None:
    assert escape(" a b") == "\\ a b"
    assert escape("a b", key=True) == "a\\ b"
    assert escape("x=y:z#!\\") == "x\\=y\\:z\\#\\!\\\\"
    assert escape("é\x00") == "\\u00E9\\u0000"


@given(st.dictionaries(st.text(), st.text(), max_size=8))
def test_anything_written_with_our_escaper_parses_back(pairs: dict[str, str]) -> None:
    text = format_properties(pairs.items(), comments=["", "a comment"])
    assert text.isascii()
    assert parse_properties(text) == pairs


@given(st.text(alphabet=st.sampled_from("ab =:#!\\\n\r\t u0F"), max_size=40) | st.text())
def test_any_text_parses_or_names_a_malformed_escape(text: str) -> None:
    try:
        parse_properties(text)
    except PropertiesSyntaxError as exc:
        assert "malformed" in str(exc)
