"""Image parts: inspect, ADK, Vertex and contract cases carry them; providers send them or the run refuses.

The wire is checked on a real local server (tests/fakeserver.py records every request body).
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import pytest
from _shared import shared_path
from factories import rows_of, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.errors import DatasetError, InputError
from goldenkit.formats import import_dataset, normalize_case
from goldenkit.providers._adk_events import as_content
from goldenkit.providers._base import get_provider
from goldenkit.providers._images import check_images, image_rows
from goldenkit.providers._ollama import encode_messages as ollama_messages
from goldenkit.providers._openai import encode_messages as openai_messages
from goldenkit.records import Case, ImagePart, Message, Turn


def png(width: int = 1, height: int = 1) -> bytes:
    """A valid PNG of black pixels, written by hand (signature, IHDR, IDAT, IEND)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + b"\x00\x00\x00" * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


PNG = png()
PNG_B64 = base64.b64encode(PNG).decode()
URLSAFE = base64.urlsafe_b64encode(PNG).decode().rstrip("=")  # how pydantic writes genai Blob.data, unpadded


# --- reading ------------------------------------------------------------------------------------


def test_inspect_images_file_embeds_the_named_image_files(tmp_path):
    # the shape of inspect_ai's examples/images/images.jsonl: ContentImage parts naming files beside it
    src = tmp_path / "src"
    src.mkdir()
    (src / "ballons.png").write_bytes(PNG)
    (src / "bike.png").write_bytes(png(2, 1))
    (src / "images.jsonl").write_text(
        '{ "input": [ { "role": "user", "content": [{ "type": "text", "text": "How many ballons are in this '
        'picture?"}, { "type": "image", "image": "ballons.png"} ]}], "target": "3" }\n'
        '{ "input": [ { "role": "user", "content": [{ "type": "text", "text": "What is this a picture of?"}, '
        '{ "type": "image", "image": "bike.png"} ]}], "target": ["bike", "bicycle"] }\n'
    )
    out = import_dataset(src / "images.jsonl", tmp_path / "ds", "inspect")
    ds = read_dataset(out)
    first = ds.case(ds.ids[0])
    assert first.prompt == "How many ballons are in this picture?"
    assert first.turns[0].images == (ImagePart("image/png", data=PNG),)
    assert ds.case(ds.ids[1]).turns[0].images[0].data == png(2, 1)
    row = json.loads((out / "dataset.jsonl").read_text().splitlines()[0])
    assert row["case"]["images"] == [{"mime_type": "image/png", "data": PNG_B64}]
    assert row["case"]["original"]["input"][0]["content"][1]["image"] == "ballons.png"  # kept as written
    manifest = json.loads((out / "dataset.json").read_text())
    assert "2 image file(s)" in json.dumps(manifest)


def test_inspect_missing_image_file_is_an_error_naming_the_line(tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_text('{"input": [{"role": "user", "content": [{"type": "image", "image": "gone.png"}]}], "target": "x"}\n')
    with pytest.raises(DatasetError, match=r"s\.jsonl:1: .*gone\.png"):
        import_dataset(f, tmp_path / "ds", "inspect")


def test_inspect_url_and_data_uri_images_and_history_images(tmp_path):
    f = tmp_path / "s.jsonl"
    rec = {
        "input": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "first"}, {"type": "image", "image": "https://example.org/a.jpg"}],
            },
            {"role": "assistant", "content": "ok"},
            {
                "role": "user",
                "content": [
                    {"type": "image", "image": f"data:image/png;base64,{PNG_B64}"},
                    {"type": "text", "text": "and this?"},
                ],
            },
        ],
        "target": "cat",
    }
    f.write_text(json.dumps(rec) + "\n")
    ds = read_dataset(import_dataset(f, tmp_path / "ds", "inspect"))
    case = ds.case(ds.ids[0])
    assert case.history[0].images == (ImagePart("image/jpeg", url="https://example.org/a.jpg"),)
    assert case.turns[0].images == (ImagePart("image/png", data=PNG),)
    assert case.images == case.history[0].images + case.turns[0].images


@pytest.mark.parametrize(
    "name",
    [
        "tests__dataset__test_dataset__dataset.jsonl",
        "src__inspect_ai__dataset___examples__security_guide.jsonl",
        "tests__dataset__test_dataset__samples.jsonl",
    ],
)
def test_text_only_inspect_files_import_without_images(tmp_path, name):
    out = import_dataset(shared_path("interop", "UKGovernmentBEIS__inspect_ai", name), tmp_path / "ds", "inspect")
    assert '"images"' not in (out / "dataset.jsonl").read_text()
    ds = read_dataset(out)
    assert all(not ds.case(rid).images for rid in ds.ids)


