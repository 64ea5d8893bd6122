"""The open protocol's one-pass decode of binary values (src_cython/values/text.pxi
`go_unquote_json`): Go ``strconv.Quote`` text inside a JSON string, undone in one walk.  Where it
answers, it must answer exactly what the two passes it stands for answer (``json_unescape``, then
``go_unquote``); everything else (every error, rare escapes) it must hand back untouched, and the
two passes then decide, with their own error text.  Typical Go-quoted binary must stay on the
one-pass path."""
from __future__ import annotations

import importlib
import json
import random

import pytest

from ticdc_fast import _impl
from ticdc_fast.testing.open_encoder import go_quote

pytestmark = pytest.mark.cython


def _json_content(text: str) -> bytes:
    """The bytes between the quotes of a JSON string, as an encoder writes them."""
    return json.dumps(text, ensure_ascii=False).encode("utf-8")[1:-1]


def _two_passes(core, content: bytes):
    raw = json.loads(b'"' + content + b'"').encode("utf-8", "surrogatepass")
    return core._byte_codec("go", raw)


def _agree(core, content: bytes):
    one = core._go_unquote_json(content)
    two = _two_passes(core, content)
    if one is not None:
        assert isinstance(two, bytes), (content, two)
        assert one == two, content
    return one


def test_go_quoted_binary_takes_one_pass_and_agrees():
    core = importlib.import_module("ticdc_fast._core")
    rnd = random.Random(13)
    for n in list(range(0, 40)) + [64, 255, 1000]:
        for _ in range(30):
            data = bytes(rnd.getrandbits(8) for _ in range(n))
            content = _json_content(go_quote(data))
            assert _agree(core, content) == data, data


def test_every_single_byte_and_pairs_with_html_escapes():
    core = importlib.import_module("ticdc_fast._core")
    for b in range(256):
        data = bytes([b])
        for content in (_json_content(go_quote(data)),
                        json.dumps(go_quote(data)).encode()[1:-1]):   # ASCII-only JSON: \\u escapes
            one = _agree(core, content)
            assert one in (None, data)
        assert core._go_unquote_json(_json_content(go_quote(b"a" + data + b"z"))) == b"a" + data + b"z"
    # Go's JSON writer escapes <, > and & as \u003c, \u003e, \u0026
    assert core._go_unquote_json(b"a\\u003cb\\u003e\\u0026") == b"a<b>&"
    # Go's own \u and \U escapes of runes it does not print
    assert core._go_unquote_json(b"\\\\u00ad\\\\U0001f600") == "\u00ad\U0001f600".encode()


@pytest.mark.parametrize("content", [
    b"\\\\", b"\\\\x", b"\\\\x4", b"\\\\xZZ", b"\\\\q", b"\\\\101", b"\\\\ud800", b"\\\\U00110000", b"\\\\u12",
    b"\\\"", b"\\n", b"\\\\\\/", b"\\\\\\n", b"\\u005c", b"\\u0022", b"\\u000a", b"\\ud83d\\ude00",
    b"\\\\x\\u0034\\u0031", b"ok\\\\", b"\\\\\\\\\\\\",
])
def test_what_it_leaves_to_the_two_passes(content):
    core = importlib.import_module("ticdc_fast._core")
    assert core._go_unquote_json(content) is None
    _two_passes(core, content)      # decided there: bytes or the refusal's text


def test_random_mixtures_of_escapes_agree():
    core = importlib.import_module("ticdc_fast._core")
    rnd = random.Random(5)
    pieces = [b"a", b"\xc3\xa9", b"\\\\", b"\\\\\\\\", b"\\\\\\\"", b"\\\\x", b"4", b"f", b"G", b"\\\\n",
              b"\\n", b"\\t", b"\\/", b"\\u0041", b"\\u00e9", b"\\u003c", b"\\\"", b"\\\\0", b"7", b"\\\\u",
              b"\\\\a", b"\\\\v", b"\\b", b"\\f", b"\\r"]
    answered = 0
    for _ in range(20000):
        content = b"".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
        try:
            json.loads(b'"' + content + b'"')
        except ValueError:
            continue
        if _agree(core, content) is not None:
            answered += 1
    assert answered > 2000


@pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")
def test_escapes_at_every_offset_decode_alike_in_both_implementations():
    """Through the open decoder: text and binary values with an escape at every offset around the
    8-byte steps of json_unescape and go_unquote_json, generic output of core and twin equal,
    and equal to what was written."""
    import base64

    import ticdc_fast
    from ticdc_fast import _constants as C
    from ticdc_fast.testing.open_encoder import Col, OpenEncoder, RowChange

    events, expected = [], []
    for n in range(0, 26):
        for special in ("\"", "\\", "\n", "<", "é", "\u2028"):
            text = "a" * n + special + "b" * (25 - n)
            blob = b"x" * n + bytes([0x80 + n, 0x5C, 0x22, 0x0A]) + b"y" * (25 - n)
            events.append(RowChange("db", "t", 5, after=[Col("id", C.T_LONG, n, 1 | 2 | 8),
                                                         Col("s", C.T_VARCHAR, text, 0),
                                                         Col("b", C.T_VARCHAR, blob, 1)]))
            expected.append({"id": str(n), "s": text, "b": base64.b64encode(blob).decode()})
    msgs = OpenEncoder().encode(events)
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    out = [ticdc_fast.OpenDecoder(implementation=i).decode(keys, values) for i in ("cython", "python")]
    assert out[0].equals(out[1])
    assert [dict(r) for r in out[0].column("after").to_pylist()] == expected
