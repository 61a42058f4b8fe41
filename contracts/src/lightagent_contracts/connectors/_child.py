# The validator's sandbox program. It is run as ``python -B -E -s -c <this source> <config>``
# so that the audit hook below is armed before any plugin code can run. Standard library
# only until the hook is installed. This is a tripwire for honest mistakes (a plugin that
# phones home, writes files or starts processes while loading), not a security boundary.
#
# Three layers: the audit hook refuses what Python announces (and the process starts it
# does not announce, through ``_posixsubprocess.fork_exec``); on Linux the program is a
# child subreaper in a network namespace of its own, so a process started behind Python's
# back (libc through ctypes, a native extension) reaches no network and stays our
# descendant; and before the program ends every descendant is reported and killed.
import json
import os
import signal
import sys
import time
import types
from _thread import get_ident

if __name__ != "__main__":  # only ever run as ``python -c``; importing it does nothing
    raise ImportError("lightagent_contracts.connectors._child is a program, not a module")

CONFIG = json.loads(sys.argv[1])
TMP = os.path.realpath(CONFIG["tmp"])
ROOTS = tuple(CONFIG["roots"])
SENTINEL = CONFIG["sentinel"]
EVENTS: list[dict] = []
# Threads inside the hook right now: the hook ignores the events it causes itself, but
# never another thread's (a busy flag for the whole process would skip those).
_busy: set[int] = set()
_PR_SET_CHILD_SUBREAPER = 36
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000


def _isolate():
    """Become a child subreaper in a fresh network namespace where the OS allows it."""
    done = {"subreaper": False, "network_namespace": False}
    if not sys.platform.startswith("linux"):
        return done
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except (ImportError, OSError):
        return done
    done["subreaper"] = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    if libc.unshare(_CLONE_NEWNET) == 0:
        done["network_namespace"] = True
        return done
    # Without CAP_SYS_ADMIN: a user namespace mapping our own ids, then the network one.
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return done
    try:
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1"),
            ("gid_map", f"{gid} {gid} 1"),
        ):
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
    except OSError:
        pass
    done["network_namespace"] = True
    return done


ISOLATION = _isolate()
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_NET = {
    "socket.connect",
    "socket.sendto",
    "socket.sendmsg",
    "socket.bind",
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.gethostbyaddr",
    "socket.getnameinfo",
}
_FS = {
    "os.remove",
    "os.rename",
    "os.mkdir",
    "os.rmdir",
    "shutil.rmtree",
    "os.symlink",
    "os.link",
    "os.truncate",
    "os.chmod",
    "os.chown",
    "shutil.copyfile",
    "shutil.move",
}
_PROC = {
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "pty.spawn",
}


class SandboxViolation(PermissionError):
    """Raised into plugin code when it does something the validator forbids."""


def _where():
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(ROOTS):
            return f"{name}:{frame.f_lineno}"
        frame = frame.f_back
    return ""


def _allowed(path):
    if isinstance(path, int):
        return True
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    full = os.path.realpath(os.path.join(os.getcwd(), str(path)))
    return full == os.devnull or full == TMP or full.startswith(TMP + os.sep)


def _deny(kind, detail):
    event = {"kind": kind, "detail": detail, "where": _where()}
    EVENTS.append(event)
    sys.stderr.write("LIGHTAGENT-SANDBOX-EVENT " + json.dumps(event) + "\n")
    sys.stderr.flush()
    raise SandboxViolation(f"lightagent validator sandbox: {kind} refused: {detail}")


def _audit(event, args):
    me = get_ident()
    if me in _busy:
        return
    _busy.add(me)
    try:
        if event in _NET:
            _deny(
                "network",
                f"{event}{args[1:] if event.startswith('socket.') and event not in ('socket.getaddrinfo', 'socket.gethostbyname') else args}",
            )
        elif event == "open":
            path, mode, flags = (*tuple(args), None, None, None)[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writing and not _allowed(path):
                _deny("write", f"open({path!r}, {mode or flags!r})")
        elif event in _FS:
            if not all(_allowed(a) for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))):
                _deny("write", f"{event}{tuple(args)!r}")
        elif event == "sqlite3.connect":
            db = args[0] if args else ""
            if db not in (":memory:", b":memory:", "") and not _allowed(db):
                _deny("write", f"sqlite3.connect({db!r})")
        elif event in _PROC:
            _deny("process", f"{event}{tuple(args)[:2]!r}")
    finally:
        _busy.discard(me)


