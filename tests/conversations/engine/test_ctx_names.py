"""A person's name read whole, and a Chinese name by its surname (no database)."""

from __future__ import annotations

import pytest

from conversations.engine.names import read_person_name


@pytest.mark.parametrize(("text", "found", "name"), [
    ("my server priya raman didn't turn up for the brunch shift", "priya", "priya raman"),
    ("Sean O'Neill on my crew shouted at a coworker", "Neill", "Sean O'Neill"),
    ("My engineer Wang Lei has missed three stand-ups", "Wang", "Wang Lei"),
    ("I'm worried about priya's timekeeping", "priya's", "priya"),
    ("My employee Dana keeps missing deadlines", "Dana", "Dana"),
    ("Tom on my team was rude", "Tom", "Tom"),
    ("员工马超今天没来", "马超", "马超"),
    ("小王又迟到了", "小王", "小王"),
    ("欧阳娜娜这周请了三天假", "欧阳娜娜", "欧阳娜娜"),
])
def test_a_name_is_read_whole(text: str, found: str, name: str) -> None:
    assert read_person_name(text, found) == name


@pytest.mark.parametrize(("text", "found"), [
    ("组里有个人这周又迟到了两次", "里有个人"),
    ("手下新来的那个小伙子今天又没来", "新来"),
    ("下属老是迟到早退", "老是"),
])
def test_words_that_begin_with_no_surname_are_no_chinese_name(text: str, found: str) -> None:
    assert read_person_name(text, found) is None
