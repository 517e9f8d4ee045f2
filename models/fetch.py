"""`python -m models.fetch`: choose the LLM and speech models now, downloading where needed.

start.sh runs it as its own step on the first run, so a multi-gigabyte download happens there,
with its progress bar, estimate and timing, instead of inside the first `serve`. One line per
role says which file and why. A download that was wanted and failed exits 1 with the reason
(the resolver would otherwise quietly fall back to the small packaged model). With the chat
model on a serving engine (`models.llm_backend = "server"`) the LLM is not fetched at all: the
engine holds the weights, and the template and vocabulary come from it, from
`models.llm_template`, or from a GGUF already on this machine.
"""

from __future__ import annotations

import sys

from config import load_settings
from models.base import ModelError
from models.download_progress import human_size
from models.resolver import resolve

FETCHED = ("llm", "stt")


def main() -> int:
    settings = load_settings()
    failed = False
    for role in FETCHED:
        if role == "llm" and settings.models.llm_backend == "server":
            print(
                f"    llm: served by {settings.models.llm_url or '(models.llm_url not set)'} "
                '(models.llm_backend = "server"): no download'
            )
            continue
        try:
            got = resolve(role, settings)
        except ModelError as exc:
            print(f"    {role}: {exc}", file=sys.stderr)
            failed = True
            continue
        print(f"    {role}: {got.path} ({human_size(got.size_bytes)}), {got.reason}")
        if "download failed" in got.reason:
            failed = True
    if failed:
        print(
            "    a model could not be fetched (see above); fix it and run again, or set "
            "ANNIE_MODELS__ALLOW_DOWNLOAD=false to use the small packaged models",
            file=sys.stderr,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
