"""Plain deltas read in one place (``laminate._apis.plain``): each API's ``on_frame`` and
``run`` are made from its ``_plain`` (``laminate._apis.make_plain``) into its committed
``_made.py``, which is what the command writes now. The made methods give what the
reference ones (which call ``_plain`` frame by frame) give, on every fixture, fed whole
(batches) and byte by byte; ``_plain`` itself is held to the form that can be inlined; a
class with a ``_plain`` takes no other ``on_frame``; the made code shows in tracebacks."""

from __future__ import annotations

import importlib
import inspect
import itertools
import re
import sys
import tempfile
import traceback
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest

from laminate import ToolInputDelta
from laminate._apis import make_plain, registry
from laminate._apis.plain import ARGUMENTS, TEXT, Plain, PlainReader, hand_over
from laminate._core.assembler import Assembler
from laminate._normalizer import StreamNormalizer

from .support import (
    Fixture,
    Outcome,
    assert_same_outcome,
    bytes_of,
    run_chunks,
    stream_fixtures,
)

_FIXTURES = stream_fixtures()


def _handler_class(provider: str) -> type:
    return type(StreamNormalizer(provider=provider)._handler)


@pytest.mark.parametrize("name", registry.PROVIDERS)
def test_every_stream_api_reads_its_plain_deltas_in_one_place(name: str) -> None:
    """The API's handler is a PlainReader with a ``_plain`` of its own, and its
    ``on_frame`` and ``run`` are the ones made from it."""
    handler = _handler_class(name)
    assert issubclass(handler, PlainReader)
    assert "_plain" in handler.__dict__
    folder = Path(inspect.getfile(handler)).parent
    for method in ("on_frame", "run"):
        made = handler.__dict__[method]
        assert Path(made.__code__.co_filename) == folder / "_made.py", method


_MADE = make_plain.targets()


def _made_again(reader: Path) -> str:
    return make_plain.made_source(reader.read_text("utf-8"), origin=f"{reader.parent.name}/read.py")


@pytest.mark.static
def test_every_plain_reader_has_its_made_module() -> None:
    """The API folders whose handler defines ``_plain`` are the reader APIs'."""
    folders = {Path(inspect.getfile(_handler_class(name))).parent for name in registry.PROVIDERS}
    assert {path.parent for path in _MADE} == folders


@pytest.mark.static
@pytest.mark.parametrize("reader", _MADE, ids=[path.parent.name for path in _MADE])
def test_the_committed_made_module_is_what_the_command_writes(reader: Path) -> None:
    """Each ``_made.py`` made again in memory from its ``read.py``: the same header and
    the same code (the file is as ruff formats it)."""
    committed = reader.with_name("_made.py").read_text("utf-8")
    assert make_plain.same_code(committed, _made_again(reader)), (
        f"{reader.with_name('_made.py')} is not what {reader.parent.name}/read.py's _plain "
        f"makes: run `{make_plain.COMMAND}`"
    )


@pytest.mark.static
def test_the_check_finds_a_changed_made_module() -> None:
    made = _made_again(_MADE[0])
    assert make_plain.same_code(made, made)
    assert not make_plain.same_code(made.replace("return taken", "return start"), made)
    assert not make_plain.same_code(made.replace("Do not edit", "Edit"), made)
    assert make_plain.main(["--check"]) == 0


def _outcome(fixture: Fixture, *, reference: bool, whole: bool) -> Outcome:
    body = fixture.path.read_bytes()
    handler = _handler_class(fixture.provider)
    chunks = [body[:1], body[1:]] if whole else bytes_of(body)
    if not reference:
        return run_chunks(chunks, fixture.provider)
    made = handler.__dict__["on_frame"], handler.__dict__["run"]
    setattr(handler, "on_frame", PlainReader.on_frame)  # noqa: B010
    setattr(handler, "run", PlainReader.run)  # noqa: B010
    try:
        return run_chunks(chunks, fixture.provider)
    finally:
        setattr(handler, "on_frame", made[0])  # noqa: B010
        setattr(handler, "run", made[1])  # noqa: B010


