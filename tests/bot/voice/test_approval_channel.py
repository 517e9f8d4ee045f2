"""The page's Approve button over a real WebRTC data channel (aiortc peer against the server):
the open approval is announced with its exact parameters, a stale answer is refused, and
Approve is the same yes a spoken one is."""

from __future__ import annotations

from typing import Any

from bot.server.app import Engines
from config import Settings
from memory.store import Store
from models.base import Tokenizer
from testkit.peer import VoiceClient
from tests.bot.voice.conftest import DELETED, asks_to_delete, serve


def approvals(client: VoiceClient) -> list[dict[str, Any]]:
    return client.of_type("approval")


async def test_approve_over_the_data_channel_runs_the_stored_deletion(
    voice_settings: Settings, engines: Engines, tokenizer: Tokenizer, store: Store
) -> None:
    note = store.notes.add("old gate code 4411")
    keep = store.notes.add("new gate code 9922")
    llm, script = asks_to_delete(tokenizer, note)
    async with serve(voice_settings, engines, llm, store) as server:
        client = VoiceClient(server.url)
        try:
            await client.connect()
            client.send_text("Delete my note with the old gate code.")
            shown = await client.wait_for(
                lambda c: [a for a in approvals(c) if a["id"]], 60, "an approval"
            )
            card = shown[0]
            assert card["tool"] == "delete_note" and card["params"] == {"note_id": note}
            # Said by what it touches; the page shows the exact parameters beside it.
            assert card["text"] == "delete the note 'old gate code 4411'"
            row = store.approvals.get(card["id"])
            assert row is not None and row.requester == client.session_id

            # An answer for an approval that is not the one waiting changes nothing.
            client.send({"type": "approval", "id": "appr-999", "decision": "yes"})
            await client.wait_for(
                lambda c: any("no longer waiting" in e["message"] for e in c.of_type("error")),
                30,
                "the stale answer refused",
            )
            assert store.notes.get(note) is not None

            # Approve is the user's yes: the stored call runs, its result goes back to the
            # model as that call's result, and the model says what came of it.
            client.send({"type": "approval", "id": card["id"], "decision": "yes"})
            answer = await client.wait_for(
                lambda c: [e for e in c.of_type("assistant_done") if e["text"] == DELETED],
                60,
                "the model's answer after the approval",
            )
            assert answer[0]["path"] == "model"
            results = [(e["name"], e["preview"]) for e in client.of_type("tool_result")]
            assert [r for r in results if r[1].startswith("deleted")] == [
                ("delete_note", f"deleted {note} (old gate code 4411)")
            ]
            await client.wait_for(lambda c: approvals(c)[-1]["id"] == "", 30, "the card hidden")
            assert store.notes.get(note) is None and store.notes.get(keep) is not None
            # The yes was the session's own turn, logged as the user's words.
            said = store.events.find(client.session_id, kinds=["user"])
            assert [e.content for e in said][-1] == "yes"
            assert script == []
        finally:
            await client.close()
