"""``labels.claim_links``: sentences, terms and passage links, with values worked out by hand."""

from __future__ import annotations

import doctest

import pytest

from labels import claim_links
from labels.claim_links import (
    PassageMatch,
    Span,
    link_answer,
    link_sentence,
    split_sentences,
    terms,
)


def texts(answer: str) -> list[str]:
    return [s.text for s in split_sentences(answer)]


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(claim_links).failed == 0


# -- sentences ----------------------------------------------------------------------------------


def test_sentences_are_spans_into_the_answer() -> None:
    answer = "  Refunds take 5 days.  Shipping is free!\n\nAsk us?"
    spans = split_sentences(answer)
    assert spans == [Span(2, 22, "Refunds take 5 days."), Span(24, 41, "Shipping is free!"),
                     Span(43, 50, "Ask us?")]
    assert all(answer[s.start:s.end] == s.text for s in spans)


def test_decimals_abbreviations_and_initials_do_not_end_a_sentence() -> None:
    assert texts("It costs 3.5 USD, e.g. in the U.S. and approx. three days. J. Smith said so.") \
        == ["It costs 3.5 USD, e.g. in the U.S. and approx. three days.", "J. Smith said so."]
    # A lower-case word after a full stop continues the sentence; "..." then a capital ends it.
    assert texts("Wait... then it works. Wait... Then it works.") == [
        "Wait... then it works.", "Wait...", "Then it works."]


def test_closing_quotes_and_brackets_stay_with_their_sentence() -> None:
    assert texts('He said "it is free." (Or so.) Next one.') == [
        'He said "it is free."', "(Or so.)", "Next one."]


def test_line_breaks_list_items_and_hard_wraps() -> None:
    answer = ("The plan includes:\n- single sign-on\n- 99.9% uptime\n"
              "This line is wrapped\nin the middle of a sentence.\n\nA new paragraph")
    assert texts(answer) == ["The plan includes:", "single sign-on", "99.9% uptime",
                             "This line is wrapped\nin the middle of a sentence.",
                             "A new paragraph"]
    numbered = split_sentences("1. First step\n2) Second step")
    assert [(s.start, s.text) for s in numbered] == [(3, "First step"), (17, "Second step")]


def test_pieces_without_letters_or_digits_are_not_sentences() -> None:
    assert texts("First.\n---\n- \nSecond.") == ["First.", "Second."]


def test_unicode_sentences() -> None:
    assert texts("价格是5元。配送免费！") == ["价格是5元。", "配送免费！"]
    assert texts("Le café coûte 3 €. Über 10 Tage?") == ["Le café coûte 3 €.", "Über 10 Tage?"]


@pytest.mark.parametrize("answer", ["", "   \n\n ", "...", "- \n* "])
def test_an_answer_without_words_has_no_sentences(answer: str) -> None:
    assert split_sentences(answer) == []
    assert link_answer(answer, ["Some passage."]) == []


# -- terms --------------------------------------------------------------------------------------


def test_numbers_are_normalised() -> None:
    keys = [t.key for t in terms("1,500 1500 3.0 3 03 2.50 0.5 1 500 12,34 10\u202f000 ١٥")]
    assert keys == ["1500", "1500", "3", "3", "3", "2.5", "0.5", "1", "500", "12", "34",
                    "10000", "15"]
    assert all(t.number for t in terms("1,500 3.0"))


def test_words_are_folded_stemmed_and_stop_words_dropped() -> None:
    found = terms("The Refunds were REFUNDED; refunding policies: a policy, prices priced.")
    assert [t.key for t in found] == ["refund", "refund", "refund", "policy", "policy",
                                      "pric", "pric"]
    assert not any(t.number for t in found)


def test_accents_and_decomposed_letters_meet() -> None:
    composed, decomposed = "Caf\u00e9", "cafe\u0301"
    assert [t.key for t in terms(composed)] == [t.key for t in terms(decomposed)] == ["caf"]
    assert [(t.start, t.end) for t in terms(decomposed)] == [(0, 5)]  # the mark is in the span


def test_punctuation_only_text_has_no_terms() -> None:
    assert terms("!? -- ... ()") == []


# -- links --------------------------------------------------------------------------------------


PASSAGES = [
    "Standard shipping is free on orders over 50 EUR.",
    "Refunds are issued within 14 days of the return.",
    "Express shipping costs 9.90 EUR and takes 2 days.",
]


