"""The traits a message class declares beside its topic: retained, urgent."""

from __future__ import annotations

from baccarat.messages.catalog import MESSAGE_TYPES, RETAINED_TOPICS


def test_the_state_topics_are_retained_and_only_they() -> None:
    assert {"shoe", "round", "roads", "recall", "alarms"} == RETAINED_TOPICS


def test_alarms_pass_a_refused_message_and_nothing_else_of_the_engines_does() -> None:
    urgent = {cls.topic for cls in MESSAGE_TYPES if cls.urgent}
    assert urgent == {"alarm", "alarms"}  # alarm and alarm_cleared, and the open alarms
