"""The typed record of one model call (`ContextEnvelope`) and its audit manifest.

The assembler returns an envelope for every call: what is in each lane, with provenance and
exact token counts, the budget by lane, and every omission with the call that recovers it
(`get_context` or `load_tool_group`). The manifest is the envelope's compact, loggable view.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from context.lanes import FIXED_LANE, Lane

SourceType = Literal["projection", "event", "artifact", "memory", "message"]
Authority = Literal["live", "canonical", "derived", "user_claim"]
Sensitivity = Literal["normal", "private", "restricted"]
Surface = Literal["main", "task", "meeting", "approval", "proactive"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RecoverCall(_Model):
    """A tool call that brings an omitted item back."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ContextItem(_Model):
    """One model-visible item with its provenance and exact token cost."""

    source_type: SourceType
    source_id: str
    authority: Authority
    observed_at: float
    expires_at: float | None = None
    sensitivity: Sensitivity = "normal"
    # Despite the name, the exact count from the model's tokenizer.
    token_estimate: int
    admission_reason: str
    content: str
    lane: Lane = "history"
    kind: str = ""


class UserRequest(_Model):
    text: str
    turn_id: str
    event_id: str = ""
    surface: Surface = "main"
    attachments: list[str] = Field(default_factory=list)


class Scope(_Model):
    user_id: str = "local"
    thread_id: str
    surface: Surface = "main"
    task_id: str | None = None
    meeting_id: str | None = None
    approval_id: str | None = None


class Budget(_Model):
    limit: int
    used: int
    output_reserve_tokens: int = 0
    by_lane: dict[str, int] = Field(default_factory=dict)
    lane_limits: dict[str, int] = Field(default_factory=dict)
    by_component: dict[str, int] = Field(default_factory=dict)


class Omission(_Model):
    """Something left out of the model's view, and the call that brings it back.

    The one omission type: the conversation records them as it clears or replaces items,
    admission as it cuts a lane short, and the envelope and manifest list them as they are.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    lane: Lane
    reason: str
    source_ids: list[str] = Field(default_factory=list)
    recover_with: RecoverCall | None = None


class ContextEnvelope(_Model):
    """The data contract for one model call: what each lane holds, the budget, what was left out."""

    request: UserRequest | None
    scope: Scope
    policy_version: str
    current_state: list[ContextItem] = Field(default_factory=list)
    recent_history: list[ContextItem] = Field(default_factory=list)
    retrieved_evidence: list[ContextItem] = Field(default_factory=list)
    active_tool_groups: list[str] = Field(default_factory=list)
    budget: Budget
    omissions: list[Omission] = Field(default_factory=list)
    # Fixed head: system prompt, loaded schemas, briefing, notes (tokens by component).
    fixed: dict[str, int] = Field(default_factory=dict)
    # Items trimmed by this call's overflow pass (also listed in omissions).
    trimmed: list[str] = Field(default_factory=list)
    overflow: bool = False

    def manifest(self) -> Manifest:
        admitted = [
            AdmittedEntry(
                source_id=i.source_id,
                lane=i.lane,
                kind=i.kind,
                tokens=i.token_estimate,
                reason=i.admission_reason,
            )
            for lane in (self.current_state, self.recent_history, self.retrieved_evidence)
            for i in lane
        ]
        fixed = [
            AdmittedEntry(
                source_id=name,
                lane=lane,
                kind=name,
                tokens=n,
                reason=_FIXED_REASON[name] + self._over(lane, n),
            )
            for name, n in self.fixed.items()
            if n
            for lane in [FIXED_LANE[name]]
        ]
        return Manifest(
            request=self.request.text if self.request else "",
            policy_version=self.policy_version,
            limit=self.budget.limit,
            used=self.budget.used,
            output_reserve_tokens=self.budget.output_reserve_tokens,
            by_lane=self.budget.by_lane,
            by_component=self.budget.by_component,
            lane_limits=self.budget.lane_limits,
            active_tool_groups=self.active_tool_groups,
            admitted=fixed + admitted,
            omissions=self.omissions,
            overflow=self.overflow,
        )

    def _over(self, lane: Lane, tokens: int) -> str:
        """A note on a fixed component that alone exceeds its lane's budget (it stays: the
        head is fixed for the session, and cutting the policy would change what Annie is)."""
        limit = self.budget.lane_limits.get(lane, 0)
        if limit and tokens > limit:
            return f" (over the {lane} budget of {limit:,} tokens)"
        return ""


_FIXED_REASON = {
    "system_prompt": "policy core: always included",
    "tool_schemas": "schemas of the tool groups loaded at session start",
    "memory_briefing": "briefing from earlier sessions, loaded at session start",
    "notes": "notes saved by Annie, loaded at session start",
}


class AdmittedEntry(_Model):
    source_id: str
    lane: Lane
    kind: str
    tokens: int
    reason: str


class Manifest(_Model):
    """Every admitted item with its reason, every omission with how to recover it."""

    request: str
    policy_version: str
    limit: int
    used: int
    output_reserve_tokens: int
    by_lane: dict[str, int]
    active_tool_groups: list[str]
    admitted: list[AdmittedEntry]
    omissions: list[Omission]
    overflow: bool = False
    # Tokens by component (system prompt, schemas, conversation, tool results, ...) and each
    # lane's budget at this window, beside `by_lane`.
    by_component: dict[str, int] = Field(default_factory=dict)
    lane_limits: dict[str, int] = Field(default_factory=dict)

    def text(self) -> str:
        """A readable listing for the terminal (`/manifest`)."""
        lines = [
            f"request: {self.request!r}",
            f"policy {self.policy_version}; used {self.used:,} of {self.limit:,} tokens "
            f"(+{self.output_reserve_tokens:,} reserved for the answer)",
            "by lane: "
            + ", ".join(
                f"{k} {v:,}" + (f"/{self.lane_limits[k]:,}" if k in self.lane_limits else "")
                for k, v in self.by_lane.items()
                if v
            ),
            "by component: " + ", ".join(f"{k} {v:,}" for k, v in self.by_component.items() if v),
            "tool groups: " + (", ".join(self.active_tool_groups) or "none"),
            f"admitted ({len(self.admitted)}):",
        ]
        lines += [
            f"  {e.lane:<9} {e.source_id:<16} {e.tokens:>6}  {e.reason}" for e in self.admitted
        ]
        lines.append(f"omitted ({len(self.omissions)}):")
        for o in self.omissions:
            how = ""
            if o.recover_with is not None:
                args = ", ".join(f"{k}={v!r}" for k, v in o.recover_with.arguments.items())
                how = f" -> {o.recover_with.name}({args})"
            lines.append(f"  {o.lane:<9} {o.reason}{how}")
        return "\n".join(lines)
