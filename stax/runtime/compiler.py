"""Compiler driver: gcc + OpenMP, a verified disk cache, ctypes loading.

The cache lives in `$STAX_CACHE_DIR` or `~/.cache/stax`. It is trusted only when it is a
directory owned by the current user and writable by nobody else; otherwise (or when it is
read-only, a file, a dangling symlink) Stax warns once and uses a private temporary directory.
Directories are created 0700 and files 0600 (libraries 0700) whatever the umask.

An entry `stax_<key>.so` is loaded only after verification: the key covers the source, every
flag, the compiler's identity and version, the ISA level and the Stax version; beside the object,
`stax_<key>.sha256` (written atomically, after the object) records the SHA-256 of the key and the
object's bytes. The object is opened without following symlinks, checked (a regular file, owned
by the user, not group/world-writable) and hashed before dlopen, so a truncated, flipped, foreign
or planted entry is rebuilt, never loaded. Entries are written to a
temporary file and renamed into place, so two processes compiling the same kernel both succeed.

ISA levels (seed 000 §8.1) are probed by compiling and running a test program, widest first; the
result is recorded under a name keyed by the CPU's identity and the compiler, and a recorded level
the CPU's flags do not support is ignored; `STAX_ISA` forces one.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Generic, NamedTuple, ParamSpec, TypeVar

ISA_LEVELS = ("avx512", "avx2", "scalar")
ISA_FLAGS = {
    "avx512": ["-march=x86-64-v4", "-mtune=native", "-mprefer-vector-width=512"],
    "avx2": ["-march=x86-64-v3", "-mtune=native"],
    "scalar": ["-march=x86-64", "-fno-tree-vectorize", "-fno-tree-slp-vectorize"],
}
# CPU flags (/proc/cpuinfo) each level needs: a recorded level the CPU lacks is never trusted.
ISA_CPU_FLAGS = {"avx512": {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx2", "fma"},
                 "avx2": {"avx2", "fma", "bmi2"}, "scalar": set()}
# Each probe runs the level's widest vector arithmetic (GCC vector extensions: no intrinsics
# header to parse, a tenth of the compile time of <immintrin.h>); the run fails (SIGILL) where
# the CPU or the OS lacks the level.
ISA_PROBES = {
    "avx512": "typedef float v __attribute__((vector_size(64)));\n"
              "int main(int n, char**){v a = {}; a += (float)n; a = a * a + a;"
              "return a[15] == 2.f ? 0 : 1;}",
    "avx2": "typedef float v __attribute__((vector_size(32)));\n"
            "int main(int n, char**){v a = {}; a += (float)n; a = a * a + a;"
            "return a[7] == 2.f && __builtin_fmaf(a[0], a[1], a[2]) == 6.f ? 0 : 1;}",
    "scalar": "int main(){return 0;}",
}
# [VEC] -fno-trapping-math: kernels never read the FP exception state (NumPy's warnings come
# from the explicit flags of stax_raise), and with it g++ vectorizes floor/ceil/trunc and
# if-converts comparisons it would otherwise keep behind branches (a clip before a cast).
# -ffp-contract=off: no fused multiply-adds g++ forms on its own (its C++ default contracts):
# NumPy rounds each product and sum, and a contracted `i * step + start` of np.linspace made
# an integer np.pad(mode="linear_ramp") truncate 0x1.ffffffffffffcp-1 where NumPy has 1.0.
# [MASK] -fno-thread-jumps: two selects on one condition in a loop body (a masked update of
# two arrays, `N[I] = n; Z[I] = Z[I]**2 + C[I]`) are threaded into one branch before
# if-conversion; g++ 12 then left the whole loop scalar (scalar hypot per element: npbench
# mandelbrot1 1.75x NumPy), while -fopt-info still reported it vectorized.
BASE_FLAGS = ["-O3", "-fopenmp", "-shared", "-fPIC", "-fwrapv", "-fno-math-errno",
              "-fno-trapping-math", "-ffp-contract=off", "-fno-thread-jumps", "-std=c++17", "-w"]
LINK_FLAGS = ["-lmvec", "-lm"]
SANITIZE_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                  "-fno-omit-frame-pointer", "-O1"]
T = TypeVar("T")
P = ParamSpec("P")
ENVIRONMENT_HINT = ("set STAX_CACHE_DIR to a private, writable directory with free space")


class CompilerNotFound(RuntimeError):
    pass


class CompileError(RuntimeError):
    pass


class CacheError(OSError):
    """The environment failed (disk full, file too large, unusable directory): not a bug in
    Stax. The message says what failed, where, and what to do."""


class once(Generic[P, T]):  # noqa: N801 - used as a decorator, like functools.cache
    """`functools.cache` whose first call per arguments runs once when several threads make it
    at the same time (the others wait for its result): the probes each process runs on first
    use, which `in_background` may have started. Exceptions are not cached."""

    def __init__(self, fn: Callable[P, T]) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.done: dict[tuple[object, ...], T] = {}
        self.lock = threading.Lock()
        # a fork while a background thread computes: the child has no such thread, and the
        # lock it held would stay locked there
        os.register_at_fork(after_in_child=self._unlock)

    def _unlock(self) -> None:
        self.lock = threading.Lock()

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return self.done[args]
        except KeyError:
            pass
        with self.lock:
            if args not in self.done:
                self.done[args] = self.fn(*args, **kwargs)
            return self.done[args]

    def ready(self, *args: object) -> T | None:
        """The result for `args` if a call has finished computing it, else None (no wait)."""
        return self.done.get(args)

    def cache_clear(self) -> None:
        with self.lock:
            self.done.clear()


def in_background(*jobs: Callable[[], object]) -> None:
    """Start each job on a thread of its own and return: the first uses of `once` functions
    that run the compiler (a probe, a module every call needs), started before the caller
    needs them, so that they compile while it traces, schedules and compiles its kernels. A job
    that fails is ignored: the caller's own call then runs it again and raises. The threads
    are not daemons: the interpreter waits for them at exit, so no half-written file stays."""
    for job in jobs:
        threading.Thread(target=quietly, args=(job,), name="stax-prepare").start()


def quietly(job: Callable[[], object]) -> None:
    """Run a background thread's `job` whose errors its caller's own call raises again: none
    escapes (nor a BaseException such as tools/dump_cpp.py's Captured: no thread dies with an
    unhandled exception)."""
    try:
        job()
    except BaseException:  # noqa: BLE001, S110 - the caller's own call raises it
        pass


def stax_version() -> str:
    try:
        return metadata.version("stax-compiler")
    except metadata.PackageNotFoundError:
        return "unknown"


def _private_dir(path: Path) -> str | None:
    """Why `path` cannot be trusted as a cache directory, or None when it can."""
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            if st.st_uid != os.getuid():
                return "it is a symlink owned by another user"
            st = os.stat(path)
    except FileNotFoundError:
        return "it is a dangling symlink" if os.path.islink(path) else "it does not exist"
    except OSError as e:
        return f"it cannot be inspected ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if st.st_uid != os.getuid():
        return "it is owned by another user"
    if st.st_mode & 0o022:
        return "it is writable by group or others"
    if not os.access(path, os.W_OK | os.X_OK):
        return "it is not writable (read-only)"
    return None


@functools.cache
def _fallback_dir(configured: str, reason: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix="stax-cache-"))  # 0700, owned by us
    warnings.warn(f"stax: cannot use the kernel cache {configured}: {reason}; compiled kernels "
                  f"go to the private temporary directory {path} for this process "
                  f"({ENVIRONMENT_HINT})", RuntimeWarning, stacklevel=2)
    return path


def _configured_dir() -> Path:
    return Path(os.environ.get("STAX_CACHE_DIR") or Path.home() / ".cache" / "stax")


def cache_dir() -> Path:
    """The trusted cache directory (created 0700), or a private fallback with a warning."""
    path = _configured_dir()
    if not os.path.lexists(path):
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(path, 0o700)  # mkdir's mode is masked by the umask
        except OSError as e:
            return _fallback_dir(str(path), f"it cannot be created ({e.strerror})")
    reason = _private_dir(path)
    return path if reason is None else _fallback_dir(str(path), reason)


def fall_back(reason: str) -> Path:
    """A private temporary cache for the rest of the process, after `reason` (with a warning)."""
    return _fallback_dir(str(_configured_dir()), reason)


def compiler() -> str:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise CompilerNotFound(
            "stax: no C++ compiler found (install g++, e.g. `apt-get install g++`, or set CXX)")
    return cxx


@once
def _compiler_identity(cxx: str, resolved: str, mtime_ns: int, size: int) -> str:
    try:
        version = subprocess.run([cxx, "--version"], capture_output=True, text=True,
                                 timeout=60).stdout
    except OSError as e:
        raise CompilerNotFound(f"stax: the C++ compiler {cxx!r} cannot be run ({e.strerror}); "
                               "install g++ or set CXX") from None
    return f"{resolved}\0{mtime_ns}\0{size}\0{version}"


def compiler_identity() -> str:
    """The compiler's resolved path, file identity and `--version` text (part of every key)."""
    cxx = compiler()
    resolved = shutil.which(cxx) or cxx
    try:
        st = os.stat(resolved)
    except OSError:
        raise CompilerNotFound(f"stax: the C++ compiler {cxx!r} does not exist; install g++ "
                               "or set CXX") from None
    return _compiler_identity(cxx, os.path.realpath(resolved), st.st_mtime_ns, st.st_size)


