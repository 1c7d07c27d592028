"""hipdnn.Handle: lazily created per-engine state, stream forwarding, close, defaults."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from hipdnn import GraphStateError, Handle, default_handle


class _State:
    def __init__(self, handle: Handle) -> None:
        self.device = handle.device
        self.streams: list[Any] = []
        self.closed = 0
        self.syncs = 0

    def set_stream(self, stream: Any) -> None:
        self.streams.append(stream)

    def synchronize(self) -> None:
        self.syncs += 1

    def close(self) -> None:
        self.closed += 1


def test_state_created_once_and_forwarded_to() -> None:
    h = Handle(device=1)
    made: list[int] = []

    def factory(handle: Handle) -> _State:
        made.append(1)
        return _State(handle)

    assert h.peek_state("eng") is None
    st = h.state("eng", factory)
    assert h.state("eng", factory) is st and made == [1] and st.device == 1
    h.set_stream(0x10)
    h.set_stream(0x10)  # unchanged: not forwarded again
    h.set_stream(None)
    assert st.streams == [0x10, None] and h.get_stream() is None
    h.synchronize()
    assert st.syncs == 1
    h.close()
    h.close()
    assert st.closed == 1 and h.closed
    with pytest.raises(GraphStateError, match="closed"):
        h.state("eng", factory)


def test_context_manager_and_repr() -> None:
    with Handle(stream=0x20) as h:
        assert "stream=0x20" in repr(h)
    assert "closed" in repr(h)
    assert Handle().serial != Handle().serial


def test_default_handle_per_thread() -> None:
    main = default_handle()
    assert default_handle() is main
    seen: list[Handle] = []
    t = threading.Thread(target=lambda: seen.append(default_handle()))
    t.start()
    t.join()
    assert seen[0] is not main
    main.close()
    assert default_handle() is not main
