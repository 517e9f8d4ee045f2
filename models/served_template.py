"""Which chat template a served model is rendered with, and reading one from a file.

Annie renders every prompt for a serving engine herself, so she needs the model's own template:
the one the server offers (llama-server's `/props`), else a file named in
`models.llm_template` (a .jinja file, a Hugging Face tokenizer_config.json, or a GGUF of the
same model), else the template of a local GGUF whose vocabulary agrees with the server's. With
none of the three the served model cannot be used, and the error says how to give it one.
"""

from __future__ import annotations

import json
from pathlib import Path

from models.base import ModelError, Tokenizer
from models.chat_template import ChatTemplate
from models.served_api import ServerInfo


def served_template(
    info: ServerInfo, url: str, named: str, local: Tokenizer | None
) -> ChatTemplate:
    """The server's own template, else the file `named` in config, else the local GGUF's
    (`local` is only passed when its vocabulary agrees with the server's)."""
    if info.template:
        return ChatTemplate(
            info.template,
            info.bos_token,
            info.eos_token,
            name=f"the template {url} serves",
        )
    if named:
        return template_from_file(Path(named).expanduser())
    if local is not None and local.chat_template:
        return ChatTemplate(
            local.chat_template,
            local.bos_token,
            local.eos_token,
            name=f"the chat template of {local.name}",
        )
    raise ModelError(
        f"the model server at {url} ({info.kind}) does not offer its chat template, "
        "and none is configured (no local GGUF with the same vocabulary was found). Fix: "
        "set models.llm_template to the model's template (a .jinja file, its "
        "tokenizer_config.json, or a GGUF of the same model), or models.llm_path to a GGUF "
        "of the same model"
    )


def template_from_file(path: Path) -> ChatTemplate:
    """A chat template from a .jinja file, a Hugging Face tokenizer_config.json, or a GGUF."""
    if not path.is_file():
        raise ModelError(f"models.llm_template names {path}, which does not exist")
    if path.suffix == ".gguf":
        from models.tokenizer import GGUFTokenizer

        vocab = GGUFTokenizer(path)
        return ChatTemplate(
            vocab.chat_template, vocab.bos_token, vocab.eos_token, name=f"the template of {path}"
        )
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        source = data.get("chat_template")
        if isinstance(source, list):  # several named templates: the default one
            source = next((t["template"] for t in source if t.get("name") == "default"), None)
        if not isinstance(source, str):
            raise ModelError(f"{path} has no chat_template")

        def token(key: str) -> str:
            value = data.get(key) or ""
            return str(value.get("content", "") if isinstance(value, dict) else value)

        return ChatTemplate(source, token("bos_token"), token("eos_token"), name=str(path))
    return ChatTemplate(path.read_text(encoding="utf-8"), name=str(path))