def test_a_sentence_links_to_the_passages_sharing_its_terms_best_first() -> None:
    # Terms: refund (1), issu (1), 14 (2), day (2: no, a word: 1) -> refund, issu, 14, day:
    # weights 1 + 1 + 2 + 1 = 5. Passage 1 has all four: 5/5. Passage 2 has "days": 1/5.
    matches = link_sentence("Refunds are issued in 14 days.", PASSAGES)
    assert [(m.passage, m.score, m.terms) for m in matches] == [
        (1, 1.0, ("14", "day", "issu", "refund")),
        (2, pytest.approx(0.2), ("day",)),
    ]
    text = PASSAGES[1]
    assert [text[s:e] for s, e in matches[0].spans] == ["Refunds", "issued", "14", "days"]
    assert [PASSAGES[2][s:e] for s, e in matches[1].spans] == ["days"]


def test_numbers_weigh_double_and_match_across_formats() -> None:
    # "Express costs 9.9 EUR": express (1), cost (1), 9.9 (2), eur (1) = 5.
    # Passage 2: all four = 1.0; passage 0: "EUR" only = 1/5.
    matches = link_sentence("Express costs 9.9 EUR.", PASSAGES)
    assert [(m.passage, m.score) for m in matches] == [(2, 1.0), (0, pytest.approx(0.2))]
    assert "9.9" in matches[0].terms
    # A number alone: 1,500 == 1500.
    assert link_sentence("It is 1,500.", ["up to 1500 units", "15 units"]) == [
        PassageMatch(0, 1.0, ("1500",), ((6, 10),))]


def test_equal_scores_keep_the_passages_order() -> None:
    matches = link_sentence("Shipping.", ["Shipping A.", "shipping B.", "none"])
    assert [(m.passage, m.score) for m in matches] == [(0, 1.0), (1, 1.0)]


def test_a_sentence_that_matches_nothing() -> None:
    assert link_sentence("The moon is made of cheese.", PASSAGES) == []
    assert link_sentence("Yes, it is.", PASSAGES) == []  # no content term at all
    assert link_sentence("Refunds take 14 days.", []) == []


def test_link_answer_gives_each_sentence_its_matches_and_own_found_spans() -> None:
    answer = "Refunds take 14 days. The moon is cheese."
    first, second = link_answer(answer, PASSAGES)
    assert first.sentence == Span(0, 21, "Refunds take 14 days.")
    assert [m.passage for m in first.matches] == [1, 2]
    # Found: "Refunds", "14", "days" (shared with some passage); "take" only in passage 2
    # as "takes" -> "tak" == "tak": shared too.
    assert [first.sentence.text[s:e] for s, e in first.found] == ["Refunds", "take", "14", "days"]
    assert second.matches == () and second.found == ()
    assert [m for m in first.matches] == link_sentence(first.sentence.text, PASSAGES)


def test_hostile_text_is_only_text() -> None:
    sentence = "<script>alert(1)</script> costs ![x](http://t/1500) 1,500."
    # Terms: script, alert, 1 (a number: 2), cost, http, 1500 (2); "x" and "t" are single
    # letters. Total 1 + 1 + 2 + 1 + 1 + 2 = 8; the passage shares 1500, alert, script: 4 / 8.
    matches = link_sentence(sentence, ["<b>1500</b> script alert"])
    assert [(m.terms, m.score) for m in matches] == [(("1500", "alert", "script"), 0.5)]


def test_the_focus_is_the_stretch_with_the_rare_shared_terms() -> None:
    lines = [f"Shipping note {k}." for k in range(30)]
    lines[20] = "Refunds: 1500 EUR."
    passage = "\n".join(lines)
    (match,) = link_sentence("Shipping notes say refunds are 1500 EUR.", [passage])
    # "shipping" and "note" are on 29 lines (1/29 each); refund (1), 1500 (2) and eur (1) only
    # on line 20. The best stretch is the first that reaches line 20's three terms, and in it
    # the weightiest term is 1500.
    start, end = match.spans[match.focus]
    assert passage[start:end] == "1500"
    assert start == 359  # lines 0-9 take 17 characters with their line break, 10-19 take 18
    assert claim_links.focus_index([], {}) == 0


def test_a_word_repeated_everywhere_keeps_the_spans_around_the_focus() -> None:
    passage = " ".join(["refund"] * 200 + ["1500"] + ["refund"] * 200)
    (match,) = link_sentence("Refunds of 1500.", [passage])
    assert len(match.spans) == claim_links.MAX_SPANS
    start, end = match.spans[match.focus]
    assert passage[start:end] == "1500"  # the number, with 32 refunds kept on either side
    assert match.focus == claim_links.MAX_SPANS // 2
    assert match.score == 1.0
