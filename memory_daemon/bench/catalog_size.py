"""The size of the tool catalog a host loads into every conversation, per profile, as a real proxy lists it."""

from __future__ import annotations

import json
from dataclasses import dataclass

BYTES_PER_TOKEN = 4  # the usual estimate for English prose and JSON in LLM tokenizers (none ships offline here)
DEFAULT_PROFILE_TOKEN_TARGET = 1500


@dataclass(frozen=True)
class CatalogSize:
    profile: str
    tools: int
    json_bytes: int
    wordpieces: int  # MiniLM's WordPiece tokens: a real tokenizer, which splits JSON punctuation finer than a BPE

    @property
    def estimated_tokens(self) -> int:
        return round(self.json_bytes / BYTES_PER_TOKEN)


async def listed_tools(address: str, profile: str) -> list[dict]:
    """tools/list through a real `cortexd proxy --tools <profile>`, as the JSON the host receives."""
    from memory_daemon.client.launcher import proxy_session

    async with proxy_session(address, "bench", "--tools", profile) as host:
        listed = await host.list_tools()
    return [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in listed.tools]


def catalog_size(profile: str, tools: list[dict]) -> CatalogSize:
    text = json.dumps(tools, ensure_ascii=False, separators=(",", ":"))
    return CatalogSize(profile, len(tools), len(text.encode("utf-8")), _wordpieces(text))


def _wordpieces(text: str) -> int:
    from tokenizers import Tokenizer

    from preprocessing.encoder import ENCODER_MODEL
    from preprocessing.registry import verified_model

    tokenizer = Tokenizer.from_file(str(verified_model(ENCODER_MODEL).file("tokenizer.json")))
    tokenizer.no_truncation()
    return len(tokenizer.encode(text, add_special_tokens=False).ids)
