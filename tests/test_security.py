"""Security: TLS on TCP, bearer tokens compared in constant time, and hostile text stored verbatim by every write RPC."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import grpc
import pytest
from google.protobuf import struct_pb2

from conftest import CORTEXD, Daemon, free_port
from cortexd.connect import call_metadata, open_channel
from cortexd.v1 import cortexd_pb2 as pb
from cortexd.v1 import cortexd_pb2_grpc as pb_grpc
from memory_daemon.client.python_client import CortexdClient
from memory_daemon.client.launcher import proxy_session

NASTY = "Robert'); DROP TABLE memories;-- \" \\ % _ [a-z]* (x|y) $1 ? ${HOME} `id` ; /* */ é 中 \u202e\U0001f600"
SNAKE_CASE = re.compile(r"^[a-z0-9_]+$")


def _self_signed_certificate(directory: Path, name: str) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True,
    )
    return cert, key


def test_tls_on_tcp_serves_only_clients_that_trust_its_certificate(workdir):
    cert, key = _self_signed_certificate(workdir, "daemon")
    stranger_cert, _ = _self_signed_certificate(workdir, "stranger")
    token_file = workdir / "token"
    token_file.write_text("tls-s3cret\n")
    address = f"127.0.0.1:{free_port()}"
    daemon = Daemon(workdir)
    daemon.process = subprocess.Popen(
        CORTEXD + ["serve", "--data-dir", str(daemon.data_dir), "--listen", address, "--token-file", str(token_file),
                   "--tls-cert", str(cert), "--tls-key", str(key)],
        stdout=subprocess.DEVNULL, stderr=open(daemon.log_path, "ab"),
    )
    try:
        with CortexdClient(address, "acme", token="tls-s3cret", tls_ca=cert.read_bytes()) as client:
            client.wait_ready(timeout=60)
            saved = client.save_memory(content="sent over TLS").memory
            assert client.open_memories(ids=[saved.id]).memories[0].content == "sent over TLS"

        for untrusting in (open_channel(address), open_channel(address, stranger_cert.read_bytes())):
            with untrusting as channel:
                with pytest.raises(grpc.RpcError) as raised:
                    pb_grpc.MemoryServiceStub(channel).GetStatus(
                        pb.GetStatusRequest(), metadata=call_metadata("acme", "tls-s3cret"), timeout=10)
                assert raised.value.code() == grpc.StatusCode.UNAVAILABLE

        with open_channel(address, cert.read_bytes()) as channel:  # TLS does not replace the token
            stub = pb_grpc.MemoryServiceStub(channel)
            for token in (None, "wrong", "tls-s3cre", "tls-s3cret-and-more"):
                with pytest.raises(grpc.RpcError) as raised:
                    stub.GetStatus(pb.GetStatusRequest(), metadata=call_metadata("acme", token), timeout=10)
                assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED

        async def through_the_proxy():  # a host's proxy reaches the TLS daemon too
            async with proxy_session(address, "acme", "--token-file", str(token_file), "--tls-ca", str(cert)) as mcp:
                return await mcp.call_tool("search_memory", {"query": "sent over TLS"})

        result = asyncio.run(through_the_proxy())
        assert not result.is_error and "sent over TLS" in result.content[0].text
        assert "tls-s3cret" not in daemon.log()
    finally:
        daemon.stop()


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--listen", "unix:{root}/s.sock", "--tls-cert", "{cert}", "--tls-key", "{key}"], "apply to TCP only"),
        (["--listen", "127.0.0.1:{port}", "--token-file", "{token}", "--tls-cert", "{cert}"], "go together"),
        (["--listen", "127.0.0.1:{port}", "--token-file", "{token}", "--tls-cert", "{token}", "--tls-key", "{key}"],
         "--tls-cert {token}: no PEM certificate"),
        (["--listen", "127.0.0.1:{port}", "--token-file", "{token}", "--tls-cert", "{cert}", "--tls-key", "{root}/nope"],
         "--tls-key {root}/nope: No such file"),
    ],
)
def test_tls_misconfiguration_is_refused_naming_the_option(workdir, arguments, expected):
    cert, key = _self_signed_certificate(workdir, "daemon")
    token = workdir / "token"
    token.write_text("t\n")
    values = {"root": workdir, "cert": cert, "key": key, "token": token, "port": free_port()}
    result = subprocess.run(CORTEXD + ["serve", "--data-dir", str(workdir / "data")]
                            + [a.format(**values) for a in arguments], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert expected.format(**values) in result.stderr


def test_the_bearer_token_is_compared_in_constant_time(monkeypatch):
    from memory_daemon.api import interceptors

    compared = []
    real = interceptors.hmac.compare_digest
    monkeypatch.setattr(interceptors.hmac, "compare_digest", lambda a, b: compared.append((a, b)) or real(a, b))

    async def continuation(_details):
        return grpc.unary_unary_rpc_method_handler(lambda request, context: request)

    checker = interceptors.BearerTokenInterceptor("right")
    for presented in ("Bearer right", "Bearer wrong"):
        details = SimpleNamespace(method="/cortexd.v1.MemoryService/GetStatus",
                                  invocation_metadata=(("authorization", presented),))
        asyncio.run(checker.intercept_service(continuation, details))
    assert compared == [(b"Bearer right", b"Bearer right"), (b"Bearer wrong", b"Bearer right")]


def test_hostile_text_in_every_string_field_of_the_write_rpcs_is_stored_verbatim(daemon):
    meta = struct_pb2.Struct()
    meta.update({NASTY: NASTY})
    with daemon.client("acme") as client:
        saved = client.save_memory(content=NASTY, tags=[NASTY[:60]], entities=[NASTY], source=NASTY, context=NASTY,
                                   session_id=NASTY, meta=meta, extract_facts=False).memory
        (memory,) = client.open_memories(ids=[saved.id]).memories
        assert (memory.content, memory.source, memory.context, memory.session_id) == (NASTY,) * 4
        assert list(memory.tags) == [NASTY[:60].lower()] and list(memory.entities) == [NASTY]
        assert dict(memory.meta) == {NASTY: NASTY}

        fact = client.upsert_fact(subject=NASTY, predicate=NASTY, object=NASTY + " (object)", source=NASTY,
                                  create_entities=True).fact
        episode = client.record_episode(kind="incident", title=NASTY, body=NASTY, files=[NASTY], entities=[NASTY],
                                        create_entities=True).episode
        about = client.query_entity(entity=NASTY)
        assert about.entity.name == NASTY
        (active,) = about.active
        assert (active.id, active.subject, active.object, active.source) == (fact.id, NASTY, NASTY + " (object)", NASTY)
        assert SNAKE_CASE.match(active.predicate), "a predicate is normalised to snake_case, never used as SQL"
        (stored_episode,) = about.episodes
        assert (stored_episode.id, stored_episode.title, stored_episode.body) == (episode.id, NASTY, NASTY)
        assert list(stored_episode.files) == [NASTY] and list(stored_episode.entities) == [NASTY]

        decision = client.log_decision(type=NASTY, question=NASTY, options=[NASTY, "plain"], chosen=NASTY,
                                       reasoning=NASTY, session_id=NASTY).decision
        (listed,) = client.list_decisions(session_id=NASTY).decisions
        assert (listed.id, listed.question, listed.chosen, listed.reasoning, listed.session_id) == \
            (decision.id, NASTY, NASTY, NASTY, NASTY)
        assert list(listed.options) == [NASTY, "plain"] and SNAKE_CASE.match(listed.type)

        relation = client.create_relation(from_id=saved.id, relation=NASTY, to_id=episode.id).relation
        assert SNAKE_CASE.match(relation.relation)
        assert any(r.id == relation.id and (r.from_id, r.to_id) == (saved.id, episode.id)
                   for r in client.read_graph().relations)

        for rejected in (
            lambda: client.save_memory(content="plain", supersedes=NASTY),
            lambda: client.create_relation(from_id=NASTY, relation="see_also", to_id=saved.id),
            lambda: client.upsert_fact(subject="a", predicate="b", object="c", object_kind=NASTY, create_entities=True),
            lambda: client.record_episode(kind=NASTY, title="t"),
            lambda: client.record_episode(kind="adr", title="t", occurred_at=NASTY),
        ):
            with pytest.raises(grpc.RpcError) as raised:
                rejected()
            assert raised.value.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND)

        assert client.get_status().memory_count == 1
        assert client.verify_integrity().ok