def _descendants():
    """``[(pid, command, exited)]`` of every process below this one (Linux ``/proc``; else none)."""
    children: dict[int, list[int]] = {}
    zombies: set[int] = set()
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read().decode("utf-8", "replace")
            fields = stat[stat.rindex(")") + 2 :].split()
            ppid = int(fields[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
        if fields[0] == "Z":
            zombies.add(int(name))
    found, todo = [], list(children.get(os.getpid(), ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    out = []
    for pid in sorted(found):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                command = fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            command = ""
        out.append((pid, " ".join(command.split()) or "?", pid in zombies))
    return out


def _contain():
    """Report and kill every process the plugin left behind, then reap them."""
    for pid, command, exited in _descendants():
        if exited:  # it ran and ended; it was started all the same
            what = f"pid {pid} was started while loading and has exited"
        else:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
            what = f"pid {pid} ({command[:300]}) was started while loading, outlived the import and was killed"
        event = {"kind": "process", "detail": what, "where": ""}
        EVENTS.append(event)
        sys.stderr.write("LIGHTAGENT-SANDBOX-EVENT " + json.dumps(event) + "\n")
    sys.stderr.flush()
    if not hasattr(os, "WNOHANG"):  # Windows: no /proc, no process tree to reap
        return
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:  # as subreaper, orphans are ours to reap
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.01)


def _stopped(signum, frame):
    # The parent's time limit: contain what was started before going.
    _contain()
    os._exit(124)


signal.signal(signal.SIGTERM, _stopped)
sys.addaudithook(_audit)


def _fork_exec(*args, **kwargs):
    # multiprocessing's "spawn" and "forkserver" start interpreters here with no audit event.
    argv = args[0] if args else kwargs.get("args")
    _deny("process", f"_posixsubprocess.fork_exec({list(argv or [])[:6]!r})")


try:
    import _posixsubprocess
except ImportError:  # Windows starts processes through _winapi, which is audited
    pass
else:
    _posixsubprocess.fork_exec = _fork_exec
sys.dont_write_bytecode = True
for entry in reversed(CONFIG["sys_path"]):
    sys.path.insert(0, entry)

import importlib  # noqa: E402
import traceback  # noqa: E402

try:
    import resource
except ImportError:  # not on Windows: memory is then not measured
    resource = None  # type: ignore[assignment]


def _rss_kb():
    # The current resident size: ru_maxrss would carry the parent's peak across exec.
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss if resource else 0


import lightagent.hookspecs  # noqa: E402,F401  (core cost is not charged to the plugin)

from lightagent_contracts.connectors.objects import inspect_plugin  # noqa: E402

HEAVY = (
    "openai",
    "httpx",
    "sqlalchemy",
    "mcp",
    "numpy",
    "torch",
    "pandas",
    "transformers",
    "mem0",
    "langchain",
    "grpc",
    "tensorflow",
    "scipy",
)
result = {"imports": [], "events": EVENTS, "plugins": [], "isolation": ISOLATION}
for ep in CONFIG["entry_points"]:
    module_name, _, attr = ep["value"].split("[", 1)[0].partition(":")
    before = set(sys.modules)
    rss0 = _rss_kb()
    started = time.perf_counter()
    record = {"entry_point": ep["name"], "module": module_name.strip(), "error": None}
    plugin = None
    try:
        plugin = importlib.import_module(module_name.strip())
        for part in filter(None, attr.strip().split(".")):
            plugin = getattr(plugin, part)
    except BaseException as exc:
        frames = [
            f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(ROOTS)
        ]
        where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        record["error"] = {"type": type(exc).__name__, "message": str(exc)[:500], "where": where}
        plugin = None
    record["seconds"] = time.perf_counter() - started
    record["rss_kb"] = _rss_kb() - rss0
    new = set(sys.modules) - before
    record["modules_loaded"] = len(new)
    record["heavy"] = sorted(h for h in HEAVY if h in new)
    result["imports"].append(record)
    if plugin is not None:
        try:
            # The real loader, next to the core's built-in plugin: conflicts show up here.
            from lightagent.plugins import PluginHost

            host = PluginHost(entry_points=False, plugins=[(ep["name"], plugin)], environ={})
            info = next(i for i in host.plugins() if i.name == ep["name"])
            record["host"] = {"status": info.status, "error": info.error}
        except BaseException as exc:
            record["host"] = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
        try:
            result["plugins"].append(inspect_plugin(plugin, plugin_name=ep["name"]))
        except BaseException as exc:
            result["plugins"].append(
                {
                    "findings": [
                        {
                            "code": "LAV032",
                            "message": f"{type(exc).__name__}: {exc}",
                            "location": "",
                            "level": None,
                        }
                    ],
                    "registered": {},
                    "hooks": [],
                    "manifest": None,
                }
            )

_contain()
sys.stdout.flush()
sys.stdout.write("\n" + SENTINEL + json.dumps(result, default=repr) + "\n")
sys.stdout.flush()
