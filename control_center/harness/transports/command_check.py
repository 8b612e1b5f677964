"""Is a Bash command line read-only? Read with bash's grammar (tree-sitter-bash), decided by rows.

The line is parsed into a syntax tree and walked. Every node type the walk does not know is a
refusal, as is any parse error, any place where the tree would read two words where bash reads
one, any command name only known at run time, and any argument computed at run time that could
turn into an option. Commands are decided by their row in ``command_rules.RULES``, options read
the way GNU ``getopt_long`` reads them (clusters, attached values, ``=`` values, unambiguous
prefixes of long options, options after operands). Nested command lines ($(...), <(...),
``bash -c``, ``eval``, ``find -exec``, ``xargs``) are checked like the line itself.

This check fails closed and is still only a reading of a command line; SPEC §9 says where the
operating system holds instead (the bubblewrap layer around ``claude``).
"""

from __future__ import annotations

import itertools
import os
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import tree_sitter

from control_center.harness.transports.command_rules import (
    ARGUMENT_SAFE,
    MUTATING,
    RULES,
    Arity,
    Denied,
    Rule,
    Special,
    dangerous_variable,
    forbidden_reason,
    is_interpreter,
    match_long,
)
from control_center.harness.transports.command_syntax import (
    _IDENTIFIER,
    _MAX_DEPTH,
    _REDIRECTS,
    Word,
    _parser,
    _text,
)
from control_center.harness.transports.command_words import WordReader
from control_center.harness.transports.git_rules import check_git
from control_center.harness.transports.sed_script import sed_script_problem

#: tree-sitter-bash takes time growing with the square of a pipeline's length (400 kB of
#: `a "x" | ` takes minutes); other lines it reads in linear time. No read needs this many.
_MAX_PIPES = 1000
_SYSTEM_BIN_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\+?=")


_GIT_AFTER_CD = (
    "`git` after a change of directory could open a repository committed in the change (its "
    "configuration can run programs); run git from the worktree's top"
)


@dataclass
class _Line:
    """What a whole command line shares, the command lines nested in it included."""

    cwd: Path | None
    #: Some command on the line changes directory, so "the current folder" is unknown.
    moves: bool = False
    #: Why a decision so far holds only in the folder the line starts in (a change of
    #: directory anywhere, even later, in a loop or an ``eval``, undoes it).
    relies_on_folder: str | None = None
    #: Whether an entry of ``cwd`` starts with ``-`` (read once).
    dash_entry: bool | None = None


@dataclass
class _Context:
    line: _Line
    depth: int = 0


# -- entry point ----------------------------------------------------------------------------------


def classify_bash(command: str, cwd: str | Path | None = None) -> tuple[bool, str]:
    """Whether a Bash command line is provably read-only, and why (a reason for the model).
    ``cwd`` is where it will run: a glob that cannot expand to an option there is an operand."""
    try:
        check_line(command, _Context(_Line(Path(cwd) if cwd else None)))
    except Denied as exc:
        return False, str(exc)
    except RecursionError:
        return False, "the command nests too deeply to check"
    return True, "read-only command"


def check_line(command: str, ctx: _Context) -> None:
    if ctx.depth > _MAX_DEPTH:
        raise Denied("the command nests too deeply to check")
    if "\x00" in command:
        raise Denied("the command contains a NUL byte")
    if command.count("|") > _MAX_PIPES:
        raise Denied(f"the command line holds more than {_MAX_PIPES} `|`, too many to check")
    source = command.encode("utf-8", errors="surrogateescape")
    tree = _parser().parse(source)
    root = tree.root_node
    if root.has_error:
        raise Denied("the command line could not be read (bash would read it differently or not at all)")
    _Walker(ctx).statement(root)


# -- the walk ---------------------------------------------------------------------------------------

_STRUCTURE_TOKENS = frozenset(
    [
        "&&",
        "||",
        "|",
        "|&",
        ";",
        "&",
        "(",
        ")",
        "{",
        "}",
        "!",
        "if",
        "then",
        "fi",
        "elif",
        "else",
        "while",
        "until",
        "do",
        "done",
        "for",
        "in",
        "case",
        "esac",
        ";;",
        ";&",
        ";;&",
    ]
) | {"\n"}
_STATEMENT_CONTAINERS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "compound_statement",
        "do_group",
        "negated_command",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
    }
)
_INPUT_OPS = frozenset({"<", "<&", "<&-", ">&-"})
_OUTPUT_OPS = frozenset({">", ">>", "&>", "&>>", ">|", ">&", "<>"})


