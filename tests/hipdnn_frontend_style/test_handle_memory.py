"""Handle and DeviceBuffer with upstream's conventions (default stream 0, destroyed handles raise
and say so, engine info, host memory standing in for device buffers) and upstream's rules for
turning variant-pack values into pointers."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest

import hipdnn
import hipdnn.frontend as fe
from hipdnn.backend.engine import fnv1a_64
from hipdnn.frontend._memory import get_data_ptr


@pytest.mark.parametrize("factory", [fe.Handle, fe.create_handle])
def test_handle_int_and_default_stream(factory: Any) -> None:
    h = factory()
    assert int(h) != 0 and h.get() == int(h) and h.get_stream() == 0
    assert isinstance(h, hipdnn.Handle)
    assert factory(0).get_stream() == 0
    fe.set_stream(h, 0)
    assert fe.get_stream(h) == 0
    h.set_stream(1234)
    assert h.get_stream() == 1234 and h.stream == 1234


@pytest.mark.parametrize("use", [lambda h: h.get_stream(), lambda h: h.set_stream(0),
                                 lambda h: int(h), lambda h: h.get_engine_info(0),
                                 lambda h: h.get_loaded_engine_plugin_paths(),
                                 fe.get_loaded_engine_plugin_paths])
def test_destroyed_handle_raises_and_says_so(use: Any) -> None:
    h = fe.create_handle()
    fe.destroy_handle(h)
    assert "destroyed" in repr(h)
    with pytest.raises(RuntimeError, match="destroyed"):
        use(h)


def test_engine_info_and_plugin_paths() -> None:
    g = fe.Graph().set_preferred_engine_id_ext("CPU_REFERENCE_ENGINE")
    engine_id = g.get_preferred_engine_id_ext()
    assert engine_id == fnv1a_64("CPU_REFERENCE_ENGINE")
    info = fe.create_handle().get_engine_info(engine_id)
    assert isinstance(info, fe.EngineInfo) and info.engine_id == engine_id
    assert info.engine_name == "CPU_REFERENCE_ENGINE" and info.version == hipdnn.__version__
    assert info.type == "HIPDNN_PLUGIN_TYPE_ENGINE" and info.plugin_name.startswith("hipdnn.")
    with pytest.raises(AttributeError):
        info.version = "overridden"  # type: ignore[misc]
    with pytest.raises(IndexError, match="Engine ID is not loaded"):
        fe.create_handle().get_engine_info(9223372036854775807)
    paths = fe.get_loaded_engine_plugin_paths(fe.create_handle())
    assert paths and all(isinstance(p, str) and p.endswith(".py") for p in paths)


def test_miopen_engine_reports_upstreams_plugin_name(engine: str) -> None:
    # MIOPEN_ENGINE stands where AMD's MIOpen provider plugin stands, so it reports that
    # plugin's name; engines with no upstream counterpart report their Python module.
    handle = fe.create_handle()
    miopen = handle.get_engine_info(fnv1a_64("MIOPEN_ENGINE")) if engine == "MIOPEN_ENGINE" else None
    if miopen is not None:
        assert (miopen.engine_name, miopen.plugin_name) == ("MIOPEN_ENGINE", "miopen_provider_plugin")
    else:
        with pytest.raises(IndexError, match="Engine ID is not loaded"):
            handle.get_engine_info(fnv1a_64("MIOPEN_ENGINE"))
    cpu = handle.get_engine_info(fnv1a_64("CPU_REFERENCE_ENGINE"))
    assert cpu.plugin_name == "hipdnn.engines.reference.engine"


def test_engine_plugin_paths_load_python_engines(tmp_path: Any) -> None:
    from hipdnn.engines import registry

    plugin = tmp_path / "my_engine.py"
    plugin.write_text("from hipdnn.engines.reference import ReferenceEngine\n"
                      "class MyEngine(ReferenceEngine):\n    name = 'MY_TEST_ENGINE'\n"
                      "ENGINE = MyEngine()\n")
    before = dict(registry())
    try:
        fe.set_engine_plugin_paths([str(plugin)], fe.PluginLoadingMode.ADDITIVE)
        assert fnv1a_64("MY_TEST_ENGINE") in registry()
        with pytest.raises(RuntimeError, match="Python modules"):
            fe.set_engine_plugin_paths(["/opt/rocm/lib/libplugin.so"])
    finally:
        from hipdnn.engines import register, unregister

        for eid in list(registry()):
            if eid not in before:
                unregister(eid)
        for engine in before.values():
            register(engine)


def test_device_buffer_methods() -> None:
    data = np.random.default_rng(0).random(64).astype(np.float32)
    buf = fe.DeviceBuffer(data.nbytes)
    assert buf.size() == 256 and buf.ptr() != 0
    buf.copy_from_host(data.tobytes())
    np.testing.assert_array_equal(np.frombuffer(buf.copy_to_host(), np.float32), data)
    buf.zeros()
    assert not np.frombuffer(buf.copy_to_host(), np.float32).any()
    assert fe.DeviceBuffer(0).size() == 0
    for wrong in (32, 8):
        with pytest.raises(RuntimeError, match="sizes must match"):
            fe.DeviceBuffer(16).copy_from_host(np.zeros(wrong // 4, np.float32).tobytes())
    with pytest.raises(TypeError):
        fe.DeviceBuffer(-1)


@pytest.mark.parametrize("dtype, size", [(np.float32, 4), (np.float16, 2), (np.float64, 8),
                                         (np.int32, 4), (np.uint8, 1), (np.int8, 1)])
def test_get_dtype_size(dtype: Any, size: int) -> None:
    assert fe.get_dtype_size(np.dtype(dtype)) == size


def test_get_dtype_size_unsupported() -> None:
    with pytest.raises(RuntimeError):
        fe.get_dtype_size(np.dtype(np.complex64))


class _DataPtr:
    def data_ptr(self) -> int:
        return 4096


class _Raising:
    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("producer refused export")


class _NoneCapsule:
    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return None


class _CopyOnly:
    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __dlpack__(self, *, copy: bool | None = None, **kwargs: Any) -> Any:
        if copy is False:
            raise BufferError("export requires a copy")
        return self.array.__dlpack__(**kwargs)


class _Legacy:
    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __dlpack__(self, stream: Any = None) -> Any:
        return self.array.__dlpack__()


def test_pointer_rules() -> None:
    host = np.zeros(4, np.float32)
    assert get_data_ptr(1234) == 1234 and get_data_ptr(np.uint64(4096)) == 4096
    scalar = np.array(7, np.int64)  # a 0-d array is data: DLPack wins over __index__
    assert get_data_ptr(scalar) == scalar.ctypes.data
    assert get_data_ptr(_DataPtr()) == 4096
    assert get_data_ptr(host[1:]) == host.ctypes.data + 4
    assert get_data_ptr(_Legacy(host)) == host.ctypes.data
    buf = fe.DeviceBuffer(8)
    assert get_data_ptr(buf) == buf.ptr()
    with pytest.raises(TypeError):
        get_data_ptr(True)
    with pytest.raises(TypeError, match="__dlpack__"):
        get_data_ptr("0x10")
    with pytest.raises(ValueError, match="valid DLPack capsule"):
        get_data_ptr(_NoneCapsule())
    with pytest.raises(RuntimeError, match="producer refused export"):
        get_data_ptr(_Raising())
    with pytest.raises(BufferError, match="requires a copy"):
        get_data_ptr(_CopyOnly(host))
    assert fe.Graph.tensor_like(_CopyOnly(host)).get_dim() == [4]  # metadata needs no pointer
    with pytest.raises(RuntimeError, match="producer refused export"):
        fe.Graph.tensor_like(_Raising())
    assert ctypes.c_float.from_address(get_data_ptr(host)).value == 0.0


def test_hip_device_count_without_hip(monkeypatch: pytest.MonkeyPatch) -> None:
    from hipdnn.frontend import _handle

    class _Hip:
        def __init__(self, count: int | None) -> None:
            self.count = count

        def hipGetDeviceCount(self, out: Any) -> None:
            if self.count is None:
                raise OSError("hipErrorNoDevice")
            out._obj.value = self.count

    def no_hip() -> Any:
        raise OSError("libamdhip64 not found")

    monkeypatch.setattr(_handle, "load_hip", no_hip)
    assert fe.hip_get_device_count() == 0  # no runtime: 0, no error
    monkeypatch.setattr(_handle, "load_hip", lambda: _Hip(None))
    assert fe.hip_get_device_count() == 0  # the runtime fails: 0
    monkeypatch.setattr(_handle, "load_hip", lambda: _Hip(3))
    assert fe.hip_get_device_count() == 3  # what the runtime says
    monkeypatch.undo()