@pytest.mark.parametrize("fixture", _FIXTURES, ids=[f.id for f in _FIXTURES])
@pytest.mark.parametrize("whole", [True, False], ids=["batches", "byte-by-byte"])
def test_the_made_methods_read_as_the_reference(fixture: Fixture, whole: bool) -> None:
    """The inlined ``on_frame`` and ``run`` give the events, error and response that
    calling ``_plain`` frame by frame gives."""
    made = _outcome(fixture, reference=False, whole=whole)
    assert_same_outcome(made, _outcome(fixture, reference=True, whole=whole))


# -- what _plain may hold ------------------------------------------------------------------


_READY_READER = """from laminate._apis.plain import ARGUMENTS, TEXT, PlainReader

from . import _made

from . import _made


class Reader(PlainReader):
    __slots__ = ("asked", "assembler", "others")

    def __init__(self, assembler):
        self.assembler = assembler
        self.others = []
        self.asked = []

    def _plain(self, name, obj):
{body}

    on_frame = _made.on_frame
    run = _made.run

    def _ready(self, key, kind):
        self.asked.append(key)
        return key != "shut"

    def _on_other(self, name, obj):
        self.others.append(obj)
"""


_PACKAGES = itertools.count()


def _reader(body: str, source: str | None = None) -> type:
    """A PlainReader whose ``_plain`` is ``body``, in a package of its own, with the
    ``_made.py`` the command writes for it."""
    indented = "\n".join("        " + line for line in body.strip("\n").splitlines())
    text = (source or _READER).format(body=indented)
    made = make_plain.made_source(text, plain="laminate._apis.plain")
    root = Path(tempfile.mkdtemp())
    package = f"made_reader_{next(_PACKAGES)}"
    (root / package).mkdir()
    (root / package / "__init__.py").write_text("", "utf-8")
    (root / package / "read.py").write_text(text, "utf-8")
    (root / package / "_made.py").write_text(made, "utf-8")
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(f"{package}.read")
    finally:
        sys.path.remove(str(root))
    reader: type = module.Reader
    return reader


_READER = """from laminate._apis.plain import ARGUMENTS, TEXT, PlainReader

from . import _made


class Reader(PlainReader):
    __slots__ = ("assembler", "others")

    def __init__(self, assembler):
        self.assembler = assembler
        self.others = []

    def _plain(self, name, obj):
{body}

    on_frame = _made.on_frame
    run = _made.run

    def _on_other(self, name, obj):
        self.others.append(obj)
"""


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("for x in obj:\n    return None", "For"),
        ("while obj:\n    return None", "While"),
        ("with obj:\n    return None", "With"),
        ("del obj\nreturn None", "Delete"),
        ("try:\n    x = obj['a']\nexcept KeyError:\n    return None", "try"),
        ("try:\n    return obj['a'], 'x', TEXT\nexcept KeyError:\n    pass", "try"),
        ("return obj, 'x'", "None or (key, piece"),
        ("return obj, 'x', True", "None or (key, piece"),
        ("if obj:\n    return 1, 'x', TEXT\nreturn 1, 'x', TEXT, None", "items"),
        ("pieces = obj\nreturn None", "pieces"),
        ("f = lambda: 1\nreturn None", "Lambda"),
        ("if self.others:\n    return 1, 'x', TEXT\nreturn None", "before it reads the frame"),
        ("n = self.others\nn = obj\nreturn None", "assigns n in its setup"),
    ],
)
def test_a_plain_reader_that_cannot_be_inlined_is_refused(body: str, says: str) -> None:
    with pytest.raises(TypeError, match=re.escape(says)):
        _reader(body)


# A reader of `{"k": key, "t": piece}`: arguments where the frame is named "args".
_KEYED = """
piece = None
try:
    key = obj["k"]
    piece = obj["t"]
except (KeyError, TypeError):
    pass
if piece.__class__ is not str:
    return None
if name == "args":
    return key, piece, ARGUMENTS
return key, piece, TEXT
"""


def test_a_plain_reader_reads_runs_and_frames() -> None:
    reader = _reader(_KEYED)
    asm = Assembler("test", max_tool_input_size=1 << 20)
    asm.start("", "")
    asm.tool_start("call", "id", "f")
    handler = reader(asm)
    objs = [{"k": 0, "t": "a"}, {"k": 0, "t": "b"}, {"k": "call", "t": "{}"}, {"k": 0}]
    names = [None, None, "args", None]
    assert handler.run(names, objs, 0) == 3
    assert handler.run(names, objs, 3) == 3
    handler.on_frame(None, objs[3])
    handler.on_frame(None, {"k": 0, "t": "c"})
    assert handler.others == [{"k": 0}]
    assert asm.snapshot().text() == "abc"


