"""Operator commands that reach the table by MQTT: checked, applied, answered.

The publisher hands each command it receives to :meth:`CommandDesk.on_command`; the desk
turns the body into an engine input (:func:`~baccarat.controller.commands.parse_command`),
lets the table journal and apply it, and queues the reply. Any body gets a reply, and
nothing raises out of it: a bug behind a command is logged and answered as one.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

from baccarat.controller.commands import (
    CommandError,
    Reply,
    command_origin,
    parse_command,
    reply,
    shown,
)
from baccarat.controller.config import Config
from baccarat.controller.engine.engine import Outcome
from baccarat.controller.engine.inputs import Input
from baccarat.controller.journal.reader import JournalError
from baccarat.controller.outbox import Outbox, OutMessage

log = logging.getLogger("baccarat.daemon")


class CommandDesk:
    """Commands for one table: ``handle`` journals and applies an input (the table's)."""

    def __init__(
        self,
        config: Config,
        outbox: Outbox,
        handle: Callable[[Input], Outcome],
        now: Callable[[], float],
    ) -> None:
        self.config, self.outbox, self.handle, self.now = config, outbox, handle, now

    async def on_command(
        self, name: str, body: bytes, response_topic: str | None, retained: bool = False
    ) -> None:
        """An operator command: validate, apply, reply. Never raises: any body gets a reply.

        A retained command is not executed: the broker hands it out again at every
        connection, so it would be executed again at every restart.
        """
        try:
            if retained:
                self._ignore_retained(name, response_topic)
            else:
                self._command(name, body, response_topic)
        except Exception:  # a bug, not the body: log it, answer, keep the session up
            log.exception("command %s (%d bytes): failed", shown(name), len(body))
            error = "internal error: the controller could not handle this command (see its log)"
            self._reply(response_topic, reply(name, error=error))

    def _ignore_retained(self, name: str, response_topic: str | None) -> None:
        topic = self.config.topic(f"cmd/{name}")
        log.warning(
            "retained command on %s ignored: commands must not be retained (clear it with an "
            "empty retained message)", topic,
        )
        error = "retained command, not executed: a command is sent once, without retain"
        self._reply(response_topic, reply(name, error=error))

    def _command(self, topic_name: str, body: bytes, response_topic: str | None) -> None:
        """``topic_name`` is what follows ``cmd/``: ``void``, or ``void/<operator>``."""
        name, _, operator = topic_name.partition("/")
        try:
            inp, request_id = parse_command(
                name, body, ts=self.now(), test_decks=self.config.allow_test_decks
            )
            inp = dataclasses.replace(inp, origin=command_origin(operator))
        except CommandError as exc:
            self._reply(response_topic, reply(name, exc.request_id, str(exc)))
            return
        try:
            outcome = self.handle(inp)
        except JournalError:  # logged by handle; the daemon is stopping
            error = "the journal cannot record it: the table stops"
            self._reply(response_topic, reply(name, request_id, error))
            return
        self._reply(response_topic, reply(name, request_id, outcome.refused))

    def _reply(self, response_topic: str | None, answer: Reply) -> None:
        topic = response_topic or self.config.topic("reply")
        self.outbox.put(OutMessage(topic, answer.to_json().encode()))
        if not answer.ok:
            log.info("command %s refused: %s", shown(answer.command), answer.error)