def test_real_adk_files_with_null_media_fields_carry_no_images(tmp_path):
    # roll_die.test.json writes "inline_data": null / "file_data": null on every Part
    src = shared_path(
        "interop", "google__adk-python", "tests__integration__fixture__hello_world_agent__roll_die.test.json"
    )
    assert '"inline_data": null' in src.read_text()
    ds = read_dataset(import_dataset(src, tmp_path / "ds", "adk"))
    assert len(ds) > 0 and all(not ds.case(rid).images for rid in ds.ids)


def test_adk_user_content_inline_and_file_data_both_casings():
    raw = {
        "eval_id": "e1",
        "conversation": [
            {
                "user_content": {
                    "role": "user",
                    "parts": [
                        {"text": "what is in the picture?", "inline_data": None},
                        {"inline_data": {"mime_type": "image/png", "data": URLSAFE}},
                        {"fileData": {"fileUri": "gs://bucket/cat.jpg", "mimeType": "image/jpeg"}},
                    ],
                },
                "final_response": {"role": "model", "parts": [{"text": "a cat"}]},
            }
        ],
    }
    case = normalize_case(raw)
    assert case.prompt == "what is in the picture?"
    assert case.turns[0].images == (
        ImagePart("image/png", data=PNG),
        ImagePart("image/jpeg", url="gs://bucket/cat.jpg"),
    )


def test_vertex_prompt_agent_data_and_request_images():
    inline = {"inline_data": {"mime_type": "image/png", "data": PNG_B64}}
    prompt_case = normalize_case(
        {"prompt": {"role": "user", "parts": [{"text": "describe"}, inline]}, "reference": "x"}
    )
    assert prompt_case.shape == "vertex" and prompt_case.turns[0].images[0].data == PNG
    agent = {
        "agents": {"a": {"instruction": "help"}},
        "turns": [
            {
                "events": [
                    {"author": "user", "content": {"role": "user", "parts": [{"text": "look"}, inline]}},
                    {"author": "a", "content": {"role": "model", "parts": [{"text": "a pixel"}]}},
                ]
            }
        ],
    }
    agent_case = normalize_case({"agent_data": agent})
    assert agent_case.turns[0].images == (ImagePart("image/png", data=PNG),)
    request = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "q"},
                    {"type": "image_url", "image_url": {"url": "https://example.org/x.webp"}},
                ],
            }
        ]
    }
    req_case = normalize_case({"request": request})
    assert req_case.turns[0].images == (ImagePart("image/webp", url="https://example.org/x.webp"),)


def test_contract_images_on_prompt_turns_and_history():
    case = normalize_case(
        {
            "turns": [{"user": "one", "images": [{"url": "https://example.org/a.png"}]}, "two"],
            "history": [{"role": "user", "content": "before", "images": [f"data:image/png;base64,{PNG_B64}"]}],
        }
    )
    assert case.turns[0].images == (ImagePart("image/png", url="https://example.org/a.png"),)
    assert case.turns[1].images == ()
    assert case.history[0].images[0].data == PNG
    assert case.expect.get("turns") is None  # images on a turn object are not a check


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ({"prompt": "p", "images": ["pics/cat.png"]}, "neither a URL nor a data URI"),
        ({"prompt": "p", "images": [{"mime_type": "image/png", "data": "not base64!"}]}, "not valid base64"),
        ({"prompt": "p", "images": [{"data": PNG_B64}]}, "no mime_type"),
        ({"turns": ["a"], "images": ["https://example.org/a.png"]}, "turn objects"),
        ({"prompt": "p", "images": "https://example.org/a.png"}, "must be a list"),
    ],
)
def test_bad_contract_images_are_case_errors(case, message):
    with pytest.raises(DatasetError, match=message):
        normalize_case(case, row_id="r1")


def test_text_only_cases_are_unchanged():
    case = normalize_case({"prompt": "hello", "expect": {"must_contain": ["hi"]}})
    assert case.images == () and case.turns[0].images == ()
    # the exact body a text-only message has always had: content is a string, no images key
    msg = Message("user", "hello")
    assert openai_messages([msg]) == [{"role": "user", "content": "hello"}]
    assert ollama_messages([msg]) == [{"role": "user", "content": "hello"}]


# --- encoding and the refusal -------------------------------------------------------------------


def test_adk_content_carries_inline_and_file_data_parts():
    content = as_content(
        "user", "what?", (ImagePart("image/png", data=PNG), ImagePart("image/jpeg", url="gs://b/c.jpg"))
    )
    assert content.parts[0].text == "what?"
    assert content.parts[1].inline_data.data == PNG and content.parts[1].inline_data.mime_type == "image/png"
    assert content.parts[2].file_data.file_uri == "gs://b/c.jpg"


def _image_case(rid: str, image: ImagePart) -> Case:
    return Case(rid, "contract", (Turn("what is this?", images=(image,)),))