def test_a_block_not_ready_is_left_to_on_other() -> None:
    """``_ready`` is asked at most once per block in a run and for each delta on_frame reads;
    a delta whose block is not ready goes to ``_on_other``."""
    reader = _reader(_KEYED, _READY_READER)
    asm = Assembler("test", max_tool_input_size=1 << 20)
    asm.start("", "")
    handler = reader(asm)
    objs = [{"k": 0, "t": "a"}, {"k": 0, "t": "b"}, {"k": "shut", "t": "c"}]
    assert handler.run(None, objs, 0) == 2
    assert handler.asked == [0, "shut"]  # once for the stretch of block 0
    handler.on_frame(None, objs[2])
    assert handler.others == [objs[2]]


def test_a_run_of_many_blocks_stops_at_the_first_not_ready() -> None:
    """Blocks are asked in the order they come, each once, up to the first not ready;
    the run takes every delta before that block's first."""
    reader = _reader(_KEYED, _READY_READER)
    asm = Assembler("test", max_tool_input_size=1 << 20)
    asm.start("", "")
    for n in range(400):
        asm.open_text(n)
    handler = reader(asm)
    order = [*range(300), "shut", *range(300, 400), "shut"]
    objs = [{"k": key, "t": "x"} for key in order] + [{"k": 0, "t": "y"}]
    assert handler.run(None, objs, 0) == 300
    assert handler.asked == [*range(300), "shut"]
    assert asm.snapshot().text() == "x" * 300


def test_the_made_code_shows_in_tracebacks() -> None:
    reader = _reader(
        """
if obj["boom"]:
    return None
return None
"""
    )
    handler = reader(Assembler("test", max_tool_input_size=1 << 20))
    with pytest.raises(KeyError) as caught:
        handler.on_frame(None, {})
    made = caught.traceback[-1]
    assert Path(made.path).name == "_made.py"
    assert "obj['boom']" in "".join(traceback.format_tb(caught.value.__traceback__))


_OWN_ON_FRAME = """from laminate._apis.plain import PlainReader

from . import _made


class Reader(PlainReader):
    def _plain(self, name, obj):
        return None

    run = _made.run
{own}
"""


@pytest.mark.parametrize(
    ("own", "says"),
    [
        ("\n    def on_frame(self, name, obj):\n        pass", "so its on_frame is the one made"),
        ("    on_frame = PlainReader.on_frame", "so its on_frame is the one made"),
        ("", "so its on_frame is the one made"),
    ],
    ids=["its own", "the reference", "none"],
)
def test_a_class_with_plain_takes_no_other_on_frame(own: str, says: str) -> None:
    """A class that defines ``_plain`` and another ``on_frame`` (or none) is refused when
    it is made, naming the command: it would not read what its ``_plain`` says."""
    with pytest.raises(TypeError, match=re.escape(says)) as caught:
        _reader("", _OWN_ON_FRAME.replace("{own}", own))
    assert make_plain.COMMAND in str(caught.value)


def test_the_made_module_reads_only_what_its_module_imports_or_assigns() -> None:
    source = _READER.replace("class Reader", "def helper():\n    pass\n\n\nclass Reader")
    with pytest.raises(TypeError, match="reads helper"):
        _reader("return helper(), 'x', TEXT", source)
    keyed = _READER.replace("class Reader", "_KEY = 'k'\n\n\nclass Reader")
    reader = _reader("return _KEY, obj, TEXT", keyed)
    asm = Assembler("test", max_tool_input_size=1 << 20)
    asm.start("", "")
    asm.open_text("k")
    reader(asm).on_frame(None, "x")
    assert asm.snapshot().text() == "x"


# -- hand_over --------------------------------------------------------------------------------


def _handler_with_calls() -> Any:
    asm = Assembler("test", max_tool_input_size=1 << 20)
    asm.start("", "")
    asm.tool_start("a", "1", "f")
    asm.tool_start("b", "2", "g")
    return _reader("return None")(asm)


