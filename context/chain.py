"""The ledger's chain mode: each item's text as the template renders it after its real
predecessors, for templates whose output for a message depends on its neighbours.

An item's text is where the render of the conversation up to it departs from the render up
to the item before (the system message comes first in both). The texts are kept per session
and extended with only the items appended since the last call; a changed prefix (system
prompt or tool schemas) renders them all again, a changed item those from it on. Each new item
costs a render of the whole conversation so far, O(context) per turn, which is why
`context.ledger` uses this only for templates where segment mode does not hold.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from context.codec import Codec
from context.conversation import Conversation
from models.chat_template import common_prefix_len


@dataclass
class _Chain:
    """One session's rendered texts and the render keys and prefix they were made from."""

    keys: list[tuple[Any, ...]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    prefix_key: str = ""


class ChainTexts:
    """Each session's item texts in chain mode, rendered with `codec`'s template."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self._chains: dict[str, _Chain] = {}

    def texts(self, conv: Conversation) -> list[str]:
        """Each item's text as rendered after its real predecessors."""
        chain = self._chains.setdefault(conv.session_id, _Chain())
        prefix_key = json.dumps([conv.prefix.system_content(), conv.prefix.tools])
        keys = [item.render_key() for item in conv.items]
        same = 0
        if chain.prefix_key == prefix_key:
            while same < min(len(keys), len(chain.keys)) and keys[same] == chain.keys[same]:
                same += 1
        del chain.keys[same:], chain.texts[same:]
        chain.prefix_key = prefix_key
        messages = conv.messages()
        tools = conv.prefix.tools or None
        prev = self.codec.render(messages[: same + 1], tools, False)
        for i in range(same, len(keys)):
            full = self.codec.render(messages[: i + 2], tools, False)
            chain.keys.append(keys[i])
            # A message that joins the previous one's turn (a run of tool results) takes
            # that turn's closing text over; the total is exact either way (see usage).
            shared = common_prefix_len(prev, full)
            chain.texts.append(full[shared:])
            prev = full
        return list(chain.texts)