def test_check_images_names_rows_and_reasons():
    cases = {
        "text": Case("text", "contract", (Turn("hi"),)),
        "url": _image_case("url", ImagePart("image/png", url="https://example.org/a.png")),
        "bytes": _image_case("bytes", ImagePart("image/png", data=PNG)),
        "pdf": _image_case("pdf", ImagePart("application/pdf", data=b"%PDF")),
    }
    assert image_rows(cases) == {"url": 1, "bytes": 1, "pdf": 1}
    ollama = get_provider("ollama", model="m", host="http://127.0.0.1:9")
    openai = get_provider("openai", model="m", base_url="http://127.0.0.1:9")
    with pytest.raises(InputError, match=r'2 rows carry images .*"url", "pdf"') as info:
        check_images(cases, ollama)
    assert "does not fetch" in str(info.value)
    with pytest.raises(InputError, match=r'1 row carries images .*application/pdf.*: "pdf"'):
        check_images(cases, openai)
    with pytest.raises(InputError, match=r'3 rows .*declared without vision.*"url", "bytes", "pdf"'):
        check_images(cases, openai, vision=False)
    check_images({"bytes": cases["bytes"], "url": cases["url"]}, openai)  # both sendable: no error
    check_images({"text": cases["text"]}, openai, vision=False)  # text only: nothing to refuse
    gs = {"gs": _image_case("gs", ImagePart("image/png", url="gs://b/a.png"))}
    with pytest.raises(InputError, match="only over http"):
        check_images(gs, openai)


def _dataset(root: Path, cases: dict[str, dict]) -> Path:
    return write_dataset(root, rows_of(cases), name="img", version="1")


IMAGE_ROWS = {
    "text": {"prompt": "plain question", "expect": {"must_contain": ["ok"]}},
    "bytes": {
        "prompt": "how many pixels?",
        "images": [{"mime_type": "image/png", "data": PNG_B64}],
        "expect": {"must_contain": ["ok"]},
    },
}


