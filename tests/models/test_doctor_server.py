"""`doctor` on a served LLM: a real llama-cpp-python server on the shipped model, and a port
where nothing listens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.commands.doctor import check_role, print_text
from bot.commands.doctor_network import exposure
from config import load_settings
from models import ROLES
from testkit.llama_server import LlamaCppServer, free_port
from tests.conftest import served_settings


def test_doctor_checks_the_serving_engine(
    served_smollm2: LlamaCppServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = served_settings(served_smollm2, tmp_path, 2048)
    entry = check_role("llm", settings)
    assert entry["ok"] is True, entry
    assert (entry["backend"], entry["url"]) == ("server", served_smollm2.url)
    assert (entry["engine"], entry["model"]) == ("llama-cpp-python", "served")
    # llama-cpp-python's server does not say its context length: reported as unknown.
    assert entry["context"] == {"server": None, "window": 2048}
    assert entry["tokenizer"]["local"] == served_smollm2.model.name
    assert entry["tokenizer"]["agrees"] is True
    assert entry["tokenizer"]["counts_with"] == "local vocabulary"
    assert entry["tokenizer"]["sample_tokens"] > 10
    assert entry["sessions"] == {"engine_slots": None, "max_sessions": 2, "allowed": 2}
    assert entry["cache_figures"] is False  # this engine never reports them
    assert entry["prompt_tokens"] > 0 and entry["generated_tokens"] > 0
    assert "memory" not in entry  # the weights and cache live on the server
    assert json.loads(json.dumps(entry)) == entry  # as `doctor --json` prints it
    print_text(_report(entry))
    text = capsys.readouterr().out
    assert "[ok  ] llm" in text and f"server: {served_smollm2.url}" in text
    assert "context: not reported by llama-cpp-python; Annie's window 2,048" in text
    assert "agrees with the server; counted locally" in text
    assert "does not say how many requests it runs at once" in text and "2 allowed" in text
    assert "reused/evaluated are unknown (shown as ?)" in text
    assert "KV cache" not in text


def test_without_a_local_gguf_the_server_tokenizer_is_used(
    served_smollm2: LlamaCppServer, tmp_path: Path
) -> None:
    settings = served_settings(
        served_smollm2,
        tmp_path,
        2048,
        llm_path=str(tmp_path / "not-here.gguf"),
        llm_template=str(served_smollm2.model),  # the template from a file, as vLLM needs
    )
    entry = check_role("llm", settings)
    assert entry["ok"] is True, entry
    assert entry["tokenizer"]["local"] is None and entry["tokenizer"]["agrees"] is None
    assert entry["tokenizer"]["counts_with"] == "server tokenizer"


def test_a_vocabulary_of_another_model_is_named(
    served_smollm2: LlamaCppServer, qwen35_path: Path, tmp_path: Path
) -> None:
    # Without a template of its own, another model's GGUF cannot serve: that is the error.
    settings = served_settings(served_smollm2, tmp_path, 2048, llm_path=str(qwen35_path))
    entry = check_role("llm", settings)
    assert entry["ok"] is False and "chat template" in entry["error"], entry
    settings = served_settings(
        served_smollm2,
        tmp_path,
        2048,
        llm_path=str(qwen35_path),
        llm_template=str(served_smollm2.model),
    )
    entry = check_role("llm", settings)
    assert entry["tokenizer"]["local"] == qwen35_path.name
    assert entry["tokenizer"]["agrees"] is False
    assert entry["tokenizer"]["counts_with"] == "server tokenizer"


def test_an_unreachable_server_is_named_with_the_fix(
    annie_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    settings = load_settings(models={"llm_backend": "server", "llm_url": url})
    entry = check_role("llm", settings)
    assert entry["ok"] is False
    assert f"cannot reach the model server at {url}" in entry["error"]
    assert "Fix: start the server" in entry["error"] and 'llm_backend = "local"' in entry["error"]
    print_text(_report(entry))
    text = capsys.readouterr().out
    assert "[FAIL] llm" in text and f"error:  cannot reach the model server at {url}" in text


def _report(llm: dict[str, object]) -> dict[str, object]:
    """A report with `llm` and the other roles passing, as `doctor.report` shapes it."""
    data: dict[str, object] = {"versions": {}, "device": "cpu", "home": "/tmp/annie"}
    data["gpu"] = {"checked": False}  # off CUDA: not checked
    data["network"] = exposure(load_settings())  # loopback only, over plain HTTP
    data["calendar"] = {"ok": True, "configured": False}
    data.update({role: {"ok": True} for role in ROLES})
    data["llm"] = llm
    return data
