"""Small tools with no outside effects: think, get_time and render_table.

render_table's rows go to the page as a table event and are never read aloud; the model
gets a one-line confirmation, so a long table costs the context almost nothing.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bot.tools.base import Tool, ToolEnv, ToolOutput

GROUP = "utility"
MAX_ROWS = 200
MAX_CELL = 500


class ThinkArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    thought: str = Field(min_length=1, description="Your reasoning; nothing is said aloud.")


class GetTimeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timezone: str = Field("", description="IANA zone such as Europe/Paris; empty for local time.")


class RenderTableArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field("", description="A short title shown above the table.")
    columns: list[str] = Field(min_length=1, max_length=20)
    rows: list[list[str | int | float | None]] = Field(max_length=MAX_ROWS)

    @model_validator(mode="after")
    def _widths(self) -> RenderTableArgs:
        for n, row in enumerate(self.rows, start=1):
            if len(row) != len(self.columns):
                raise ValueError(
                    f"row {n} has {len(row)} cells but there are {len(self.columns)} columns"
                )
        return self


async def think(args: ThinkArgs, ctx: ToolEnv) -> ToolOutput:
    return ToolOutput("Noted.")


async def get_time(args: GetTimeArgs, ctx: ToolEnv) -> ToolOutput:
    if args.timezone:
        try:
            zone = ZoneInfo(args.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            return ToolOutput(
                f"error: unknown time zone {args.timezone!r} (use e.g. Europe/Paris)", ok=False
            )
        now = datetime.now(zone)
    else:
        now = datetime.now().astimezone()
    return ToolOutput(
        now.strftime("%A, %B %d, %Y, %H:%M %Z (UTC%z)"), data={"iso": now.isoformat()}
    )


async def render_table(args: RenderTableArgs, ctx: ToolEnv) -> ToolOutput:
    rows = [["" if c is None else str(c)[:MAX_CELL] for c in row] for row in args.rows]
    title = args.title or "Table"
    return ToolOutput(
        f"Shown on the page: {title!r}, {len(rows)} rows x {len(args.columns)} columns. "
        "Do not read it aloud; mention it briefly.",
        data={"title": args.title, "columns": list(args.columns), "rows": rows},
    )


def utility_tools() -> list[Tool]:
    return [
        Tool(
            "think",
            "Think step by step before a hard answer; nothing is said aloud.",
            ThinkArgs,
            think,
            GROUP,
        ),
        Tool(
            "get_time",
            "The current date and time, optionally in another time zone.",
            GetTimeArgs,
            get_time,
            GROUP,
        ),
        Tool(
            "render_table",
            "Show a table on the user's page instead of reading it aloud (lists, comparisons).",
            RenderTableArgs,
            render_table,
            GROUP,
            produces_table=True,
        ),
    ]
