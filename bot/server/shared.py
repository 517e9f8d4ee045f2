"""What the voice server's routes share, kept on the aiohttp application: the settings, the
speech engines, how a conversation session is opened, the open connections, and the cap on
how many there may be. `bot.server.app` builds it; the page, health and offer routes read it
through `SHARED`, never through module globals.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from aiohttp import web
from aiortc import RTCPeerConnection

from bot.calendar_feed import CalendarFeed
from bot.server.guard import BODY_TIMEOUT_S
from bot.server.pairing import PairingCodes
from bot.turn.session import Session
from bot.voice.page_channel import PageChannel
from bot.voice.prepared import PreparedVoice
from bot.voice.session import MetricsSink, VoiceSession
from config import Settings
from memory.approvals import Approvals
from models.base import LLM, STT, TTS, VAD
from models.end_of_turn import EndOfTurnDetector
from models.end_of_turn_words import EndOfTurnWords


class SessionOpener(Protocol):
    """Opens a conversation session and returns its id and the session.

    `resume` is the page's previous session id, if any (the new session's memory briefing
    already carries what the previous one persisted).
    """

    def __call__(self, resume: str | None) -> Awaitable[tuple[str, Session]]: ...


@dataclass
class Engines:
    stt: STT
    tts: TTS
    vad: VAD
    # The end-of-turn detector for semantic endpointing; None keeps the fixed silence window.
    end_of_turn: EndOfTurnDetector | None = None
    # The words' end-of-turn model beside it (`models.end_of_turn_words`); None: audio and rules
    # only.
    words: EndOfTurnWords | None = None


@dataclass
class Connection:
    id: str
    pc: RTCPeerConnection
    voice: VoiceSession
    # Closes the connection when its peer has not connected by `server.connect_timeout_s` after
    # the answer; None once it connected (or the deadline fired).
    deadline: asyncio.Task[None] | None = None


@dataclass
class ServerShared:
    """Everything the routes share; kept on the app, never in module globals."""

    settings: Settings
    engines: Engines
    open_session: SessionOpener
    metrics: MetricsSink | None = None
    # The approval ledger: the page shows this conversation's open approval with buttons.
    approvals: Approvals | None = None
    connections: dict[str, Connection] = field(default_factory=dict)
    # Refreshes `[calendar] url` while the server runs (`bot.calendar_feed`); None until set.
    calendar_feed: CalendarFeed | None = None
    pending: int = 0  # offers being processed (they count against max_sessions)
    body_timeout_s: float = BODY_TIMEOUT_S
    closing: bool = False
    # Features that live on each connection's page (the knowledge panel): given its channel,
    # all they see of the connection.
    on_page: list[Callable[[PageChannel], None]] = field(default_factory=list)
    # What watches whole connections as they open (the tests' and benches' harnesses).
    on_voice_session: list[Callable[[VoiceSession], None]] = field(default_factory=list)
    # The chat model once loaded (None before): a serving engine's slots cap the sessions.
    loaded_llm: Callable[[], LLM | None] = lambda: None
    # The voice with audio prepared ahead, shared by every connection (set by `create_app`).
    voice: PreparedVoice | None = None
    # Whether the head every session shares is evaluated and kept (None: no shared head).
    head_kept: Callable[[], bool | None] = lambda: None
    # The shared head is being evaluated at start-up now (not yet kept, nobody stopped it).
    head_warming: Callable[[], bool] = lambda: False
    # The live pairing code and the wrong-try lock (`bot.server.pairing`): memory only.
    pairing: PairingCodes = field(default_factory=PairingCodes)

    def warming(self) -> list[str]:
        """What is still being made ready after start-up, before a first answer can be fast:
        the shared head of the model's context, the phrases said often. Empty: ready."""
        left = []
        if self.head_warming():
            left.append("the model's instructions")
        voice = self.voice
        if voice is not None and voice.stats.prepared["fixed"] and not voice.fixed_ready():
            left.append("the voice's common phrases")
        return left

    @property
    def max_sessions(self) -> int:
        return session_limit(self.settings, self.loaded_llm())


def session_limit(settings: Settings, llm: LLM | None) -> int:
    """Sessions open at once. A local model queues calls, so config stands; a serving engine
    runs turns at once up to its slots (more would wait inside it mid-turn), so the smaller of
    the two. An engine that does not say (vLLM, llama-cpp-python's server) leaves config."""
    slots = engine_slots(llm)
    return min(settings.server.max_sessions, slots or settings.server.max_sessions)


def engine_slots(llm: LLM | None) -> int | None:
    """Requests a serving engine runs at once, where it says; None for a local model."""
    return llm.max_parallel if llm is not None and llm.parallel else None


SHARED: web.AppKey[ServerShared] = web.AppKey("annie_shared", ServerShared)
