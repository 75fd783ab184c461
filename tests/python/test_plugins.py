"""Plugins, backends and configuration: ts.load_plugin and friends, ts.Config and ts.configure.
Failures are ts.PluginError / ts.ConfigError (both ts.Error, a RuntimeError) naming the culprit,
and the process keeps working after them."""
import os

import pytest

import tessera as ts


@pytest.fixture
def restore_configuration(monkeypatch):
    for name in ("TESSERA_THREADS", "TESSERA_LOG_LEVEL", "TESSERA_CONFIG", "TESSERA_TOPOLOGY"):
        monkeypatch.delenv(name, raising=False)
    yield
    ts.configure(ts.Config(topology="fully_connected"))  # the defaults again
    ts.set_default_backend("cpu")


def host_still_works():
    assert (ts.ones(2) + 1).tolist() == [2.0, 2.0]


def test_load_a_bundled_plugin_and_list_it():
    info = ts.load_plugin("backend-meta")
    assert info.name == "backend-meta" and info.version
    assert os.path.basename(info.file) == "libtessera-backend-meta.so" and os.path.exists(info.file)
    assert [(c.kind, c.name) for c in info.components] == [("backend", "meta")]
    assert info.sdk_version[0] == 1
    assert "meta" in ts.backend_names()
    assert "backend-meta" in [p.name for p in ts.loaded_plugins()]
    assert ts.load_plugin(info.file).name == "backend-meta"  # loading again is a no-op


def test_unload_removes_the_backend():
    ts.load_plugin("backend-meta")
    ts.unload_plugin("backend-meta")
    assert "meta" not in ts.backend_names()
    assert "backend-meta" not in [p.name for p in ts.loaded_plugins()]
    ts.load_plugin("backend-meta")
    assert "meta" in ts.backend_names()


def test_missing_plugin_file_is_a_plugin_error_naming_it(tmp_path):
    missing = tmp_path / "libtessera-nothing.so"
    with pytest.raises(ts.PluginError, match=f"'{missing}' rejected: no such file") as info:
        ts.load_plugin(str(missing))
    assert isinstance(info.value, ts.Error) and isinstance(info.value, RuntimeError)
    with pytest.raises(ts.PluginError, match="no libtessera-backend-nosuch.so in the search path"):
        ts.load_plugin("backend-nosuch")
    host_still_works()


def test_a_file_that_is_not_a_plugin_is_rejected(tmp_path):
    junk = tmp_path / "libtessera-junk.so"
    junk.write_text("not an ELF file")
    with pytest.raises(ts.PluginError, match="cannot be loaded as a shared object"):
        ts.load_plugin(str(junk))
    probe = ts.probe_plugin(str(junk))
    assert not probe.accepted and probe.info is None and str(junk) in probe.reason + probe.file
    host_still_works()


def test_discover_and_search_path():
    probes = ts.discover_plugins()
    accepted = {p.info.name for p in probes if p.accepted}
    assert {"backend-cpu", "placement-balanced"} <= accepted
    assert all(os.path.exists(p.file) for p in probes)
    path = ts.plugin_search_path()
    assert any(os.path.dirname(p.file) == d for p in probes for d in path)


def test_default_backend(restore_configuration):
    assert ts.default_backend() == "cpu"
    ts.load_plugin("backend-meta")
    ts.set_default_backend("meta")
    assert ts.default_backend() == "meta"
    assert ts.ones(2).device == "meta"
    ts.set_default_backend("cpu")
    with pytest.raises(ts.Error, match="no backend named 'nosuch'"):
        ts.set_default_backend("nosuch")
    assert ts.default_backend() == "cpu"


def test_backend_capabilities():
    caps = ts.backend_capabilities("cpu")
    assert caps.backend == "cpu" and caps.plugin == "backend-cpu" and not caps.shapes_only
    assert "add" in caps.ops and ts.float32 in caps.ops["add"]
    assert len(caps.ops) + len(caps.missing_ops) == caps.catalogue_size
    with pytest.raises(ts.Error, match="no backend named 'nosuch'"):
        ts.backend_capabilities("nosuch")


def test_config_from_string_and_file(tmp_path):
    text = '[log]\nlevel = "info"\n[execution]\nthreads = 2\n[plugins.coll-hier]\ngroup_size = 4\n'
    config = ts.Config.from_string(text)
    assert config.log_level == "info" and config.threads == 2 and config.source == "<string>"
    assert config.plugin_parameters == {"coll-hier": {"group_size": "4"}}
    path = tmp_path / "tessera.toml"
    path.write_text('[backend]\ndefault = "cpu"\n[topology]\npreset = "ring"\n')
    from_file = ts.Config.from_file(str(path))
    assert from_file.topology == "ring" and from_file.source == str(path)


def test_bad_configuration_is_a_config_error(tmp_path):
    with pytest.raises(ts.ConfigError, match=r"<string>:2: key 'execution.threads'"):
        ts.Config.from_string('[execution]\nthreads = "many"\n')
    with pytest.raises(ts.ConfigError, match="<string>:1"):
        ts.Config.from_string("[log\n")
    missing = tmp_path / "absent.toml"
    with pytest.raises(ts.ConfigError, match=f"'{missing}' does not exist"):
        ts.Config.from_file(str(missing))
    with pytest.raises(ts.ConfigError, match="unknown key 'bogus'; the keys are"):
        ts.Config(bogus=1)
    host_still_works()


def test_config_from_environment(tmp_path, monkeypatch):
    path = tmp_path / "env.toml"
    path.write_text("[execution]\nthreads = 3\n")
    monkeypatch.setenv("TESSERA_CONFIG", str(path))
    assert ts.Config.from_environment().threads == 3
    monkeypatch.setenv("TESSERA_THREADS", "5")
    assert ts.Config.from_environment().with_environment().threads == 5


def test_configure_with_keywords_and_configs(restore_configuration):
    ts.configure(threads=2)
    assert ts.get_num_threads() == 2
    ts.configure(log_level="error")  # other keys are kept
    assert ts.get_num_threads() == 2
    ts.configure(ts.Config.from_string("[execution]\nthreads = 3\n"))
    assert ts.get_num_threads() == 3
    ts.configure(ts.Config(threads=1), threads=4)  # keywords win over the config given
    assert ts.get_num_threads() == 4
    ts.configure(topology="ring")
    with ts.LocalMode(4):
        assert ts.init_device_mesh("cpu", (4,)).topology == "ring"
    config = ts.Config(threads=3).replace(log_level="debug")
    assert (config.threads, config.log_level) == (3, "debug")


def test_configure_errors(restore_configuration, tmp_path):
    with pytest.raises(ts.ConfigError, match="unknown log level 'loud'"):
        ts.configure(log_level="loud")
    with pytest.raises(ts.ConfigError, match="threads must be an int, got str 'x'"):
        ts.configure(threads="x")
    with pytest.raises(ts.ConfigError, match="unknown key 'colour'"):
        ts.configure(colour="blue")
    with pytest.raises(ts.ConfigError, match="torus"):
        ts.configure(topology="mesh-of-stars")
    missing = tmp_path / "libtessera-absent.so"
    with pytest.raises(ts.PluginError, match="absent"):
        ts.configure(plugins_to_load=[str(missing)])
    host_still_works()