def sanitize_enabled() -> bool:
    return os.environ.get("STAX_SANITIZE") == "1"


def _cpu_identity() -> tuple[str, set[str] | None]:
    """A text naming this CPU (model and feature flags) and its flags (None when unknown)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        import platform

        return platform.processor() + platform.machine(), None
    fields: dict[str, str] = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        fields.setdefault(name.strip(), value.strip())
        if not line.strip() and fields:
            break
    flags = fields.get("flags", "")
    return f"{fields.get('vendor_id')}|{fields.get('model name')}|{flags}", set(flags.split())


@once
def _probe_isa(cache: str) -> str:
    identity, cpu_flags = _cpu_identity()
    key = hashlib.sha256(f"{identity}\0{compiler_identity()}".encode()).hexdigest()[:16]
    marker = Path(cache) / f"isa-{key}.txt"
    level = _read_private(marker)
    if level is not None:
        name = level.decode(errors="replace").strip()
        if name in ISA_LEVELS and (cpu_flags is None or ISA_CPU_FLAGS[name] <= cpu_flags):
            return name
    for name in ISA_LEVELS:
        if (cpu_flags is None or ISA_CPU_FLAGS[name] <= cpu_flags) and _runs(name):
            _store(marker, name.encode(), 0o600)
            return name
    return "scalar"


def _runs(level: str) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "probe.cpp", Path(tmp) / "probe"
        src.write_text(ISA_PROBES[level])
        flags = [f for f in ISA_FLAGS[level] if not f.startswith("-mtune")]
        built = subprocess.run([compiler(), *flags, str(src), "-o", str(exe)],
                               capture_output=True)
        if built.returncode != 0:
            return False
        return subprocess.run([str(exe)], capture_output=True).returncode == 0


def isa_level(forced: str | None = None) -> str:
    """The ISA level for kernels: `forced` (the isa= option) or `STAX_ISA` if set, else the
    widest one this machine runs. A forced level the machine cannot run is an error."""
    forced = forced or os.environ.get("STAX_ISA") or None
    if forced is None:
        return _probe_isa(str(cache_dir()))
    if forced not in ISA_LEVELS:
        raise ValueError(f"stax: ISA level {forced!r} is not one of {', '.join(ISA_LEVELS)}")
    best = _probe_isa(str(cache_dir()))
    if ISA_LEVELS.index(forced) < ISA_LEVELS.index(best):
        raise ValueError(f"stax: ISA level {forced!r} does not run on this machine "
                         f"(the widest it runs is {best!r})")
    return forced


def _environment_error(e: OSError, what: str, where: Path) -> CacheError:
    causes = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exhausted",
              errno.EFBIG: "the file size limit (ulimit -f) was reached",
              errno.EROFS: "the file system is read-only", errno.EACCES: "permission denied",
              errno.EPERM: "permission denied", errno.EISDIR: "a directory is in the way",
              errno.ENOTDIR: "a file is in the way of a directory"}
    cause = causes.get(e.errno or 0, e.strerror or str(e))
    return CacheError(e.errno, f"stax: could not {what} {where}: {cause}; free some space, "
                               f"raise the limit, or {ENVIRONMENT_HINT}")


def _store(path: Path, data: bytes, mode: int) -> None:
    """Write `path` atomically (temporary file, then rename) with `mode` whatever the umask."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    except OSError as e:
        raise _environment_error(e, "create a file in", path.parent) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        _replace(Path(tmp), path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise _environment_error(e, "write", path) from None


def _replace(src: Path, dst: Path) -> None:
    """Rename `src` onto `dst`; whatever sits there (a directory, a symlink) is removed first.
    Only called inside a verified private cache directory, whose contents are the user's own."""
    if os.path.isdir(dst) and not os.path.islink(dst):
        shutil.rmtree(dst)
    os.replace(src, dst)


def _open_private(path: Path) -> int | None:
    """An fd of `path` when it is a regular file owned by the user and writable by nobody
    else, opened without following a symlink; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        os.close(fd)
        return None
    return fd


def _read_private(path: Path) -> bytes | None:
    fd = _open_private(path)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read()


def _digest(key: str, data: bytes) -> bytes:
    return hashlib.sha256(key.encode() + b"\0" + data).hexdigest().encode()


@dataclass(frozen=True)
class Compiled:
    library: ctypes.CDLL
    path: Path
    cache_hit: bool


def _load_verified(lib: Path, key: str, load: Callable[[str], T]) -> T | None:
    """`load(path)` of the entry when its recorded hash matches its bytes, else None."""
    recorded = _read_private(lib.with_suffix(".sha256"))
    fd = _open_private(lib)
    if recorded is None or fd is None:
        if fd is not None:
            os.close(fd)
        return None
    try:
        with os.fdopen(os.dup(fd), "rb") as f:
            if _digest(key, f.read()) != recorded.strip():
                return None
        # the directory is private (checked by cache_dir): nobody else can swap the file
        return load(str(lib))
    except OSError:
        return None
    finally:
        os.close(fd)


def cache_key(source: str, flags: list[str]) -> str:
    parts = [source, *flags, compiler_identity(), stax_version()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def _flags(isa: str) -> list[str]:
    return BASE_FLAGS + ISA_FLAGS[isa] + (SANITIZE_FLAGS if sanitize_enabled() else [])


def compile_source(source: str, isa: str, precompiled: str = "") -> Compiled:
    """Compile `source` to a shared library (or take a verified one from the cache), load it.
    `precompiled`: a prefix of `source` (the backend's runtime header) whose precompiled form
    is used when `precompile` has made one for `isa` in this process; the library is the
    same, only the compiler's work differs (it parses the header no more)."""
    flags = _flags(isa)
    gch = _header(precompiled, tuple(flags)) if precompiled and \
        source.startswith(precompiled) else None
    header = (precompiled, gch) if gch is not None else None
    library, path, hit = compile_object(source, flags, LINK_FLAGS, ctypes.CDLL, header=header)
    _pin_openmp_runtime()
    return Compiled(library, path, hit)


def precompile(prefix: str, isa: str) -> Verified | None:
    """The precompiled header (g++'s .gch) of C++ text `prefix` for `isa`'s flags (as they
    are now: sanitizing or not): a verified cache entry (its SHA-256 recorded beside it, like a
    library's), or built now; None when it cannot be built (the compiler then parses the
    text, as without one). Parsing the runtime header and the standard headers it includes is
    about half of g++'s time on a small module."""
    return _precompile(prefix, tuple(_flags(isa)))


def _header(prefix: str, module_flags: tuple[str, ...]) -> Verified | None:
    """The precompiled header to build with: one this process has verified or built, or one
    in the cache, verified now (a later process's first module); none while it is being built
    (the module does not wait for that)."""
    ready = _precompile.ready(prefix, module_flags)
    if ready is None and _gch_path(prefix, module_flags)[0].exists():
        return _precompile(prefix, module_flags)
    return ready


def object_flags(module_flags: Sequence[str]) -> list[str]:
    """The flags of a module's compile without "-shared": for a header or an object file."""
    return [f for f in module_flags if f != "-shared"]


def _gch_path(prefix: str, module_flags: tuple[str, ...]) -> tuple[Path, str]:
    flags = object_flags(module_flags)
    key = cache_key(prefix, [*flags, ".h.gch"])
    return cache_dir() / f"header_{key}.h.gch", key


@once
def _precompile(prefix: str, module_flags: tuple[str, ...]) -> Verified | None:
    flags = object_flags(module_flags)
    gch, key = _gch_path(prefix, module_flags)
    root = gch.parent
    verified = _load_verified(gch, key, _identify)
    if verified is not None:
        return verified
    try:
        with tempfile.TemporaryDirectory(dir=root, prefix="build-") as tmp:
            header, out = Path(tmp) / "header.h", Path(tmp) / "header.h.gch"
            header.write_text(prefix)
            result = subprocess.run([compiler(), *flags, "-x", "c++-header", str(header),
                                     "-o", str(out)], capture_output=True, text=True)
            if result.returncode != 0:
                return None
            data = out.read_bytes()
            os.chmod(out, 0o600)
            _replace(out, gch)
            _store(gch.with_suffix(".sha256"), _digest(key, data), 0o600)  # after the file
    except (OSError, CompilerNotFound):
        return None
    return _load_verified(gch, key, _identify)


class Verified(NamedTuple):
    """A cache file whose recorded hash matched its bytes, and the file's identity (inode,
    size, modification time) then: a file that has it still holds those bytes."""

    path: Path
    identity: tuple[int, int, int]


def _identify(path: str) -> Verified:
    st = os.stat(path)
    return Verified(Path(path), (st.st_ino, st.st_size, st.st_mtime_ns))


OPENMP_RUNTIMES = ("libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so")
_pinned: list[ctypes.CDLL] = []  # the OpenMP runtime, once a kernel library has loaded it


def _pin_openmp_runtime() -> None:
    """Keep the OpenMP runtime loaded until the process exits (issue 8) [A8]. Kernel libraries
    are unloaded when no jitted function needs them; the OpenMP runtime came in as their
    dependency, so unloading the last one would unload it too, while its worker threads are
    alive (parked in its barrier, or spinning there: OMP_WAIT_POLICY, GOMP_SPINCOUNT): they
    would run unmapped code (SIGSEGV). RTLD_NODELETE makes dlclose leave it mapped. Kernel
    libraries themselves are safe to unload: a parallel region returns only after every worker
    has left the outlined function."""
    for name in OPENMP_RUNTIMES if not _pinned else ():
        try:
            _pinned.append(ctypes.CDLL(name, mode=os.RTLD_NOW | os.RTLD_NOLOAD | os.RTLD_NODELETE))
        except OSError:
            continue  # not this runtime, or not loaded yet (a kernel without OpenMP calls)


def compile_object(source: str, flags: list[str], link: list[str], load: Callable[[str], T],
                   suffix: str = ".cpp", header: tuple[str, Verified] | None = None
                   ) -> tuple[T, Path, bool]:
    """`load(path)` of the shared object built from `source` (`suffix` names its language):
    a verified cache entry, or a fresh build (`header`: a prefix of `source` and the verified
    precompiled form of it to build with). Returns (loaded, path, cache hit)."""
    key = cache_key(source, [*flags, *link, suffix])
    root = cache_dir()
    lib = root / f"stax_{key}.so"
    loaded = _load_verified(lib, key, load)
    if loaded is not None:
        return loaded, lib, True
    build = Build(source, flags, link, suffix, key, header)
    try:
        return _build(build, root, load), lib, False
    except CacheError as e:
        if e.errno not in (errno.EROFS, errno.EACCES, errno.EPERM) or root != cache_dir():
            raise
        fallback = fall_back(str(e))
        return _build(build, fallback, load), fallback / lib.name, False


@dataclass(frozen=True)
class Build:
    source: str
    flags: list[str]
    link: list[str]
    suffix: str
    key: str
    header: tuple[str, Verified] | None = None


def _build(build: Build, root: Path, load: Callable[[str], T]) -> T:
    lib = root / f"stax_{build.key}.so"
    try:
        tmp_dir = tempfile.TemporaryDirectory(dir=root, prefix="build-")
    except OSError as e:
        raise _environment_error(e, "create a build directory in", root) from None
    with tmp_dir as tmp:
        src = Path(tmp) / f"kernel{build.suffix}"
        out = Path(tmp) / "kernel.so"
        try:
            body, include = _with_header(build, Path(tmp))
            src.write_text(body)
        except OSError as e:
            raise _environment_error(e, "write the generated source to", src) from None
        result = subprocess.run([compiler(), *build.flags, *include, str(src), "-o", str(out),
                                 *build.link], capture_output=True, text=True)
        if result.returncode != 0:
            _raise_compile_failure(result.stderr, root)
        data = out.read_bytes()
        try:
            os.chmod(out, 0o700)
            _replace(out, lib)
        except OSError as e:
            raise _environment_error(e, "write the compiled kernel to", lib) from None
        _store(lib.with_suffix(".sha256"), _digest(build.key, data), 0o600)  # after the object
        _store(lib.with_suffix(build.suffix), build.source.encode(), 0o600)
    loaded = _load_verified(lib, build.key, load)
    if loaded is None:
        raise CacheError(errno.EIO, f"stax: the kernel just compiled to {lib} changed before it "
                                    f"was loaded (another process writing there?); "
                                    f"{ENVIRONMENT_HINT}")
    return loaded


def _with_header(build: Build, tmp: Path) -> tuple[str, list[str]]:
    """The text to compile and the options that include the precompiled header: the prefix
    written beside a hard link to its verified .gch in `tmp` (g++ reads the .gch when it is
    valid for these flags, else the text: the same program either way). Without a header,
    where the link cannot be made, or when the .gch is no longer the file that was verified,
    the whole source."""
    if build.header is None:
        return build.source, []
    prefix, gch = build.header
    header, link = tmp / "header.h", tmp / "header.h.gch"
    header.write_text(prefix)
    try:
        os.link(gch.path, link)
        if _identify(str(link)).identity != gch.identity:  # replaced since it was verified
            link.unlink()
            return build.source, []
    except OSError:
        return build.source, []
    return build.source[len(prefix):], ["-include", str(header)]


def _raise_compile_failure(stderr: str, root: Path) -> None:
    environment = {"No space left on device": errno.ENOSPC, "Disk quota exceeded": errno.EDQUOT,
                   "File too large": errno.EFBIG, "File size limit exceeded": errno.EFBIG,
                   "Read-only file system": errno.EROFS,
                   "Permission denied": errno.EACCES, "Cannot allocate memory": errno.ENOMEM,
                   "virtual memory exhausted": errno.ENOMEM, "Killed": errno.ENOMEM}
    for text, code in environment.items():
        if text in stderr:
            raise _environment_error(OSError(code, os.strerror(code)), "compile a kernel in",
                                     root) from None
    raise CompileError(f"stax: the C++ compiler failed on generated code "
                       f"(a bug in Stax):\n{stderr[-4000:]}")
