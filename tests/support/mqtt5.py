"""A paho MQTT 5 client that says what the broker answered: PUBACK reason codes, DISCONNECT."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from support.mosquitto import Mosquitto

SUCCESS, NO_SUBSCRIBERS = 0x00, 0x10  # MQTT 5 reason codes: accepted
NOT_AUTHORIZED = 0x87  # MQTT 5 reason code: refused by the ACL
WAIT = 5.0  # seconds for the broker's answer


class Mqtt5:
    """A paho MQTT 5 client on its own network thread, for what aiomqtt does not show.

    aiomqtt's ``publish`` says nothing of the PUBACK's reason code, and a lost connection
    is an error without the broker's DISCONNECT reason; paho's callbacks give both.
    """

    def __init__(
        self, broker: Mosquitto, user: str, password: str, *, client_id: str = ""
    ) -> None:
        """A client for ``broker`` logged in as ``user`` (not connected: use ``with``)."""
        self.broker = broker
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5
        )
        self.client.username_pw_set(user, password)
        self.client.on_connect = self._on_connect
        self.client.on_publish = self._on_publish
        self.client.on_disconnect = self._on_disconnect
        self.connack: ReasonCode | None = None
        self.disconnect_reason: ReasonCode | None = None
        self.acks: dict[int, ReasonCode] = {}
        self._changed = threading.Condition()

    def __enter__(self) -> Mqtt5:
        self.client.connect(self.broker.host, self.broker.port)
        self.client.loop_start()
        self._wait(lambda: self.connack is not None)
        assert self.connack is not None
        assert self.connack.value == SUCCESS, f"refused: {self.connack}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> int | None:
        """Publish at QoS 1: the PUBACK's reason code, or None if the broker hung up."""
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        self._wait(lambda: info.mid in self.acks or self.disconnect_reason is not None)
        ack = self.acks.get(info.mid)
        return None if ack is None else ack.value

    def _wait(self, condition: Callable[[], bool]) -> None:
        with self._changed:
            assert self._changed.wait_for(condition, WAIT), "no answer from the broker"

    def _on_connect(self, *args: Any) -> None:
        _client, _userdata, _flags, reason_code, _properties = args
        with self._changed:
            self.connack = reason_code
            self._changed.notify_all()

    def _on_publish(self, *args: Any) -> None:
        _client, _userdata, mid, reason_code, _properties = args
        with self._changed:
            self.acks[mid] = reason_code
            self._changed.notify_all()

    def _on_disconnect(self, *args: Any) -> None:
        _client, _userdata, _flags, reason_code, _properties = args
        with self._changed:
            self.disconnect_reason = reason_code
            self._changed.notify_all()
