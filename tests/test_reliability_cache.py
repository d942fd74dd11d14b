"""Issue 8 items 3, 4 and 9: a kernel cache that cannot be corrupted or planted, and errors about
the environment (disk full, file size limit, read-only or unusable cache) that say what to do."""

from __future__ import annotations

import ctypes
import errno
import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stax.runtime import compiler
from stax.runtime.compiler import CacheError, compile_source

NOBODY = 65534


def _source(tag: str, value: int = 42) -> str:
    return f'extern "C" int stax_answer() {{ return {value}; }}  // {tag}\n'


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("STAX_CACHE_DIR", str(root))
    compiler._fallback_dir.cache_clear()
    return root


def _replace(path: Path, data: bytes) -> None:
    """Damage a cached object as another process would: a new file under the name. Writing
    in place would change the pages this process has mapped (a SIGBUS at exit)."""
    path.unlink()
    path.write_bytes(data)


def _entry(root: Path) -> Path:
    (lib,) = root.glob("stax_*.so")
    return lib


def test_entries_are_private_whatever_the_umask(cache: Path) -> None:
    old = os.umask(0)
    try:
        c = compile_source(_source("umask"), "scalar")
    finally:
        os.umask(old)
    assert c.library.stax_answer() == 42
    assert cache.stat().st_mode & 0o777 == 0o700
    assert c.path.stat().st_mode & 0o777 == 0o700
    for suffix in (".sha256", ".cpp"):
        assert c.path.with_suffix(suffix).stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("damage", ["truncated", "flipped", "foreign", "no hash", "directory",
                                    "symlink"])
def test_a_bad_entry_is_rebuilt_never_loaded(cache: Path, damage: str) -> None:
    first = compile_source(_source(damage), "scalar")
    lib = first.path
    if damage == "truncated":
        data = lib.read_bytes()
        _replace(lib, data[: len(data) // 2])  # would SIGBUS if loaded
    elif damage == "flipped":
        data = bytearray(lib.read_bytes())
        data[len(data) // 2] ^= 0xFF
        _replace(lib, bytes(data))
    elif damage == "foreign":  # another program's object and hash copied under this key
        other = compile_source(_source("other", 7), "scalar")
        _replace(lib, other.path.read_bytes())
        lib.with_suffix(".sha256").write_bytes(other.path.with_suffix(".sha256").read_bytes())
    elif damage == "no hash":
        lib.with_suffix(".sha256").unlink()
    elif damage == "directory":
        lib.unlink()
        lib.mkdir()
    else:  # a symlink to a planted object: never followed
        planted = cache.parent / "planted.so"
        planted.write_bytes(compile_source(_source("planted", 666), "scalar").path.read_bytes())
        lib.unlink()
        lib.symlink_to(planted)
    # a fresh process, as the damage would meet in practice (this one has the library mapped)
    script = textwrap.dedent(f"""
        from stax.runtime.compiler import compile_source
        c = compile_source({_source(damage)!r}, "scalar")
        print(c.cache_hit, c.library.stax_answer())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "42"]
    assert lib.is_file() and not lib.is_symlink()
    assert compile_source(_source(damage), "scalar").cache_hit


@pytest.mark.skipif(os.getuid() != 0, reason="planting a file owned by another user needs root")
def test_an_entry_owned_by_another_user_is_not_loaded(cache: Path) -> None:
    lib = compile_source(_source("owner"), "scalar").path
    os.chown(lib, NOBODY, NOBODY)
    assert compiler._load_verified(lib, lib.stem.removeprefix("stax_"), ctypes.CDLL) is None


@pytest.mark.parametrize("problem", ["group-writable", "other owner", "a file",
                                     "dangling symlink"])
def test_an_untrusted_cache_dir_falls_back_with_a_warning(cache: Path, problem: str) -> None:
    if problem == "group-writable":
        cache.mkdir(mode=0o700)
        os.chmod(cache, 0o777)
    elif problem == "other owner":
        if os.getuid() != 0:
            pytest.skip("needs root to chown")
        cache.mkdir()
        os.chown(cache, NOBODY, NOBODY)
    elif problem == "a file":
        cache.write_text("not a directory")
    else:
        cache.symlink_to(cache.parent / "missing")
    with pytest.warns(RuntimeWarning, match="cannot use the kernel cache .*STAX_CACHE_DIR"):
        c = compile_source(_source(problem), "scalar")
    assert c.library.stax_answer() == 42
    assert cache not in c.path.parents
    assert c.path.parent.stat().st_mode & 0o777 == 0o700


def test_a_read_only_cache_falls_back_with_a_warning(cache: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    cache.mkdir(mode=0o700)
    real = compiler._build

    def read_only(build: compiler.Build, root: Path, load: Callable[[str], Any]) -> Any:
        if root == cache:
            raise compiler._environment_error(OSError(errno.EROFS, "Read-only file system"),
                                              "create a build directory in", root)
        return real(build, root, load)

    monkeypatch.setattr(compiler, "_build", read_only)
    with pytest.warns(RuntimeWarning, match="read-only.*private temporary directory"):
        c = compile_source(_source("ro"), "scalar")
    assert c.library.stax_answer() == 42 and cache not in c.path.parents


def test_a_full_disk_is_an_environment_error(cache: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def full(src: Path, dst: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(compiler, "_replace", full)
    with pytest.raises(CacheError, match="disk is full.*free some space.*STAX_CACHE_DIR") as e:
        compile_source(_source("full"), "scalar")
    assert "bug in Stax" not in str(e.value) and e.value.errno == errno.ENOSPC


def test_a_file_size_limit_is_an_environment_error(cache: Path) -> None:
    script = textwrap.dedent(f"""
        import resource, signal
        from stax.runtime.compiler import CacheError, compile_source, cache_dir
        cache_dir()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            compile_source({_source("efbig")!r}, "scalar")
        except CacheError as e:
            print("bug in Stax" not in str(e), e)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("True") and "file size limit" in out.stdout, out.stdout


def test_a_new_compiler_never_reuses_the_old_ones_objects(cache: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert not compile_source(_source("cxx"), "scalar").cache_hit
    assert compile_source(_source("cxx"), "scalar").cache_hit
    wrapper = tmp_path / "other-g++"
    wrapper.write_text('#!/bin/sh\nexec g++ "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("CXX", str(wrapper))
    assert not compile_source(_source("cxx"), "scalar").cache_hit


def test_a_recorded_isa_the_cpu_lacks_is_not_trusted(cache: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    identity, flags = compiler._cpu_identity()
    without = (flags or set()) - {"avx512f", "avx2"}
    monkeypatch.setattr(compiler, "_cpu_identity", lambda: ("old cpu", without))
    compiler._probe_isa.cache_clear()
    try:
        assert compiler.cache_dir() == cache
        assert compiler._probe_isa(str(cache)) == "scalar"
        (marker,) = cache.glob("isa-*.txt")
        marker.write_text("avx512")  # stale or planted
        compiler._probe_isa.cache_clear()
        assert compiler._probe_isa(str(cache)) == "scalar"
    finally:
        compiler._probe_isa.cache_clear()


def test_a_compiler_error_in_generated_code_says_so(cache: Path) -> None:
    with pytest.raises(compiler.CompileError, match="bug in Stax"):
        compile_source("this is not C++\n", "scalar")


def test_no_warning_for_a_good_cache(cache: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compile_source(_source("good"), "scalar").library.stax_answer() == 42