def test_openai_run_sends_image_url_parts_on_the_wire(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rows = {**IMAGE_ROWS, "url": {"prompt": "and here?", "images": ["https://example.org/cat.jpg"]}}
    ds = _dataset(tmp_path, rows)
    with FakeModelServer() as srv:
        srv.default = Reply.text("ok")
        code = main(
            [
                "run",
                str(ds),
                "--provider",
                "openai",
                "--model",
                "m",
                "--base-url",
                srv.url,
                "--run-id",
                "r",
                "--max-in-flight",
                "1",
                "--quiet",
                "--max-ungradable",
                "0.5",
            ]
        )
        bodies = {
            r.json["messages"][-1]["content"]
            if isinstance(r.json["messages"][-1]["content"], str)
            else r.json["messages"][-1]["content"][0]["text"]: r.json
            for r in srv.requests
        }
    assert code == 0, capsys.readouterr().err
    assert bodies["plain question"]["messages"] == [{"role": "user", "content": "plain question"}]
    assert bodies["how many pixels?"]["messages"][0]["content"] == [
        {"type": "text", "text": "how many pixels?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
    ]
    assert bodies["and here?"]["messages"][0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "https://example.org/cat.jpg"},
    }


def test_ollama_run_sends_base64_images_on_the_wire(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ds = _dataset(tmp_path, IMAGE_ROWS)
    with FakeModelServer() as srv:
        srv.default = Reply.text("ok")
        code = main(
            ["run", str(ds), "--provider", "ollama", "--model", "m", "--base-url", srv.url, "--run-id", "r", "--quiet"]
        )
        sent = [r.json["messages"][0] for r in srv.requests]
    assert code == 0, capsys.readouterr().err
    by_text = {m["content"]: m for m in sent}
    assert by_text["how many pixels?"]["images"] == [PNG_B64]
    assert "images" not in by_text["plain question"]


def test_run_refuses_before_the_first_call_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ds = _dataset(tmp_path, {**IMAGE_ROWS, "url": {"prompt": "q", "images": ["https://example.org/cat.jpg"]}})
    with FakeModelServer() as srv:
        code = main(["run", str(ds), "--provider", "ollama", "--model", "m", "--base-url", srv.url, "--run-id", "r1"])
        assert srv.count() == 0
    err = capsys.readouterr().err
    assert code == 1 and '"url"' in err and "does not fetch" in err and "Traceback" not in err
    assert not (tmp_path / "results" / "r1").exists()
    with FakeModelServer() as srv:
        code = main(
            [
                "run",
                str(ds),
                "--provider",
                "openai",
                "--model",
                "m",
                "--base-url",
                srv.url,
                "--run-id",
                "r2",
                "--no-vision",
            ]
        )
        assert srv.count() == 0
    err = capsys.readouterr().err
    assert code == 1 and '"bytes", "url"' in err and "without vision" in err


def test_vision_false_in_the_config_and_the_agent_version_unchanged(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ds = _dataset(tmp_path, {"text": IMAGE_ROWS["text"]})
    (ds / "goldenkit.toml").write_text("[run]\nvision = false\n")
    with FakeModelServer() as srv:
        srv.default = Reply.text("ok")
        assert (
            main(
                [
                    "run",
                    str(ds),
                    "--provider",
                    "openai",
                    "--model",
                    "m",
                    "--base-url",
                    srv.url,
                    "--run-id",
                    "a",
                    "--quiet",
                ]
            )
            == 0
        )
        (ds / "goldenkit.toml").unlink()
        assert (
            main(
                [
                    "run",
                    str(ds),
                    "--provider",
                    "openai",
                    "--model",
                    "m",
                    "--base-url",
                    srv.url,
                    "--run-id",
                    "b",
                    "--quiet",
                ]
            )
            == 0
        )
    a = json.loads((tmp_path / "results" / "a" / "run.json").read_text())
    b = json.loads((tmp_path / "results" / "b" / "run.json").read_text())
    assert a["agent_version"]["prompt_sha256"] == b["agent_version"]["prompt_sha256"]
    assert "vision" not in json.dumps(a["provider"])
    (ds / "dataset.jsonl").write_text(
        (ds / "dataset.jsonl").read_text()
        + json.dumps({"id": "img", "slice": "s", "split": "dev", "case": IMAGE_ROWS["bytes"]})
        + "\n"
    )
    (ds / "goldenkit.toml").write_text("[run]\nvision = false\n")
    assert (
        main(
            [
                "run",
                str(ds),
                "--provider",
                "openai",
                "--model",
                "m",
                "--base-url",
                "http://127.0.0.1:9",
                "--run-id",
                "c",
            ]
        )
        == 1
    )
    assert '"img"' in capsys.readouterr().err


def test_callable_gets_the_images_in_the_case(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "vision_agent.py").write_text(
        "def answer(case):\n"
        "    return f'ok {len(case.images)} image(s) of {sum(len(i.data or b\"\") for i in case.images)} bytes'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = _dataset(tmp_path, IMAGE_ROWS)
    code = main(
        ["run", str(ds), "--provider", "callable", "--callable", "vision_agent:answer", "--run-id", "c", "--quiet"]
    )
    assert code == 0, capsys.readouterr().err
    lines = [json.loads(x) for x in (tmp_path / "results" / "c" / "outcomes.jsonl").read_text().splitlines()]
    answers = {rec["row_id"]: json.dumps(rec["response"]) for rec in lines}
    assert f"ok 1 image(s) of {len(PNG)} bytes" in answers["bytes"]
    assert "ok 0 image(s)" in answers["text"]


def test_dataset_validate_counts_and_names_rows_with_images(tmp_path, capsys):
    two = {"prompt": "q", "images": ["https://example.org/a.png", "https://example.org/b.png"]}
    ds = _dataset(tmp_path, {**IMAGE_ROWS, "two": two})
    assert main(["dataset", "validate", str(ds)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ok: img 1: 3 rows")
    assert out[1].startswith('images: 2 rows carry 3 images: "bytes", "two"')
    text_only = tmp_path / "t"
    text_only.mkdir()
    assert main(["dataset", "validate", str(_dataset(text_only, {"text": IMAGE_ROWS["text"]}))]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1


def test_adk_agent_receives_the_images_as_parts():
    pytest.importorskip("google.adk")
    from adk_scripted.scripted_llm import ScriptedLlm
    from google.adk.agents import LlmAgent
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    from goldenkit.providers._adk import AdkProvider

    class SeeingLlm(ScriptedLlm):
        """Answers with what it was sent: the user texts, inline bytes and file URIs."""

        async def generate_content_async(self, llm_request, stream=False):  # type: ignore[override]
            seen = []
            for content in llm_request.contents:
                for p in content.parts or []:
                    if p.inline_data is not None:
                        seen.append(f"{p.inline_data.mime_type}:{len(p.inline_data.data)}")
                    elif p.file_data is not None:
                        seen.append(p.file_data.file_uri)
                    elif p.text:
                        seen.append(p.text)
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=" | ".join(seen))]))

    agent = LlmAgent(name="eyes", model=SeeingLlm(model="eyes"), instruction="look")
    case = Case(
        "c",
        "adk",
        (
            Turn("first", images=(ImagePart("image/png", data=PNG),)),
            Turn("second", images=(ImagePart("image/jpeg", url="gs://b/cat.jpg"),)),
        ),
    )
    import asyncio

    r = asyncio.run(AdkProvider(agent).complete(case))
    assert r.turns[0].text == f"first | image/png:{len(PNG)}"
    assert r.turns[1].text.endswith("second | gs://b/cat.jpg")