class _Walker:
    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx

    # statements

    def inner_walker(self) -> _Walker:
        """A walker for a command line nested one level deeper (a substitution)."""
        inner = _Walker(_Context(self.ctx.line, self.ctx.depth + 1))
        if inner.ctx.depth > _MAX_DEPTH:
            raise Denied("the command nests too deeply to check")
        return inner

    def statement(self, node: tree_sitter.Node) -> None:
        kind = node.type
        if kind == "comment":
            return
        if kind in _STATEMENT_CONTAINERS:
            if kind == "compound_statement" and node.child_count and node.children[0].type == "((":
                raise Denied(
                    "`(( ... ))` evaluates arithmetic, which runs substitutions inside variable values"
                )
            for child in node.children:
                self._structure_or_statement(child, node)
            return
        if kind == "redirected_statement":
            for child in node.children:
                if child.type in _REDIRECTS:
                    self.redirect(child)
                else:
                    self._structure_or_statement(child, node)
            return
        if kind == "command":
            self.command(node)
            return
        if kind in ("variable_assignment", "variable_assignments"):
            for child in node.named_children if kind == "variable_assignments" else [node]:
                self.assignment(child)
            return
        if kind == "declaration_command":
            self.declaration(node)
            return
        if kind == "unset_command":
            for child in node.children[1:]:
                if child.type not in ("word", "variable_name"):
                    raise Denied(f"`{_text(node)}` could not be read")
                target = self.word(child).text
                if target in ("-v", "-f", "--"):
                    continue
                if not _IDENTIFIER.fullmatch(target):
                    raise Denied(f"`unset {target}`: only plain names, -v and -f")
                if dangerous_variable(target):
                    raise Denied(f"unsetting {target} changes which programs run or what they read")
            return
        if kind == "for_statement":
            self.for_statement(node)
            return
        if kind == "case_statement":
            self.case_statement(node)
            return
        if kind == "test_command":
            self.test_command(node)
            return
        if kind == "function_definition":
            raise Denied("defining a shell function changes what later command names run")
        if kind == "c_style_for_statement":
            raise Denied(
                "a C-style `for ((...))` evaluates arithmetic, which runs substitutions inside values"
            )
        raise Denied(f"the command line holds a construct this check does not know ({kind})")

    def _structure_or_statement(self, child: tree_sitter.Node, parent: tree_sitter.Node) -> None:
        if child.is_named:
            if child.type in _REDIRECTS:
                self.redirect(child)
            else:
                self.statement(child)
            return
        token = child.type
        if token in (";;", ";&", ";;&") and parent.type != "case_item":
            raise Denied("the command line could not be read (`;;` outside `case`)")
        if token not in _STRUCTURE_TOKENS:
            raise Denied(f"the command line holds a token this check does not know ({token!r})")

    def for_statement(self, node: tree_sitter.Node) -> None:
        for i, child in enumerate(node.children):
            field_name = node.field_name_for_child(i)
            if field_name == "variable":
                name = _text(child)
                if dangerous_variable(name):
                    raise Denied(f"a `for` loop over {name} sets {name}, which changes which programs run")
            elif field_name == "value":
                self.word(child)
            elif field_name == "body":
                self.statement(child)
            elif child.is_named and child.type != "comment":
                raise Denied(f"the `for` loop holds a construct this check does not know ({child.type})")
            elif not child.is_named and child.type not in ("for", "in", ";", "select", "\n"):
                raise Denied(f"the `for` loop holds a token this check does not know ({child.type!r})")
            elif child.type == "select":
                raise Denied("`select` reads the terminal")

    def case_statement(self, node: tree_sitter.Node) -> None:
        for child in node.children:
            if child.type == "case_item":
                for i, part in enumerate(child.children):
                    field_name = child.field_name_for_child(i)
                    if field_name == "value":
                        self.word(part)
                    elif part.is_named:
                        self._structure_or_statement(part, child)
                    elif part.type not in (")", "(", "|", ";;", ";&", ";;&"):
                        raise Denied(f"the `case` holds a token this check does not know ({part.type!r})")
            elif child.is_named and child.type != "comment":
                self.word(child)
            elif not child.is_named and child.type not in ("case", "in", "esac", ";", "\n"):
                raise Denied(f"the `case` holds a token this check does not know ({child.type!r})")

    def assignment(self, node: tree_sitter.Node) -> None:
        if node.type != "variable_assignment":
            raise Denied(f"the assignment `{_text(node)}` could not be read")
        target = node.child_by_field_name("name")
        if target is None:
            raise Denied(f"the assignment `{_text(node)}` could not be read")
        if target.type == "subscript":
            self._subscript(target)
            name_node = target.child_by_field_name("name")
            name = _text(name_node) if name_node is not None else ""
        else:
            name = _text(target)
        if dangerous_variable(name):
            raise Denied(f"setting {name} changes which programs run or what they read")
        value = node.child_by_field_name("value")
        if value is not None:
            if value.type == "array":
                for item in value.named_children:
                    self.word(item)
            else:
                self.word(value)

    def declaration(self, node: tree_sitter.Node) -> None:
        keyword = node.children[0].type if node.children else "?"
        for child in node.children[1:]:
            if child.type == "word":
                flag = _text(child)
                if flag not in ("-p", "-r", "-x", "-g", "--"):
                    raise Denied(f"`{keyword} {flag}` is refused (only plain names, -p, -r, -x and -g are)")
            elif child.type == "variable_name":
                if dangerous_variable(_text(child)):
                    raise Denied(f"`{keyword} {_text(child)}` changes which programs run or what they read")
            elif child.type == "variable_assignment":
                self.assignment(child)
            else:
                raise Denied(f"`{keyword}` with `{_text(child)}` could not be read")

    def test_command(self, node: tree_sitter.Node) -> None:
        for child in node.children:
            if child.is_named:
                self._test_expression(child)
            elif child.type not in ("[[", "]]", "[", "]"):
                raise Denied(f"the test holds a token this check does not know ({child.type!r})")

    def _test_expression(self, node: tree_sitter.Node) -> None:
        kind = node.type
        if kind in (
            "binary_expression",
            "unary_expression",
            "parenthesized_expression",
            "negated_expression",
        ):
            op_node = node.child_by_field_name("operator")
            op = _text(op_node) if op_node is not None else ""
            if op in ("-v", "-R"):
                raise Denied(f"`{op}` in a test evaluates array subscripts, which can run commands")
            if op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
                for side in ("left", "right"):
                    operand = node.child_by_field_name(side)
                    if operand is not None and not re.fullmatch(r"-?\d+", _text(operand)):
                        raise Denied(
                            f"`{op}` in `[[ ]]` evaluates its operands as arithmetic (runs substitutions)"
                        )
            for child in node.children:
                if child.is_named and child.type not in ("test_operator",) and child != op_node:
                    self._test_expression(child)
            return
        if kind in ("test_operator", "regex", "extglob_pattern"):
            return
        self.word(node)

    # redirections

    def redirect(self, node: tree_sitter.Node) -> None:
        kind = node.type
        if kind == "herestring_redirect":
            for child in node.named_children:
                self.word(child)
            return
        if kind == "heredoc_redirect":
            for child in node.children:
                if child.type == "heredoc_body":
                    for part in child.named_children:
                        if part.type != "heredoc_content":
                            self.word(part)
                elif child.type in ("heredoc_start", "heredoc_end", "<<", "<<-"):
                    continue
                elif child.type in _REDIRECTS:
                    self.redirect(child)
                elif child.is_named:
                    self.statement(child)  # `cat <<EOF | sh`: the tree hangs the pipe here
                elif child.type not in _STRUCTURE_TOKENS:
                    raise Denied(f"the here-document holds a token this check does not know ({child.type!r})")
            return
        op = ""
        targets: list[tree_sitter.Node] = []
        for child in node.children:
            if child.type == "file_descriptor":
                continue
            if not child.is_named:
                op = child.type
            else:
                targets.append(child)
        if op in _INPUT_OPS:
            for t in targets:
                self.word(t)
            return
        if op not in _OUTPUT_OPS:
            raise Denied(f"the redirection `{_text(node)}` could not be read")
        if op == "<>":
            raise Denied(f"`{_text(node)}` opens a file for writing")
        words = [self.word(t) for t in targets]
        if len(words) != 1:
            raise Denied(f"the redirection `{_text(node)}` could not be read")
        target = words[0]
        if op == ">&" and target.static and (target.text.isdigit() or target.text == "-"):
            return  # 2>&1: duplicates a descriptor, writes no file
        if not target.static or target.text not in _HARMLESS_TARGETS:
            raise Denied(f"the output redirection `{_text(node)}` writes a file")

    # commands

    def command(self, node: tree_sitter.Node) -> None:
        name_node: tree_sitter.Node | None = None
        args: list[tree_sitter.Node] = []
        for i, child in enumerate(node.children):
            field_name = node.field_name_for_child(i)
            if child.type == "variable_assignment":
                self.assignment(child)
            elif child.type in _REDIRECTS:
                self.redirect(child)
            elif child.type == "command_name":
                name_node = child
            elif field_name == "argument" and child.is_named:
                args.append(child)
            elif child.type == "subshell" or child.type == "comment":
                raise Denied(f"the command `{_text(node)}` could not be read")
            else:
                raise Denied(
                    f"the command `{_text(node)}` could not be read (bash reads `{_text(child)}` differently)"
                )
        if name_node is None:
            return  # only assignments and redirections
        # Where the tree sees two words touching, bash sees one: refuse rather than guess.
        parts = [name_node, *args]
        for left, right in itertools.pairwise(parts):
            if left.end_byte == right.start_byte:
                raise Denied(
                    f"`{_text(node)}` could not be read (bash would join `{_text(left)}{_text(right)}`)"
                )
        head_node = name_node.named_children[0] if name_node.named_children else name_node
        head = self.word(head_node)
        words = [self.word(a) for a in args]
        self.program(head, words)

    def program(self, head: Word, args: list[Word], *, appended: bool = False) -> None:
        """Decide one command by its name's row. ``appended``: more arguments nobody can see
        will follow (``xargs``)."""
        if not head.static or head.pattern:
            raise Denied(f"the command name `{head.text}` is only known at run time")
        name = head.text
        if "/" in name:
            if posixpath.dirname(name) not in _SYSTEM_BIN_DIRS:
                raise Denied(f"`{name}` runs a program by path")
            name = posixpath.basename(name)
        if name in MUTATING:
            raise Denied(f"`{name}` {MUTATING[name]}")
        if is_interpreter(name):
            raise Denied(f"`{name}` runs code that a command-line check cannot read")
        rule = RULES.get(name)
        if rule is None:
            raise Denied(f"`{name}` is not a known read-only command")
        if appended and (not rule.any_args or rule.special is not Special.NONE):
            raise Denied(
                f"`xargs {name}`: xargs appends arguments no check can see; only plain readers may follow "
                f"({', '.join(sorted(ARGUMENT_SAFE)[:8])}, ...)"
            )
        if rule.any_args and rule.special is Special.NONE:
            return
        special = rule.special
        if special is Special.GIT:
            self.git(args)
            return
        if special is Special.FIND:
            self.find(args)
            return
        if special is Special.SHELL:
            self.shell(name, args)
            return
        if special is Special.EVAL:
            if any(not a.static for a in args):
                raise Denied("`eval` of a computed string")
            self.nested(" ".join(a.text for a in args))
            return
        if special is Special.TEST:
            for a in args:
                if a.text in ("-v", "-R") or a.may_be_option:
                    raise Denied(f"`{name} {a.text}` evaluates array subscripts, which can run commands")
            if name == "[" and (not args or args[-1].text != "]"):
                raise Denied("`[` without its closing `]`")
            return
        if special is Special.CD:
            self._moved()
            return
        options, operands = self.options(name, rule, args)
        if rule.max_operands is not None:
            if len(operands) > rule.max_operands:
                raise Denied(f"`{name}` with {len(operands)} operands writes the last one")
            for o in operands:
                if o.several:
                    raise Denied(
                        f"`{name} {o.text}` may become several operands (another one is a file it writes)"
                    )
        if rule.runs_command:
            self.wrapper(name, options, operands)
        elif special is Special.SED:
            self.sed(options, operands)
        elif special is Special.AWK:
            self.awk(name, options, operands)
        elif special is Special.READ:
            for opt, value in options:
                if opt == "-a" and value is not None and dangerous_variable(value.text):
                    raise Denied(f"`read -a {value.text}` sets {value.text}")
            for o in operands:
                if not o.static or not _IDENTIFIER.fullmatch(o.text):
                    raise Denied(f"`read {o.text}`: only plain variable names")
                if dangerous_variable(o.text):
                    raise Denied(f"`read {o.text}` sets {o.text}, which changes which programs run")
        elif special is Special.DATE:
            if len(operands) > 1 or any(not o.static or not o.text.startswith("+") for o in operands):
                raise Denied("`date` with an operand other than +FORMAT would set the clock")
        elif special is Special.PAGER:
            for o in operands:
                if o.text.startswith("+") or o.may_be_option:  # a glob may name a file `+!cmd`
                    raise Denied(
                        f"`{name} {o.text}`: a `+` operand is a command for the pager (`+!cmd` runs one)"
                    )
        elif special is Special.CURL:
            for opt, value in options:
                if opt in ("-X", "--request") and (
                    value is None or value.text.upper() not in ("GET", "HEAD")
                ):
                    raise Denied(
                        f"`curl {opt} {value.text if value else ''}` sends a request that can change a server"
                    )

    def options(
        self, name: str, rule: Rule, args: Sequence[Word]
    ) -> tuple[list[tuple[str, Word | None]], list[Word]]:
        """Read ``args`` as getopt_long would: (options with their values, operands). Refuses
        forbidden and unknown options, and computed words that could be options."""
        spec = rule.spec
        options: list[tuple[str, Word | None]] = []
        operands: list[Word] = []
        i, ended = 0, False
        while i < len(args):
            a = args[i]
            i += 1
            if ended or not a.option_like:
                operands.append(a)
                if rule.runs_command or not rule.permute:
                    ended = True
                    operands.extend(args[i:])
                    break
                continue
            if a.may_be_option and not self._glob_is_operand(a):
                raise Denied(
                    f"`{name}` with an argument only known at run time (`{a.text}`) that could be an option"
                )
            if a.may_be_option:
                operands.append(a)
                continue
            text = a.text
            if text == "--":
                ended = True
                if rule.runs_command or not rule.permute:
                    operands.extend(args[i:])
                    break
                continue
            if text.startswith("--"):
                given, has_value, value = text.partition("=")
                matches, exact = match_long(spec, given)
                for m in matches:
                    reason = forbidden_reason(rule, m)
                    if reason:
                        shown = f"`{name} {text}`" if exact else f"`{name} {text}` (read as `{m}`)"
                        raise Denied(f"{shown} {reason}")
                if not matches:
                    raise Denied(f"`{name} {given}` is not an option this check knows for `{name}`")
                if len(matches) > 1:
                    raise Denied(f"`{name} {given}` is ambiguous ({', '.join(sorted(matches))})")
                arity = spec.long[matches[0]]
                if arity is Arity.REQUIRED and not has_value:
                    if i >= len(args):
                        raise Denied(f"`{name} {given}` without its value")
                    options.append((matches[0], self._value(name, rule, given, args[i])))
                    i += 1
                else:
                    options.append((matches[0], Word(value) if has_value else None))
                continue
            # A short cluster: -abc, -ovalue, -o value.
            if name == "nice" and re.fullmatch(r"-\d+", text):
                continue
            letters = text[1:]
            k = 0
            while k < len(letters):
                letter = letters[k]
                k += 1
                reason = forbidden_reason(rule, "-" + letter)
                if reason:
                    raise Denied(f"`{name} -{letter}` {reason}")
                short = spec.short.get(letter)
                if short is None:
                    raise Denied(f"`{name} -{letter}` is not an option this check knows for `{name}`")
                if short is Arity.FLAG:
                    options.append(("-" + letter, None))
                    continue
                rest = letters[k:]
                if rest:
                    options.append(("-" + letter, Word(rest)))
                elif short is Arity.REQUIRED:
                    if i >= len(args):
                        raise Denied(f"`{name} -{letter}` without its value")
                    options.append(("-" + letter, self._value(name, rule, "-" + letter, args[i])))
                    i += 1
                else:
                    options.append(("-" + letter, None))
                break
        return options, operands

    def _value(self, name: str, rule: Rule, option: str, value: Word) -> Word:
        """An option's value in the next word. One that may become several words moves the
        words after it: into option places, past the operand count, or into the command name."""
        if value.several and (
            rule.runs_command
            or rule.max_operands is not None
            or (value.may_be_option and not self._glob_is_operand(value))
        ):
            raise Denied(
                f"`{name} {option} {value.text}`: the value may become several words, "
                "which moves the words after it"
            )
        return value

    def _glob_is_operand(self, word: Word) -> bool:
        """A glob whose first character is a pattern can expand to a file named like an
        option (``-o``): only when nothing in the folder it runs in starts with ``-``."""
        line = self.ctx.line
        if not word.pattern or not word.static or line.cwd is None or line.moves:
            return False
        if line.dash_entry is None:
            try:
                line.dash_entry = any(entry.startswith("-") for entry in os.listdir(line.cwd))
            except OSError:
                line.dash_entry = True
        if line.dash_entry:
            return False
        line.relies_on_folder = line.relies_on_folder or (
            f"`{word.text}` was read as file names in the folder the line starts in, and the line "
            "changes directory (there it could expand to an option)"
        )
        return True

    def _rely_on_folder(self, reason: str) -> None:
        if self.ctx.line.moves:
            raise Denied(reason)
        self.ctx.line.relies_on_folder = self.ctx.line.relies_on_folder or reason

    def _moved(self) -> None:
        self.ctx.line.moves = True
        if self.ctx.line.relies_on_folder:
            raise Denied(self.ctx.line.relies_on_folder)

    def nested(self, command: str) -> None:
        check_line(command, _Context(self.ctx.line, self.ctx.depth + 1))

    def wrapper(self, name: str, options: list[tuple[str, Word | None]], rest: list[Word]) -> None:
        if name == "command" and any(opt in ("-v", "-V") for opt, _ in options):
            return  # like `which`
        if name == "env":
            if any(opt in ("-C", "--chdir") for opt, _ in options):
                self._moved()
            for opt, value in options:
                if opt in ("-u", "--unset") and (value is None or dangerous_variable(value.text)):
                    shown = value.text if value is not None else ""
                    raise Denied(f"unsetting {shown} changes which programs run or what they read")
            while rest and rest[0].static and (m := _ASSIGNMENT.match(rest[0].text)):
                if dangerous_variable(m.group(1)):
                    raise Denied(f"setting {m.group(1)} changes which programs run or what they read")
                rest = rest[1:]
            if rest and rest[0].may_be_option:
                raise Denied(f"`env` with an argument only known at run time (`{rest[0].text}`)")
        if name == "timeout":
            if not rest:
                raise Denied("`timeout` without a command")
            if rest[0].several:
                raise Denied(f"`timeout {rest[0].text}`: the duration may become several words")
            rest = rest[1:]
        if not rest:
            if name in ("env", "nice", "time", "xargs", "exec", "command", "builtin"):
                return  # prints the environment or priority, or echoes its input
            raise Denied(f"`{name}` without a command")
        self.program(rest[0], rest[1:], appended=name == "xargs")

    def shell(self, name: str, args: list[Word]) -> None:
        for i, a in enumerate(args):
            if not a.static:
                raise Denied(f"`{name}` with an argument only known at run time")
            if a.text.startswith("--") or (
                a.text.startswith(("-", "+")) and set(a.text[1:]) - set("euxvfnc")
            ):
                raise Denied(f"`{name} {a.text}` is refused (start-up files, input or unknown options)")
            if a.text.startswith("-") and "c" in a.text[1:]:
                rest = [w for w in args[i + 1 :] if not w.text.startswith("-")]
                if not rest:
                    raise Denied(f"`{name} -c` without a command")
                self.nested(rest[0].text)
                return
            if not a.text.startswith(("-", "+")):
                break
        raise Denied(f"`{name}` runs a script or commands from its input")

    # words

    def word(self, node: tree_sitter.Node) -> Word:
        """The word bash will see, checking every substitution inside it."""
        return WordReader(self).read(node, quoted=False)

    def _subscript(self, node: tree_sitter.Node) -> None:
        index = node.child_by_field_name("index")
        if index is None:
            raise Denied(f"`{_text(node)}` could not be read")
        if not re.fullmatch(r"\d+|@|\*", _text(index)):
            raise Denied(
                f"the subscript in `{_text(node)}` is arithmetic, which runs substitutions inside values"
            )

    # programs with code in their operands

    def git(self, args: list[Word]) -> None:
        self._rely_on_folder(_GIT_AFTER_CD)
        for a in args:
            if not a.static and not (a.text and not a.may_be_option):
                raise Denied(f"`git` with an argument only known at run time (`{a.text}`)")
        check_git([a.text for a in args])

    def find(self, args: list[Word]) -> None:
        i = 0
        while (i < len(args) and args[i].text in ("-H", "-L", "-P", "-D")) or (
            i < len(args) and re.fullmatch(r"-O\d", args[i].text)
        ):
            i += 2 if args[i].text == "-D" else 1
        # Starting points, up to the first expression word.
        while i < len(args) and not args[i].text.startswith(("-", "(", "!", ")", ",")):
            if args[i].may_be_option and not self._glob_is_operand(args[i]):
                raise Denied(f"`find` with a starting point only known at run time (`{args[i].text}`)")
            i += 1
        while i < len(args):
            a = args[i]
            i += 1
            t = a.text
            if a.may_be_option or not a.static:
                raise Denied(f"`find` with an expression word only known at run time (`{t}`)")
            if t in _FIND_FORBIDDEN:
                raise Denied(f"`find {t}` deletes or writes files")
            if t in _FIND_EXEC:
                j = i
                while j < len(args) and args[j].text not in (";", "+"):
                    j += 1
                inner = args[i:j]
                if not inner or j >= len(args):
                    raise Denied(f"`find {t}` without a command ending in `;` or `+`")
                try:
                    self.program(inner[0], list(inner[1:]))
                except Denied as exc:
                    raise Denied(f"`find {t}`: {exc}") from None
                i = j + 1
                continue
            if t in _FIND_FLAGS:
                continue
            if t in _FIND_VALUED or _FIND_NEWER.fullmatch(t):
                if i >= len(args):
                    raise Denied(f"`find {t}` without its value")
                value = args[i]
                if value.may_be_option and not self._glob_is_operand(value):
                    raise Denied(f"`find {t}` with a value only known at run time (`{value.text}`)")
                i += 1
                continue
            raise Denied(f"`find {t}` is not a find expression this check knows")

    def sed(self, options: list[tuple[str, Word | None]], operands: list[Word]) -> None:
        scripts = [v for opt, v in options if opt in ("-e", "--expression") and v is not None]
        if not scripts:
            if not operands:
                raise Denied("`sed` without a script")
            scripts = [operands[0]]
        for s in scripts:
            if not s.static:
                raise Denied("`sed` with a computed script")
            problem = sed_script_problem(s.text)
            if problem:
                raise Denied(f"`sed` script {problem}")

    def awk(self, name: str, options: list[tuple[str, Word | None]], operands: list[Word]) -> None:
        programs = [v for opt, v in options if opt in ("-e", "--source") and v is not None]
        if not programs:
            if not operands:
                raise Denied(f"`{name}` without a program")
            programs = [operands[0]]
        for p in programs:
            if not p.static:
                raise Denied(f"`{name}` with a computed program")
            if re.search(r"system|getline|[>|]|@", p.text):
                raise Denied(
                    f"`{name}` program may write files or run commands (system, getline, >, |, @load)"
                )


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FIND_FORBIDDEN = frozenset({"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_FLAGS = _words(
    """
    -print -print0 -ls -prune -quit -true -false -empty -executable -readable -writable -nouser
    -nogroup -depth -d -follow -mount -xdev -noleaf -ignore_readdir_race -noignore_readdir_race
    -daystart -not -a -and -o -or -nowarn -warn ( ) ! ,
    """
)
_FIND_VALUED = _words(
    """
    -name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size -perm -user
    -group -uid -gid -newer -anewer -cnewer -mtime -atime -ctime -mmin -amin -cmin -used -links
    -inum -samefile -lname -ilname -maxdepth -mindepth -fstype -context -regextype -printf
    -files0-from
    """
)
_FIND_NEWER = re.compile(r"-newer[aBcmt][aBcmt]")


__all__ = ["Denied", "Word", "classify_bash"]