def test_calls_sent_turn_about_go_in_one_call() -> None:
    handler = _handler_with_calls()
    keys: list[Hashable] = ["a", "b", "a", "b"]
    taken = hand_over(handler, 5, ["{", "[", "}", "]"], keys, [(0, ARGUMENTS)])
    assert taken == 9
    events = handler.assembler.events
    deltas = [(e.index, e.fragment) for e in events if isinstance(e, ToolInputDelta)]
    assert deltas == [(0, "{"), (1, "["), (0, "}"), (1, "]")]


def test_a_refused_stretch_is_left_to_on_frame() -> None:
    handler = _handler_with_calls()
    # Text, then a piece for a call that is not open: the text is taken, the rest left.
    taken = hand_over(handler, 2, ["hi", "{}"], ["t", "closed"], [(0, TEXT), (1, ARGUMENTS)])
    assert taken == 3
    assert handler.assembler.snapshot().text() == "hi"


def test_the_plain_type_is_what_readers_give() -> None:
    delta: Plain = ("key", "piece", TEXT)
    extra: Plain = ("key", "piece", ARGUMENTS, {"usage": 1})
    assert len(delta) == 3
    assert len(extra) == 4


# -- the setup: what _plain reads of the handler, once per run ------------------------------

_SETUP = """
if self.off:
    return None
known = self.known
piece = None
try:
    key = known[obj["k"]]
    piece = obj["t"]
except (KeyError, TypeError):
    pass
if piece.__class__ is not str:
    return None
return key, piece, TEXT
"""

_SETUP_READER = """from laminate._apis.plain import ARGUMENTS, TEXT, PlainReader

from . import _made

from . import _made


class Reader(PlainReader):
    __slots__ = ("assembler", "known", "off", "others")

    def __init__(self, assembler):
        self.assembler = assembler
        self.others = []
        self.off = False
        self.known = {{"a": "block"}}

    def _plain(self, name, obj):
{body}

    on_frame = _made.on_frame
    run = _made.run

    def _on_other(self, name, obj):
        self.others.append(obj)
"""


def test_the_setup_runs_once_before_a_run_and_for_each_frame_on_its_own() -> None:
    """``_plain``'s leading statements that read only the handler run once, before
    ``run``'s loop (a ``None`` there takes nothing); ``on_frame`` reads them each time."""
    reader = _reader(_SETUP, _SETUP_READER)
    made_run: Any = reader.__dict__["run"]
    run_source = inspect.getsource(made_run)
    loop_at = run_source.index("for obj in")
    assert run_source.index("known = self.known") < loop_at
    assert run_source.index("if self.off") < loop_at
    assert run_source.count("known = self.known") == 1
    asm = Assembler("test", max_tool_input_size=1 << 20)
    asm.start("", "")
    handler = reader(asm)
    objs = [{"k": "a", "t": "x"}, {"k": "a", "t": "y"}, {"k": "b", "t": "z"}]
    assert handler.run(None, objs, 0) == 2
    handler.off = True
    assert handler.run(None, objs, 0) == 0
    handler.on_frame(None, objs[0])
    assert handler.others == [objs[0]]
    handler.off = False
    handler.on_frame(None, objs[1])
    assert asm.snapshot().text() == "xyy"


def test_a_run_reads_names_only_where_a_batch_has_them() -> None:
    """A reader of names loops without them over a batch that has none (``names`` is
    ``None``: every frame's name is ``None``) and with them otherwise; both read alike."""
    reader = _reader(_KEYED)
    objs = [{"k": 0, "t": "a"}, {"k": 0, "t": "b"}, {"k": "call", "t": "{}"}]
    for names in (None, [None, None, None], [None, None, "args"]):
        asm = Assembler("test", max_tool_input_size=1 << 20)
        asm.start("", "")
        asm.tool_start("call", "id", "f")
        handler = reader(asm)
        taken = handler.run(names, objs, 0)
        # Without a name, {"k": "call"} is text for a block that is a tool call: the
        # assembler refuses that stretch, and on_frame is left to say so.
        assert taken == (3 if names and names[2] == "args" else 2), names
        assert asm.snapshot().text() == "ab"
