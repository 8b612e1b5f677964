"""What each program may be asked to do in a read-only mode: one row per program (SPEC §9).

A row lists the options a program accepts (those taking a value marked like getopt's
``optstring``: ``-o:`` required, ``-i::`` optional and attached; ``--output=`` required,
``--color=?`` optional), the options that make it write or run something (with the reason the
model is told) and what its operands may be. Everything not in a row is refused: an unknown
program, an unknown option, an option a prefix could stand for that writes. Extending the hook
to a new reader is one row here; ``command_check`` walks the shell's syntax tree and asks these
rows about every command it finds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType


class Denied(Exception):
    """A command line is not provably read-only; the message says why, for the model."""


class Special(Enum):
    """Programs whose operands are themselves code, checked by their own reader."""

    NONE = "none"
    SED = "sed"
    AWK = "awk"
    FIND = "find"
    GIT = "git"
    SHELL = "shell"
    EVAL = "eval"
    TEST = "test"
    READ = "read"
    DATE = "date"
    CURL = "curl"
    PAGER = "pager"
    CD = "cd"


class Arity(Enum):
    FLAG = 0
    REQUIRED = 1
    OPTIONAL = 2  # only attached: ``-i{}``, ``--color=auto``


@dataclass(frozen=True)
class Rule:
    #: Options with their arity, e.g. ``"-n: -v --lines= --color=?"``; parsed once.
    options: str = ""
    #: Option -> why it is refused (it writes, runs a program, or talks to a socket).
    forbidden: Mapping[str, str] = field(default_factory=dict)
    #: No argument can make it write or run anything: any argument is fine, computed ones too,
    #: and it may follow ``xargs`` or ``find -exec``.
    any_args: bool = False
    #: At most this many operands (another one would name a file it writes).
    max_operands: int | None = None
    #: Options still count after operands, as GNU getopt permutes them (builtins and wrappers stop).
    permute: bool = True
    #: A wrapper: after its options (and ``skip`` operands) the rest is another command line.
    runs_command: bool = False
    skip: int = 0
    special: Special = Special.NONE

    def __post_init__(self) -> None:
        object.__setattr__(self, "_spec", _parse_spec(self.options, self.forbidden))

    @property
    def spec(self) -> OptionSpec:
        return self._spec  # type: ignore[attr-defined, no-any-return]


@dataclass(frozen=True)
class OptionSpec:
    short: Mapping[str, Arity]
    long: Mapping[str, Arity]


_SPEC_TOKEN = re.compile(r"^(--?[^=:]+)(::|:|=\?|=)?$")


def _parse_spec(options: str, forbidden: Mapping[str, str]) -> OptionSpec:
    short: dict[str, Arity] = {}
    long: dict[str, Arity] = {}
    for token in [*options.split(), *forbidden]:
        m = _SPEC_TOKEN.match(token)
        if m is None:
            raise ValueError(f"bad option spec {token!r}")
        name, mark = m.group(1), m.group(2) or ""
        arity = {"": Arity.FLAG, ":": Arity.REQUIRED, "=": Arity.REQUIRED}.get(mark, Arity.OPTIONAL)
        if name.startswith("--"):
            long[name] = arity
        elif len(name) == 2:
            short[name[1]] = arity
        else:
            raise ValueError(f"a short option is one letter: {token!r}")
    return OptionSpec(MappingProxyType(short), MappingProxyType(long))


def forbidden_reason(rule: Rule, option: str) -> str | None:
    """The reason for a forbidden option, whichever way its spec names it."""
    for key, reason in rule.forbidden.items():
        m = _SPEC_TOKEN.match(key)
        if m is not None and m.group(1) == option:
            return reason
    return None


def match_long(spec: OptionSpec, given: str) -> tuple[list[str], bool]:
    """The long options ``given`` (without ``=value``) stands for, as GNU ``getopt_long`` reads
    it: an exact name, else every name it is a prefix of. Second: whether it was exact."""
    if given in spec.long:
        return [given], True
    return [name for name in spec.long if name.startswith(given)], False


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


WRITES = "writes a file"
RUNS = "runs another program"

#: Commands that change files, the repository, packages or processes, with what they do.
MUTATING: Mapping[str, str] = MappingProxyType(
    {
        "rm": "deletes files",
        "rmdir": "deletes folders",
        "unlink": "deletes files",
        "shred": "destroys files",
        "mv": "moves files",
        "cp": "writes files",
        "touch": "creates files",
        "mkdir": "creates folders",
        "mkfifo": "creates files",
        "mknod": "creates files",
        "chmod": "changes permissions",
        "chown": "changes ownership",
        "chgrp": "changes ownership",
        "ln": "creates links",
        "dd": "writes files",
        "tee": "writes files",
        "truncate": "changes files",
        "install": "writes files",
        "patch": "changes files",
        "rsync": "writes files",
        "scp": "writes files",
        "tar": "can write files",
        "unzip": "writes files",
        "zip": "writes files",
        "gzip": "changes files",
        "gunzip": "changes files",
        "wget": "downloads files",
        "make": "runs build steps",
        "cmake": "runs build steps",
        "ninja": "runs build steps",
        "pip": "installs packages",
        "pip3": "installs packages",
        "pipx": "installs packages",
        "uv": "installs packages",
        "poetry": "installs packages",
        "npm": "installs packages or runs scripts",
        "npx": "runs packages",
        "yarn": "installs packages or runs scripts",
        "pnpm": "installs packages or runs scripts",
        "apt": "installs packages",
        "apt-get": "installs packages",
        "dpkg": "installs packages",
        "cargo": "builds or installs packages",
        "go": "builds or installs packages",
        "gem": "installs packages",
        "brew": "installs packages",
        "kill": "stops processes",
        "pkill": "stops processes",
        "killall": "stops processes",
        "sudo": "runs commands as another user",
        "su": "runs commands as another user",
        "doas": "runs commands as another user",
        "source": "runs a script",
        ".": "runs a script",
        "crontab": "schedules commands",
        "at": "schedules commands",
        "docker": "controls containers",
        "podman": "controls containers",
        "nohup": "starts background processes",
        "setsid": "starts background processes",
        "vi": "edits files",
        "vim": "edits files",
        "nano": "edits files",
        "emacs": "edits files",
        "ed": "edits files",
        "alias": "redefines commands",
        "shopt": "changes shell options",
        "trap": "runs commands on signals",
        "let": "evaluates arithmetic, which runs substitutions inside variable values",
        "mapfile": "sets variables",
        "readarray": "sets variables",
        "getopts": "sets variables",
        "enable": "loads shell builtins",
        "hash": "changes which programs run",
        "complete": "changes the shell",
        "fc": "runs commands from the history",
        "coproc": "starts background processes",
    }
)
INTERPRETERS = _names(
    """
    python python2 python3 node nodejs deno bun ruby perl php lua Rscript R java tclsh osascript
    pwsh powershell
    """
)
SHELLS = _names("bash sh zsh dash ksh mksh fish busybox")
_INTERPRETER_NAME = re.compile(r"python\d+(\.\d+)*|pypy\d*")


def is_interpreter(name: str) -> bool:
    return name in INTERPRETERS or _INTERPRETER_NAME.fullmatch(name) is not None


#: Upper-case names belong to the environment by convention, and the programs and libraries a
#: reader runs act on many of them: SSLKEYLOGFILE makes OpenSSL, NSS and curl write their keys
#: to a file, GIT_TRACE* and MALLOC_TRACE write traces, LD_* and GCONV_PATH load code. No list of
#: the harmful ones is ever complete, so only these may be set (or unset): they change how output
#: looks, or they are the shell's own. Lower-case names are the command line's own variables.
_SAFE_ENVIRONMENT = _names(
    """
    LANG LANGUAGE LC_ALL LC_CTYPE LC_COLLATE LC_MESSAGES LC_NUMERIC LC_TIME LC_MONETARY LC_PAPER
    LC_NAME LC_ADDRESS LC_TELEPHONE LC_MEASUREMENT LC_IDENTIFICATION TZ IFS COLUMNS LINES TERM
    NO_COLOR CLICOLOR CLICOLOR_FORCE FORCE_COLOR COLORTERM LS_COLORS TIME_STYLE QUOTING_STYLE
    OPTIND OPTERR REPLY _
    """
)
#: Among names with a lower-case letter, those that still change what runs: zsh ties these
#: arrays to PATH and its kin (``zsh -c 'path=(.); ls'``).
_DANGEROUS_VARS = _names("path cdpath fpath manpath mailpath module_path")
_DANGEROUS_PREFIXES = ("LD_", "GIT_", "BASH_", "DYLD_", "XDG_", "LESS", "PYTHON", "PERL", "RUBY", "NODE_")
_DANGEROUS_SUFFIXES = ("PATH", "HOME", "RC", "OPTS", "OPT", "OPTIONS", "CONFIG", "PAGER", "EDITOR", "SHELL")


def dangerous_variable(name: str) -> bool:
    """Whether setting or unsetting ``name`` can change what a later program runs, reads as
    configuration, or writes: any upper-case name but a few known to be harmless, and any name
    that is not a plain shell name."""
    if not _IDENTIFIER.fullmatch(name):
        return True
    if not any(c.islower() for c in name):
        return name not in _SAFE_ENVIRONMENT
    return (
        name in _DANGEROUS_VARS or name.startswith(_DANGEROUS_PREFIXES) or name.endswith(_DANGEROUS_SUFFIXES)
    )


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _any(*names: str) -> dict[str, Rule]:
    return {n: Rule(any_args=True) for n in names}


_WRAPPER = {"permute": False, "runs_command": True}

RULES: Mapping[str, Rule] = MappingProxyType(
    {
        # Readers no argument can turn into a writer (GNU coreutils, grep, jq, procps).
        **_any(
            *[
                "cat",
                "head",
                "tail",
                "grep",
                "egrep",
                "fgrep",
                "wc",
                "ls",
                "stat",
                "echo",
                "basename",
                "dirname",
                "realpath",
                "readlink",
                "du",
                "df",
                "nl",
                "od",
                "hexdump",
                "hd",
                "strings",
                "sha1sum",
                "sha224sum",
                "sha256sum",
                "sha384sum",
                "sha512sum",
                "md5sum",
                "cksum",
                "b2sum",
                "base64",
                "base32",
                "true",
                "false",
                ":",
                "pwd",
                "whoami",
                "id",
                "uname",
                "nproc",
                "uptime",
                "printenv",
                "sleep",
                "seq",
                "diff",
                "cmp",
                "comm",
                "cut",
                "tr",
                "column",
                "fold",
                "fmt",
                "paste",
                "join",
                "rev",
                "tac",
                "expand",
                "unexpand",
                "jq",
                "which",
                "whereis",
                "type",
                "locale",
                "ps",
                "exit",
                "return",
                "dirs",
                "groups",
                "tty",
                "arch",
                "logname",
                "users",
            ]
        ),
        # A pager whose output is not a terminal (the hook's never is) copies its files like
        # `cat`; what could write or run is refused: a log file, a lesskey file (it can set
        # LESSOPEN), `+cmd` operands (checked by Special.PAGER) and the interactive commands,
        # which need someone at the keyboard.
        "less": Rule(
            options="""
            -F -R -r -S -N -n -X -E -e -i -I -M -m -s -q -Q -f -L -K -a -c -C -w -W -x: -z: -j:
            -h: -y: -b: -p: -P: -#: --quit-if-one-screen --RAW-CONTROL-CHARS --raw-control-chars
            --chop-long-lines --LINE-NUMBERS --line-numbers --no-init --QUIT-AT-EOF --quit-at-eof
            --ignore-case --IGNORE-CASE --LONG-PROMPT --long-prompt --squeeze-blank-lines --quiet
            --silent --QUIET --force --no-lessopen --quit-on-intr --tabs= --shift= --pattern=
            --prompt= --header= --help --version
            """,
            forbidden={
                "-o:": WRITES,
                "-O:": WRITES,
                "--log-file=": WRITES,
                "--LOG-FILE=": WRITES,
                "-k:": "reads key bindings that can set LESSOPEN (a command)",
                "--lesskey-file=": "reads key bindings that can set LESSOPEN (a command)",
                "--lesskey-src=": "reads key bindings that can set LESSOPEN (a command)",
                "--lesskey-content=": "reads key bindings that can set LESSOPEN (a command)",
                "-t:": "opens files named by a tags file",
                "-T:": "opens files named by a tags file",
                "--tag=": "opens files named by a tags file",
                "--tag-file=": "opens files named by a tags file",
            },
            special=Special.PAGER,
        ),
        "more": Rule(
            options="""
            -d -l -f -p -c -s -u -e -n: --silent --logical --no-pause --print-over --clean-print
            --squeeze --plain --exit-on-eof --lines= --help --version
            """,
            special=Special.PAGER,
        ),
        # xxd writes its second operand, and reads options only before the first.
        "xxd": Rule(
            options="-a -b -C -E -e -i -p -u -v -d -r -h -c: -g: -l: -n: -o: -s: -R:",
            max_operands=1,
            permute=False,
        ),
        "cd": Rule(any_args=True, special=Special.CD),
        "pushd": Rule(any_args=True, special=Special.CD),
        "popd": Rule(any_args=True, special=Special.CD),
        "printf": Rule(permute=False, forbidden={"-v:": "sets a shell variable"}, any_args=False),
        "rg": Rule(
            options="""
            -A: -B: -C: -c -e: -f: -F -g: -i -l -L -m: -n -N -o -p -q -r: -s -S -t: -T: -u -v -w
            -x -z -0 -H -I -a -E: -M: -j: -U --after-context= --before-context= --context= --count
            --regexp= --file= --fixed-strings --glob= --iglob= --ignore-case --files-with-matches
            --files --files-without-match --follow --max-count= --line-number --no-line-number
            --only-matching --pretty --quiet --replace= --case-sensitive --smart-case --type=
            --type-not= --type-list --unrestricted --invert-match --word-regexp --line-regexp
            --search-zip --null --with-filename --no-filename --no-ignore --hidden --no-heading
            --heading --color= --colors= --column --json --sort= --sortr= --stats --trim --vimgrep
            --max-depth= --max-filesize= --multiline --text --encoding= --threads= --debug
            --no-messages --no-config --pcre2 --engine= --passthru --count-matches --help --version
            --pre-glob= --ignore-file= --no-ignore-vcs --no-ignore-parent --one-file-system
            """,
            forbidden={"--pre=": RUNS, "--hostname-bin=": RUNS},
        ),
        "sort": Rule(
            options="""
            -b -d -f -g -i -M -h -n -R -r -V -c -C -m -s -u -z -k: -t: -S: --key= --field-separator=
            --buffer-size= --ignore-leading-blanks --dictionary-order --ignore-case
            --general-numeric-sort --ignore-nonprinting --month-sort --human-numeric-sort
            --numeric-sort --random-sort --random-source= --reverse --version-sort --sort= --check=?
            --stable --unique --zero-terminated --merge --parallel= --debug --files0-from= --help
            --version
            """,
            forbidden={
                "-o:": WRITES,
                "--output=": WRITES,
                "-T:": "writes temporary files",
                "--temporary-directory=": "writes temporary files",
                "--compress-program=": RUNS,
            },
        ),
        "uniq": Rule(
            options="""
            -c -d -D -f: -i -s: -u -z -w: --all-repeated=? --skip-fields= --group=? --skip-chars=
            --check-chars= --count --repeated --ignore-case --unique --zero-terminated --help --version
            """,
            max_operands=1,
        ),
        "tree": Rule(
            options="""
            -a -d -l -f -x -L: -P: -I: -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r -i -A -S -n -C
            -X -J --gitignore --ignore-case --matchdirs --metafirst --prune --info --noreport
            --charset= --filelimit= --si --du --timefmt= --inodes --device --dirsfirst --filesfirst
            --sort= --help --version --fromfile --fromtabfile --gitfile= --infofile=
            """,
            forbidden={"-o:": WRITES, "-H:": "writes HTML pages (with -R, into every folder)", "-R": WRITES},
        ),
        "file": Rule(
            options="""
            -b -c -d -E -e: -F: -f: -h -i -k -l -L -m: -N -n -0 -P: -r -s -S -v -z -Z --mime
            --mime-type --mime-encoding --brief --dereference --no-dereference --keep-going --raw
            --special-files --uncompress --uncompress-noreport --exclude= --exclude-quiet=
            --files-from= --separator= --magic-file= --no-buffer --no-pad --print0 --parameter=
            --extension --apple --help --version
            """,
            forbidden={
                "-C": WRITES,
                "--compile": WRITES,
                "-p": "changes access times",
                "--preserve-date": "changes access times",
            },
        ),
        "date": Rule(
            options="""
            -d: -f: -I:: -R -r: -u --date= --file= --iso-8601=? --rfc-email --rfc-3339= --reference=
            --utc --universal --debug --resolution --help --version
            """,
            forbidden={"-s:": "sets the clock", "--set=": "sets the clock"},
            special=Special.DATE,
        ),
        "hostname": Rule(
            options="""
            -a -A -d -f -i -I -s -y --alias --all-fqdns --domain --fqdn --long --ip-address
            --all-ip-addresses --short --yp --nis
            """,
            forbidden={
                "-F:": "sets the host name",
                "--file=": "sets the host name",
                "-b": "sets the host name",
            },
            max_operands=0,
        ),
        "test": Rule(any_args=True, special=Special.TEST),
        "[": Rule(any_args=True, special=Special.TEST),
        "read": Rule(options="-r -s -e -a: -d: -i: -n: -N: -p: -t: -u:", permute=False, special=Special.READ),
        "sed": Rule(
            options="""
            -n -e: -l: -E -r -s -z -u --quiet --silent --debug --expression= --follow-symlinks
            --line-length= --posix --regexp-extended --separate --null-data --unbuffered --sandbox
            --help --version
            """,
            forbidden={
                "-i::": "edits files in place",
                "--in-place=?": "edits files in place",
                "-f:": "runs a script file that cannot be checked",
                "--file=": "runs a script file that cannot be checked",
            },
            special=Special.SED,
        ),
        "awk": (
            _awk := Rule(
                options="""
                -F: -v: -e: -b -c -C -g -h -M -n -N -O -P -r -s -S -t -V --field-separator= --assign=
                --source= --characters-as-bytes --traditional --copyright --gen-pot --help --bignum
                --use-lc-numeric --non-decimal-data --optimize --posix --re-interval --no-optimize
                --sandbox --lint-old --lint=? --version
                """,
                forbidden={
                    "-f:": "loads a program file that cannot be checked",
                    "--file=": "loads a program file that cannot be checked",
                    "-i:": "loads a program file that cannot be checked",
                    "--include=": "loads a program file that cannot be checked",
                    "-l:": "loads an extension",
                    "--load=": "loads an extension",
                    "-E:": "loads a program file that cannot be checked",
                    "--exec=": "loads a program file that cannot be checked",
                    "-d::": WRITES,
                    "--dump-variables=?": WRITES,
                    "-D::": "starts a debugger",
                    "--debug=?": "starts a debugger",
                    "-o::": WRITES,
                    "--pretty-print=?": WRITES,
                    "-p::": WRITES,
                    "--profile=?": WRITES,
                    "-W:": "takes implementation options (mawk -W exec loads a file)",
                    "-L::": WRITES,
                },
                special=Special.AWK,
            )
        ),
        "gawk": _awk,
        "mawk": _awk,
        "nawk": _awk,
        "find": Rule(special=Special.FIND, permute=False),
        "git": Rule(special=Special.GIT, permute=False),
        "curl": Rule(
            options="""
            -s -S -L -I -i -f -v -k -G -N -4 -6 -# -q -H: -A: -e: -m: -u: -x: -r: -b: -X: -E:
            --silent --show-error --location --head --include --fail --fail-with-body --verbose
            --insecure --get --no-buffer --progress-bar --header= --user-agent= --referer=
            --max-time= --connect-timeout= --compressed --user= --proxy= --noproxy= --range=
            --cookie= --request= --retry= --retry-delay= --retry-max-time= --max-redirs= --http1.0
            --http1.1 --http2 --http3 --url= --location-trusted --cacert= --capath= --cert=
            --key= --resolve= --connect-to= --ipv4 --ipv6 --no-progress-meter --path-as-is
            --globoff --proto= --proto-redir= --tlsv1.2 --tlsv1.3 --help --version --disable
            """,
            forbidden={
                "-o:": WRITES,
                "--output=": WRITES,
                "-O": WRITES,
                "--remote-name": WRITES,
                "--remote-name-all": WRITES,
                "-J": WRITES,
                "--remote-header-name": WRITES,
                "-D:": WRITES,
                "--dump-header=": WRITES,
                "-c:": WRITES,
                "--cookie-jar=": WRITES,
                "-K:": "reads options from a file",
                "--config=": "reads options from a file",
                "--trace=": WRITES,
                "--trace-ascii=": WRITES,
                "--trace-config=": WRITES,
                "--stderr=": WRITES,
                "--etag-save=": WRITES,
                "--etag-compare=": "reads options from a file",
                "--hsts=": WRITES,
                "--alt-svc=": WRITES,
                "--libcurl=": WRITES,
                "--create-dirs": WRITES,
                "--output-dir=": WRITES,
                "-w:": "can write files (%output{})",
                "--write-out=": "can write files (%output{})",
                "-T:": "uploads data",
                "--upload-file=": "uploads data",
                "-d:": "sends data",
                "--data=": "sends data",
                "--data-ascii=": "sends data",
                "--data-binary=": "sends data",
                "--data-raw=": "sends data",
                "--data-urlencode=": "sends data",
                "-F:": "sends data",
                "--form=": "sends data",
                "--form-string=": "sends data",
                "--json=": "sends data",
                "--unix-socket=": "talks to a local socket",
                "--abstract-unix-socket=": "talks to a local socket",
                "-Q:": "sends server commands",
                "--quote=": "sends server commands",
                "--mail-rcpt=": "sends mail",
                "--mail-from=": "sends mail",
            },
            special=Special.CURL,
        ),
        # Wrappers: the rest of the line is another command, checked by its own row.
        "env": Rule(
            options="""
            -i -0 -u: -C: -v --ignore-environment --null --unset= --chdir= --debug --default-signal=?
            --ignore-signal=? --block-signal=? --list-signal-handling
            """,
            forbidden={
                "-S:": "splits a string into a command line",
                "--split-string=": "splits a string into a command line",
            },
            **_WRAPPER,  # type: ignore[arg-type]
        ),
        "nice": Rule(options="-n: --adjustment=", **_WRAPPER),  # type: ignore[arg-type]
        "timeout": Rule(
            options="-s: -k: -v --signal= --kill-after= --verbose --preserve-status --foreground",
            skip=1,
            **_WRAPPER,  # type: ignore[arg-type]
        ),
        "stdbuf": Rule(options="-i: -o: -e: --input= --output= --error=", **_WRAPPER),  # type: ignore[arg-type]
        "command": Rule(options="-p -v -V", **_WRAPPER),  # type: ignore[arg-type]
        "builtin": Rule(**_WRAPPER),  # type: ignore[arg-type]
        "exec": Rule(options="-a: -c -l", **_WRAPPER),  # type: ignore[arg-type]
        "time": Rule(
            options="-p -v -q -a -f: --portability --verbose --quiet --append --format=",
            forbidden={"-o:": WRITES, "--output=": WRITES},
            **_WRAPPER,  # type: ignore[arg-type]
        ),
        "ionice": Rule(
            options="-c: -n: -t --class= --classdata= --ignore",
            forbidden={
                "-p:": "changes other processes",
                "-P:": "changes other processes",
                "-u:": "changes other processes",
                "--pid=": "changes other processes",
                "--pgid=": "changes other processes",
                "--uid=": "changes other processes",
            },
            **_WRAPPER,  # type: ignore[arg-type]
        ),
        "xargs": Rule(
            options="""
            -0 -a: -d: -E: -e:: -I: -i:: -L: -l:: -n: -P: -s: -r -t -x --null --arg-file= --delimiter=
            --eof=? --replace=? --max-lines=? --max-args= --max-procs= --max-chars= --no-run-if-empty
            --verbose --exit --show-limits --help --version
            """,
            forbidden={
                "-p": "prompts on the terminal",
                "--interactive": "prompts on the terminal",
                "-o": "opens the terminal for the command",
                "--open-tty": "opens the terminal for the command",
                "--process-slot-var=": "sets a variable in the command's environment",
            },
            **_WRAPPER,  # type: ignore[arg-type]
        ),
        # Shells and eval: their string operand is another command line, parsed and checked.
        **{name: Rule(special=Special.SHELL, permute=False) for name in SHELLS},
        "eval": Rule(special=Special.EVAL, permute=False),
    }
)

#: Readers that may follow ``xargs`` (which appends arguments no check can see).
ARGUMENT_SAFE = frozenset(
    name for name, rule in RULES.items() if rule.any_args and rule.special is Special.NONE
)
