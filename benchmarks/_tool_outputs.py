"""Shell tool outputs the transcript corpus has few of, made for the estimator's accuracy
check (``estimator_accuracy.py``, second table). Not a benchmark itself.

Every sample is synthesized from a seeded ``random.Random``: the same seed gives the same
texts on every machine. Two disjoint seed sets exist: :data:`FIT_SEED` (the texts the
estimator's blank-run and escape-sequence constants were fitted on, ``tokens/constants.py``)
and :data:`CHECK_SEED` (the held-out texts the benchmark prints). With ``live=True``,
:func:`live_samples` also runs a few read-only commands of the machine it runs on
(``pip list``, ``df -h`` …) and takes their output; nothing is saved.

Kinds: column-aligned tables (``pip list``, ``df -h``, ``dpkg -l``, ``free -m``,
``ls -la``, ``ps aux``), ``mount`` lines, ``/proc/cpuinfo`` (``key<TAB>: value``), ANSI
coloured output (``ls --color``, ``grep --color``, ``git diff --color``), long runs of
spaces or tabs, and text in capitals (a log written in upper case, SQL with upper-case
keywords and names, a licence's disclaimer), which BPE splits into more pieces than the
same words in lower case, and keys and ids of random letters and digits (``.env`` lines,
nanoids in JSON, a listing of 32-character keys), which BPE has no merges for.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable, Collection, Iterator

#: Seeds of the two sample sets (disjoint: the fit never sees a check text).
FIT_SEED = 1
CHECK_SEED = 2
#: Samples per kind.
PER_KIND = 12

_SYL = ("ab", "ar", "co", "de", "en", "fi", "ge", "io", "ly", "ma", "ne", "or", "py", "qu", "ra")
_SYL += ("se", "st", "te", "ti", "ul", "ve", "x", "yt", "zo", "lib", "ng", "sh", "ch", "th")
_WORDS = ("the", "file", "data", "client", "server", "test", "config", "parser", "utils", "core")
_WORDS += ("http", "json", "async", "python", "tools", "build", "cache", "stream", "log", "net")
_ESC = "\x1b"


def _name(r: random.Random, parts: tuple[int, int] = (1, 3)) -> str:
    pieces = []
    for _ in range(r.randint(*parts)):
        pieces.append(r.choice(_WORDS) if r.random() < 0.5 else r.choice(_SYL) + r.choice(_SYL))
    return r.choice(("-", "_", "")).join(pieces)


def _version(r: random.Random) -> str:
    return ".".join(str(r.randint(0, 30)) for _ in range(r.randint(2, 3)))


def _align(rows: list[list[str]], right: Collection[int] = (), gap: int = 1) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append((" " * gap).join(cells).rstrip())
    return "\n".join(lines) + "\n"


def pip_list(r: random.Random) -> str:
    rows = [["Package", "Version"], ["-" * 7, "-" * 7]]
    rows += [[_name(r), _version(r)] for _ in range(r.randint(15, 80))]
    width = max(len(a) for a, _ in rows)
    rows[1][0] = "-" * width
    rows[1][1] = "-" * max(len(b) for _, b in rows)
    return _align(rows)


def df_h(r: random.Random) -> str:
    rows = [["Filesystem", "Size", "Used", "Avail", "Use%", "Mounted on"]]
    for _ in range(r.randint(4, 20)):
        size = r.randint(1, 999)
        used = r.randint(0, size)
        dev = r.choice(("/dev/sda", "/dev/nvme0n1p", "tmpfs", "overlay", "/dev/vdb", "shm"))
        dev += str(r.randint(1, 9)) if dev.startswith("/dev") else ""
        unit = r.choice("KMGT")
        mnt = r.choice(("/", "/run", "/dev/shm", "/boot/efi", "/home", "/var/lib/docker", "/tmp"))
        rows.append(
            [
                dev,
                f"{size}{unit}",
                f"{used}{unit}",
                f"{size - used}{unit}",
                f"{100 * used // size}%",
                mnt,
            ]
        )
    return _align(rows, right={1, 2, 3, 4})


def dpkg_l(r: random.Random) -> str:
    head = (
        "Desired=Unknown/Install/Remove/Purge/Hold\n"
        "| Status=Not/Inst/Conf-files/Unpacked/halF-conf/Half-inst/trig-aWait/Trig-pend\n"
        "|/ Err?=(none)/Reinst-required (Status,Err: uppercase=bad)\n"
    )
    rows = [["||/", "Name", "Version", "Architecture", "Description"]]
    rows.append(["+++-", "=" * 20, "=" * 20, "=" * 12, "=" * 40])
    for _ in range(r.randint(15, 60)):
        desc = " ".join(r.choice(_WORDS) for _ in range(r.randint(3, 9)))
        ver = _version(r) + r.choice(("", "-1", "-2ubuntu1", "+dfsg-1build2", "-0ubuntu0.22.04.1"))
        rows.append(["ii", _name(r), ver, r.choice(("amd64", "all", "arm64")), desc])
    return head + _align(rows, gap=2)


def free_m(r: random.Random) -> str:
    head = ["", "total", "used", "free", "shared", "buff/cache", "available"]
    rows = [head]
    for label in ("Mem:", "Swap:"):
        total = r.randint(500, 600_000)
        rows.append([label] + [str(r.randint(0, total)) for _ in range(6)])
        rows[-1][1] = str(total)
    rows[-1] = rows[-1][:4]
    width = max(len(c) for row in rows for c in row) + 6
    return "".join(
        row[0].ljust(7) + "".join(c.rjust(width) for c in row[1:]) + "\n" for row in rows
    )


def _perm(r: random.Random) -> str:
    kind = r.choice("-----dl")
    bits = "".join(r.choice(("rwx", "rw-", "r-x", "r--", "---")) for _ in range(3))
    return kind + bits


def ls_la(r: random.Random) -> str:
    rows = []
    for _ in range(r.randint(8, 50)):
        name = _name(r) + r.choice(("", ".py", ".so", ".conf", ".txt", ".json", ".d"))
        month = r.choice(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Sep", "Oct", "Dec"))
        when = (
            f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}"
            if r.random() < 0.6
            else str(r.randint(2015, 2025))
        )
        owner = r.choice(("root", "user", "www-data", "postgres"))
        rows.append(
            [
                _perm(r),
                str(r.randint(1, 40)),
                owner,
                owner,
                str(r.randint(0, 10 ** r.randint(1, 8))),
                month,
                str(r.randint(1, 28)),
                when,
                name,
            ]
        )
    return f"total {r.randint(10, 9999)}\n" + _align(rows, right={1, 4, 6, 7})


def ps_aux(r: random.Random) -> str:
    rows = [
        ["USER", "PID", "%CPU", "%MEM", "VSZ", "RSS", "TTY", "STAT", "START", "TIME", "COMMAND"]
    ]
    for _ in range(r.randint(8, 40)):
        cmd = r.choice(("/usr/bin/", "/usr/sbin/", "python3 ", "bash ", "[kworker/")) + _name(r)
        rows.append(
            [
                r.choice(("root", "user", "daemon")),
                str(r.randint(1, 99999)),
                f"{r.random() * 9:.1f}",
                f"{r.random() * 5:.1f}",
                str(r.randint(0, 9999999)),
                str(r.randint(0, 999999)),
                r.choice(("?", "pts/0", "pts/1")),
                r.choice(("S", "Ss", "R+", "Sl", "I<")),
                f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}",
                f"{r.randint(0, 9)}:{r.randint(0, 59):02d}",
                cmd,
            ]
        )
    return _align(rows, right={1, 4, 5})


def mount(r: random.Random) -> str:
    lines = []
    for _ in range(r.randint(5, 30)):
        fs = r.choice(("ext4", "tmpfs", "proc", "sysfs", "cgroup2", "overlay", "devpts", "mqueue"))
        dev = r.choice(("/dev/sda1", "tmpfs", "proc", "sysfs", "overlay", "devpts", "none"))
        opts = ",".join(
            r.sample(
                ("rw", "ro", "nosuid", "nodev", "noexec", "relatime", "inode64", "seclabel"),
                r.randint(2, 6),
            )
            + [f"size={r.randint(1, 99999)}k", f"mode={r.choice(('755', '1777', '620'))}"][
                : r.randint(0, 2)
            ]
        )
        path = "/" + "/".join(_name(r, (1, 1)) for _ in range(r.randint(0, 4)))
        lines.append(f"{dev} on {path} type {fs} ({opts})")
    return "\n".join(lines) + "\n"


def cpuinfo(r: random.Random) -> str:
    keys = (
        ("processor", 0),
        ("vendor_id", 0),
        ("cpu family", 0),
        ("model", 1),
        ("model name", 0),
        ("stepping", 1),
        ("microcode", 0),
        ("cpu MHz", 1),
        ("cache size", 1),
        ("physical id", 0),
        ("siblings", 1),
        ("core id", 1),
        ("cpu cores", 1),
        ("fpu", 2),
        ("flags", 2),
        ("bogomips", 1),
        ("clflush size", 0),
        ("address sizes", 0),
        ("power management", 0),
    )
    flags = (
        "fpu",
        "vme",
        "de",
        "pse",
        "tsc",
        "msr",
        "pae",
        "mce",
        "cx8",
        "apic",
        "sep",
        "mtrr",
        "pge",
        "sse4_1",
        "avx2",
        "bmi2",
        "rdseed",
        "adx",
        "smap",
        "clflushopt",
    )
    blocks = []
    for cpu in range(r.randint(1, 3)):
        lines = []
        for key, tabs in keys:
            if key == "flags":
                val = " ".join(r.sample(flags, r.randint(8, len(flags))))
            elif key == "model name":
                val = f"Intel(R) Xeon(R) CPU @ {r.randint(1, 4)}.{r.randint(0, 99):02d}GHz"
            elif key == "processor":
                val = str(cpu)
            elif key in ("fpu",):
                val = "yes"
            else:
                val = r.choice(
                    (
                        str(r.randint(0, 9999)),
                        f"{r.random() * 4000:.3f}",
                        f"{r.randint(1, 64)} KB",
                        "0x" + format(r.getrandbits(24), "x"),
                        "GenuineIntel",
                        "",
                    )
                )
            lines.append(
                f"{key}"
                + "\t" * (1 + (len(key) < 8) + (tabs == 2 and len(key) < 8 and r.random() < 0.5))
                + f": {val}".rstrip()
            )
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks) + "\n"


def _sgr(r: random.Random) -> str:
    return (
        f"{_ESC}["
        + r.choice(
            ("01;34", "01;32", "01;36", "0", "1", "31", "32", "36", "01;31", "33", "40;33;01")
        )
        + "m"
    )


def ls_color(r: random.Random) -> str:
    names = []
    for _ in range(r.randint(10, 60)):
        name = _name(r) + r.choice(("", ".py", ".so", ".sh", ".tar.gz", ""))
        names.append(f"{_sgr(r)}{name}{_ESC}[0m" if r.random() < 0.8 else name)
    if r.random() < 0.5:
        return "\n".join(names) + "\n"
    return "  ".join(names) + "\n"


def grep_color(r: random.Random) -> str:
    lines = []
    word = r.choice(_WORDS)
    for _ in range(r.randint(5, 40)):
        path = "src/" + "/".join(_name(r, (1, 1)) for _ in range(r.randint(1, 3))) + ".py"
        text = " " * 4 * r.randint(0, 3) + " ".join(
            r.choice(_WORDS) for _ in range(r.randint(2, 8))
        )
        hit = f"{_ESC}[01;31m{_ESC}[K{word}{_ESC}[m{_ESC}[K"
        text = text.replace(" ", f" {hit}", 1) if " " in text.strip() else hit + text
        lines.append(
            f"{_ESC}[35m{_ESC}[K{path}{_ESC}[m{_ESC}[K{_ESC}[36m{_ESC}[K:{_ESC}[m{_ESC}[K"
            f"{_ESC}[32m{_ESC}[K{r.randint(1, 999)}{_ESC}[m{_ESC}[K"
            f"{_ESC}[36m{_ESC}[K:{_ESC}[m{_ESC}[K{text}"
        )
    return "\n".join(lines) + "\n"


def git_diff_color(r: random.Random) -> str:
    path = "/".join(_name(r, (1, 1)) for _ in range(r.randint(1, 3))) + ".py"
    out = [
        f"{_ESC}[1mdiff --git a/{path} b/{path}{_ESC}[m",
        f"{_ESC}[1mindex {r.getrandbits(28):07x}..{r.getrandbits(28):07x} 100644{_ESC}[m",
        f"{_ESC}[1m--- a/{path}{_ESC}[m",
        f"{_ESC}[1m+++ b/{path}{_ESC}[m",
    ]
    for _ in range(r.randint(1, 5)):
        start = r.randint(1, 500)
        out.append(f"{_ESC}[36m@@ -{start},7 +{start},8 @@{_ESC}[m def {_name(r)}():")
        for _ in range(r.randint(4, 14)):
            code = " " * 4 * r.randint(1, 3) + f"{_name(r)} = {_name(r)}({r.randint(0, 99)})"
            sign = r.choice((" ", " ", "+", "-"))
            if sign == "+":
                out.append(f"{_ESC}[32m+{code}{_ESC}[m")
            elif sign == "-":
                out.append(f"{_ESC}[31m-{code}{_ESC}[m")
            else:
                out.append(f" {code}")
    return "\n".join(out) + "\n"


def blank_runs(r: random.Random) -> str:
    blank = r.choice((" ", "\t", " ", " "))
    pieces = []
    for _ in range(r.randint(1, 6)):
        pieces.append(_name(r))
        pieces.append(
            blank * r.choice((r.randint(2, 40), r.randint(100, 3000), r.randint(5000, 60000)))
        )
    return "".join(pieces) + "\n"


_CAPS = ("ERROR", "WARNING", "FATAL", "CONNECTION", "REFUSED", "UNABLE", "TO", "REACH", "THE")
_CAPS += ("DATABASE", "SERVER", "AT", "HOST", "RETRYING", "IN", "SECONDS", "TIMEOUT", "WHILE")
_CAPS += ("WAITING", "FOR", "LOCK", "CHECKSUM", "MISMATCH", "DETECTED", "ON", "NODE", "DISK")
_CAPS += ("USAGE", "EXCEEDED", "THRESHOLD", "BACKUP", "FAILED", "PERMISSION", "DENIED", "OF")
_CAPS += ("CONFIGURATION", "MISSING", "INVALID", "REQUEST", "RESPONSE", "RESTARTING", "NOT")
_CAPS += ("SERVICE", "PLEASE", "INVESTIGATE", "IMMEDIATELY", "QUEUE", "FULL", "DROPPING")


def caps_log(r: random.Random) -> str:
    lines = []
    for _ in range(r.randint(5, 60)):
        level = r.choice(("[ERROR]", "[WARNING]", "[FATAL]", "***", "ALERT:"))
        words = " ".join(r.choice(_CAPS) for _ in range(r.randint(4, 14)))
        lines.append(f"{level} {words}{r.choice(('.', ':', '', f' {r.randint(0, 999)}.'))}")
    return "\n".join(lines) + "\n"


def caps_sql(r: random.Random) -> str:
    tables = [_name(r, (1, 2)).upper() for _ in range(4)]
    columns = [_name(r, (1, 2)).upper() for _ in range(8)]
    lines = []
    for _ in range(r.randint(3, 30)):
        t, u = r.sample(tables, 2)
        picked = ", ".join(f"A.{c}" for c in r.sample(columns, r.randint(1, 4)))
        lines.append(
            f"SELECT {picked} FROM {t} A INNER JOIN {u} B ON B.{columns[0]} = A.ID "
            f"WHERE A.{r.choice(columns)} > {r.randint(0, 9999)} AND B.STATUS = "
            f"'{r.choice(('ACTIVE', 'PENDING', 'CLOSED'))}' ORDER BY A.{r.choice(columns)} "
            f"{r.choice(('ASC', 'DESC'))} LIMIT {r.randint(1, 500)};"
        )
    return "\n".join(lines) + "\n"


def caps_licence(r: random.Random) -> str:
    clauses = (
        'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,',
        "INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A",
        "PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT",
        "HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF",
        "CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE",
        "OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.",
    )
    head = f"Copyright (c) {r.randint(1995, 2026)} {_name(r).title()} contributors\n\n"
    return head + "\n".join(clauses[: r.randint(2, len(clauses))]) + "\n"


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _random_run(r: random.Random, n: int, alphabet: str = _ALNUM) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def keys(r: random.Random) -> str:
    """Keys and ids of random letters and digits: ``.env`` lines, a JSON list of records with
    nanoids, a listing of 32-character keys."""
    shape = r.choice(("env", "json", "listing"))
    lines = []
    for _ in range(r.randint(4, 40)):
        if shape == "env":
            name = f"{_name(r, (1, 2)).upper()}_{r.choice(('KEY', 'TOKEN', 'SECRET'))}"
            lines.append(f"{name}={r.choice(('sk_live_', 'ghp_', ''))}{_random_run(r, 24)}")
        elif shape == "json":
            nanoid = _random_run(r, 21, _ALNUM + "_-")
            lines.append(f'  {{"id": "{nanoid}", "name": "{_name(r)}", "n": {r.randint(0, 99)}}},')
        else:
            lines.append(f"{_random_run(r, 32)}  {_name(r)}  {r.randint(1, 28)} Nov 2026")
    if shape == "json":
        return "[\n" + "\n".join(lines).rstrip(",") + "\n]\n"
    return "\n".join(lines) + "\n"


#: Each kind's generator: a seeded random source in, one sample text out.
KINDS: dict[str, Callable[[random.Random], str]] = {
    "pip list": pip_list,
    "df -h": df_h,
    "dpkg -l": dpkg_l,
    "free -m": free_m,
    "ls -la": ls_la,
    "ps aux": ps_aux,
    "mount": mount,
    "cpuinfo": cpuinfo,
    "ls --color": ls_color,
    "grep --color": grep_color,
    "git diff --color": git_diff_color,
    "blank runs": blank_runs,
    "log in capitals": caps_log,
    "SQL in capitals": caps_sql,
    "licence in capitals": caps_licence,
    "keys and ids": keys,
}


def samples(seed: int, per_kind: int = PER_KIND) -> Iterator[tuple[str, str]]:
    """``(kind, text)``: ``per_kind`` synthesized samples of each kind of :data:`KINDS`, the
    same for the same ``seed``."""
    for index, (kind, make) in enumerate(KINDS.items()):
        r = random.Random(seed * 1_000 + index)
        for _ in range(per_kind):
            yield kind, make(r)


#: Read-only commands :func:`live_samples` runs (a shell is needed for none of them).
LIVE_COMMANDS: dict[str, list[str]] = {
    "live: pip list": ["python", "-m", "pip", "list"],
    "live: cat /proc/cpuinfo": ["cat", "/proc/cpuinfo"],
    "live: mount": ["mount"],
    "live: dpkg -l": ["dpkg", "-l"],
    "live: df -h": ["df", "-h"],
    "live: free -m": ["free", "-m"],
    "live: ls -la /usr/lib": ["ls", "-la", "/usr/lib"],
    "live: ls --color /usr/bin": ["ls", "--color=always", "/usr/bin"],
    "live: ps aux": ["ps", "aux"],
}


def live_samples(python: str) -> Iterator[tuple[str, str]]:
    """``(kind, output)`` of each command of :data:`LIVE_COMMANDS` that runs here and prints
    something (``python``: the interpreter for ``pip list``); nothing is written anywhere."""
    for kind, argv in LIVE_COMMANDS.items():
        argv = [python, *argv[1:]] if argv[0] == "python" else argv
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0 and done.stdout.strip():
            yield kind, done.stdout
