"""The hook's command-line check on bash's grammar: a corpus of attempts per family (the red
team's findings and more), the plain reads it must let through, and property-based tests that
random compositions of denied pieces stay denied."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from control_center.harness.transports.command_check import (
    Word,
    _Context,
    _Line,
    _parser,
    _Walker,
    classify_bash,
)
from control_center.harness.transports.command_rules import RULES, Denied, Rule, dangerous_variable
from control_center.harness.transports.sed_script import sed_script_problem

# family -> command lines that must be refused
DENIED_FAMILIES: dict[str, list[str]] = {
    "sed writes, executes, or takes its script from -l's neighbour": [
        "sed 'w out' f",
        "sed -n '1w out' f",
        "sed '1e id' f",
        "sed '1!e id' f",
        "sed 's/a/b/e' f",
        "sed 's/a/b/w out' f",
        "sed 's|a|b|gw out' f",
        "sed -l 5 'w x' f",
        "sed -nl5 'e id' f",
        "sed --line-length=5 'w x' f",
        "sed --expression='w x' f",
        "sed --expr='w x' f",
        "sed -e p -e 'W x' f",
        "sed '/x/,$w out' f",
        "sed '$!N; w x' f",
        "sed 'y/a/b/;w x' f",
        "sed -n '{\nw x\n}' f",
        "sed -n '1{p;e id\n}' f",
        "sed -i s/a/b/ f",
        "sed -ibak s/a/b/ f",
        "sed -Ei s/a/b/ f",
        "sed s/a/b/ -i f",
        "sed --in=.bak s/a/b/ f",
        "sed --in-pl s/a/b/ f",
        "sed -f script f",
        "sed --fi=script f",
        "sed 'v;w x' f",
        "sed -z 'e' f",
        'sed "$(echo w) x" f',
    ],
    "env -S and --split-string, alone and under other wrappers": [
        "env -S 'rm x'",
        "env -S'rm x'",
        "env --split-string='rm x'",
        "env --sp='rm x'",
        "env --split 'touch x'",
        "env -iS 'rm x'",
        "env -u HOME -S 'rm x'",
        "find . -exec env -S 'rm x' \\;",
        "find . -execdir env --split-string='touch y' {} +",
        "nice env -S 'rm x'",
        "nice -n 5 env --split-string='rm x'",
        "timeout 5 env -S 'rm x'",
        "timeout -s KILL 5 env --split-string=touch\\ x",
        "stdbuf -o0 env -S 'rm x'",
        "time env -S 'rm x'",
        "command env -S 'rm x'",
    ],
    "abbreviated and = long options": [
        "sort --out=x f",
        "sort --outp x f",
        "sort --output x f",
        "sort -ox f",
        "sort -rno x f",
        "sort f -o x",
        "sort -k 2 f --output=x",
        "sort --compress-prog=sh f",
        "sort -T /tmp f",
        "sort --temp=/tmp f",
        "git grep --open-files-in-pager=vi x",
        "git grep --open=vi x",
        "git grep --open-files=vi x",
        "git grep -Ovi x",
        "git grep -nO x",
        "git diff --out=x",
        "git log --outp=x -p",
        "git show --output=x HEAD",
        "git diff --ext-diff",
        "git diff --ext",
        "uniq --all-rep in out",
        "rg --pre=sh x",
        "rg --pr sh x",
        "rg --hostname-bin=sh x",
        "file --comp x",
        "date --se=now",
        "tree --fromfile -o x",
    ],
    "awk program files, gawk extensions and includes": [
        "awk -f /dev/stdin",
        "awk -f prog.awk f",
        "awk --file=/dev/stdin",
        "awk --fi=x f",
        "gawk -i inplace '{}' f",
        "gawk --include=inplace '{}' f",
        "gawk -l filefuncs '{}'",
        "gawk --load=x '{}'",
        "gawk '@load \"filefuncs\"'",
        "gawk '@include \"x.awk\"'",
        "awk 'BEGIN{system(\"id\")}'",
        "awk '{print > \"x\"}' f",
        "awk '{print >> \"x\"}' f",
        "awk '{print | \"sh\"}' f",
        "awk 'BEGIN{\"id\" | getline x}'",
        "awk 'BEGIN{getline < \"/etc/passwd\"}'",
        "gawk -o out '{}'",
        "gawk -oout '{}'",
        "gawk --pretty-print=x '{}'",
        "gawk --pretty '{}'",
        "gawk -p '{}'",
        "gawk --profile '{}'",
        "gawk -d '{}'",
        "gawk --dump '{}'",
        "mawk -W exec x",
        "gawk -E x",
        'awk -v x=1 -F: "$prog" f',
        "awk",
    ],
    "xargs -i and friends": [
        "xargs -i rm {}",
        "xargs -i{} rm {}",
        "xargs -I{} sh -c 'rm {}'",
        "xargs -I {} touch {}",
        "xargs sort",
        "xargs sed -n p",
        "xargs -0 sed -i s/a/b/",
        "xargs --process-slot-var=PATH ls",
        "xargs --process=LD_PRELOAD ls",
        "xargs -a f rm",
        "xargs -p ls",
        "xargs -o ls",
        "ls | xargs -n1 git config a.b",
        "find . | xargs env -S 'rm x'",
        "xargs -- rm",
        "xargs -ri rm {}",
    ],
    "GNU time --output": [
        "time -o x ls",
        "time --output=x ls",
        "time --out=x ls",
        "time -ao x ls",
        "command time -o x ls",
        "\\time -o x ls",
        "/usr/bin/time -o x ls",
        "nice time -o x ls",
    ],
    "curl writing files": [
        "curl --trace x http://a",
        "curl --trace-ascii x http://a",
        "curl --stderr x http://a",
        "curl --etag-save x http://a",
        "curl --hsts x http://a",
        "curl --alt-svc x http://a",
        "curl --libcurl x http://a",
        "curl -o x http://a",
        "curl -sSLo x http://a",
        "curl -O http://a/f",
        "curl --remote-name http://a/f",
        "curl -D x http://a",
        "curl -c x http://a",
        "curl --cookie-jar=x http://a",
        "curl --output-dir d -O http://a/f",
        "curl --create-dirs http://a",
        "curl -K cfg",
        "curl --config=cfg",
        "curl --tr x http://a",
        "curl --li x http://a",
        "curl -w '%output{x}' http://a",
        "curl --write-out=x http://a",
        "curl -J -O http://a",
    ],
    "curl writing to the network or local sockets": [
        "curl -T f http://a",
        "curl --upload-file f http://a",
        "curl -X POST http://a",
        "curl -XPOST http://a",
        "curl --request=DELETE http://a",
        "curl --req PUT http://a",
        "curl -F a=b http://a",
        "curl --form a=@f http://a",
        "curl -d x http://a",
        "curl --data-binary @f http://a",
        "curl --data-urlencode a=b http://a",
        "curl --json '{}' http://a",
        "curl --unix-socket /var/run/docker.sock http://x/containers/json",
        "curl --abstract-unix-socket x http://a",
        "curl -Q 'DELE f' ftp://a/",
        "curl --mail-rcpt a@b smtp://a",
        "curl $opts http://a",
    ],
    "arithmetic and test -v subscripts that evaluate $(...)": [
        "echo $((a[$(id)]))",
        "echo $((x))",
        "echo $((x + 1))",
        "echo $(( $(id -u) + 1 ))",
        "echo $((i++))",
        "(( x ))",
        "(( 1 + 2 ))",
        "[[ $x -eq 1 ]]",
        "[[ x -lt 3 ]]",
        "[[ -v 'a[$(id)]' ]]",
        "[[ -v a ]]",
        "test -v x",
        "test -v 'a[$(touch p)]'",
        "[ -v x ]",
        "test $opt",
        "echo ${x:y}",
        "echo ${x:1:$n}",
        "echo ${a[$i]}",
        "echo ${a[i]}",
        "a[$i]=1",
        "a[i+1]=1",
        "let x=1",
        "declare -i x=y",
        "declare -a 'x=([$(id)]=1)'",
        "for ((i=0; i<3; i++)); do ls; done",
        "echo ${x@P}",
        "echo ${x@E}",
    ],
    "quoting bash reads differently from a naive lexer": [
        "r''m x",
        '"rm" x',
        "\\rm x",
        "$'rm' x",
        "$'\\x72m' x",
        "$'\\162m' x",
        "r\\m x",
        "r\\\nm x",
        "'r'\"m\" x",
        "{rm,x}",
        'echo $"x"y',
        "$CMD x",
        "${CMD} x",
        "$(echo rm) x",
        "`echo rm` x",
        "*m x",
        "r? x",
        "echo 'unterminated",
        'echo "unterminated',
        "ls\x00",
        "echo a;;b",
    ],
    "dangerous variables, however they are set": [
        "PATH=/tmp ls",
        "LD_PRELOAD=x ls",
        "GIT_CONFIG_PARAMETERS=\"'core.pager=id'\" git log",
        "HOME=. git log",
        "XDG_CONFIG_HOME=. git log",
        "CURL_HOME=. curl http://a",
        "for PATH in /tmp; do ls; done",
        "for LD_PRELOAD in x; do ls; done",
        "for HOME in .; do git log; done",
        "printf -v PATH /tmp",
        "printf -v LD_PRELOAD x",
        "printf -vHOME .",
        ": ${PATH:=/tmp}",
        "echo ${GIT_CONFIG_PARAMETERS:='x'}",
        "x=${HOME=.}; export HOME",
        "export PATH=/tmp",
        "export XDG_CONFIG_HOME=.",
        "export GIT_DIR",
        "export -n PATH",
        "export -f ls",
        "declare PATH=/x",
        "local HOME=x",
        "readonly CURL_HOME=.",
        "typeset -x LD_PRELOAD=x",
        "read PATH <<< /tmp",
        "read -r HOME < f",
        "read -a LD_PRELOAD <<< x",
        "read -ra GIT_DIR < f",
        "env HOME=. git log",
        "env PATH=/tmp ls",
        "env -i LD_PRELOAD=x ls",
        "PS4='$(id)' bash -xc ls",
        "BASH_ENV=x bash -c ls",
        "PAGER=id git log",
        "GIT_PAGER=x git log",
        "LESSOPEN='|id %s' cat f",
    ],
    "git config written through -- and -f": [
        "git config -- a.b c",
        "git config --get -- a.b",
        "git config -f x a.b c",
        "git config -f x --get a.b",
        "git config --file=x --get a.b",
        "git config --fi=x a.b c",
        "git config a.b c",
        "git config --add a.b c",
        "git config --unset a.b",
        "git config --un a.b",
        "git config --replace-all a.b c",
        "git config --edit",
        "git config --get a.b c d",
        "git config set a.b c",
        "git config --global a.b c",
    ],
    "a bare repository in the change, opened with -C, --git-dir or a change of directory": [
        "git -C evil.git log",
        "git -Cevil.git log",
        "git --git-dir=evil.git log",
        "git --git-dir evil.git log",
        "git --git-d=evil.git log",
        "git --work-tree=. status",
        "git --bare log",
        "cd evil.git && git log",
        "cd evil.git; git status",
        "pushd evil.git; git log",
        "env -C evil.git git log",
        "c''d evil.git && git log",
        "builtin cd evil.git; git log",
        "command cd evil.git; git log",
        "eval 'cd evil.git'; git log",
        "for i in 1 2; do git log; cd evil.git; done",
        "while true; do git status; pushd evil.git; done",
        "git log; cd evil.git; git log",
        "echo $(cd evil.git; git log)",
        "env --ch=evil.git git log",
        "env -Cevil.git git log",
        "GIT_DIR=evil.git git log",
        "env GIT_DIR=evil.git git log",
        "git -c core.pager=id log",
        "git -ccore.fsmonitor=id status",
        "git --config-env=core.pager=X log",
        "git --exec-path=. log",
        "git -p log",
        "git --paginate log",
        "git help log",
    ],
    "tree -H, -R and -o": [
        "tree -H .",
        "tree -H . -o x",
        "tree -R -H .",
        "tree -o x",
        "tree -ox",
        "tree -aH .",
    ],
    "pagers and their escapes, log files and key bindings": [
        "less +!id f",
        "man ls",
        "less ++!id f",
        "less -- +!id f",
        "less f +!id",
        'less ""{+!id,f}',
        "less $x",
        "less *",
        "less ?x",
        "less -o log f",
        "less -olog f",
        "less --log-file=x f",
        "less --log=x f",
        "less -O log f",
        "less --LOG-FILE=x f",
        "less -k keys f",
        "less --lesskey-file=keys f",
        "less --lesskey-src=keys f",
        "less --lesskey-c='#env\nLESSOPEN=|id' f",
        "less -t tag",
        "less -T tags -t x",
        "less f -o log",
        "less -+o f",
        "cat f | less -o log",
        "git log | less --log-file=x",
        "more +!id f",
        "more +/x f",
        "LESSOPEN='|id %s' less f",
        "LESSKEYIN=x less f",
        "xxd f out",
        "xxd -r dump out",
        "xxd f -c 4",
        "xxd -i f x.h",
        "xxd f ''{-o,x}",
        "xxd -c $x f",
    ],
    "redirections that write": [
        "cat a > b",
        "echo hi >> notes.txt",
        "ls 2>err.txt",
        "ls &> out",
        "ls &>> out",
        "ls >& out",
        "ls >| out",
        "ls <> f",
        "ls > $f",
        "ls > /dev/null$x",
        "exec > out",
        "exec 3> out",
        "{ ls; } > out",
        "(ls) > out",
        "for f in a; do ls; done > out",
        "if true; then ls; fi > out",
        "cat <<EOF > out\nx\nEOF",
        "echo x | cat > out",
    ],
    "substitutions and nested command lines": [
        "$(rm x)",
        "echo $(rm x)",
        'echo "$(rm x)"',
        "echo `rm x`",
        "echo ${x:-$(rm y)}",
        "cat <(touch y)",
        "echo >(tee x)",
        "cat <<EOF\nhello $(touch z)\nEOF",
        "cat <<EOF | sh\nx\nEOF",
        "bash -c 'rm x'",
        'sh -c "touch y"',
        "bash -lc ls",
        "bash --rcfile x -c ls",
        'bash -c "$x"',
        "bash script.sh",
        "bash",
        "eval 'rm x'",
        'eval "$x"',
        "eval ls\\;rm x",
        "source x",
        ". x",
        "ls() { rm -rf .; }; ls",
        "function f { ls; }",
        "coproc ls",
        "select x in a; do ls; done",
    ],
    "wrappers and builtins that run what follows": [
        "exec rm x",
        "exec -a x rm y",
        "builtin source x",
        "command rm x",
        "command -p rm x",
        "nice -5 rm x",
        "nice --adjustment=5 touch x",
        "timeout 5",
        "timeout --signal=KILL 5 rm x",
        "stdbuf -i0 -o0 tee x",
        "env -- rm x",
        "env -u X touch y",
        "env -0 rm x",
        "env $x",
        "time rm x",
        "time -p touch x",
        "ionice -c3 rm x",
        "xargs -n1 -P4 rm",
        "xargs -r touch",
        "xargs --max-args=1 rm",
        "find . -exec nice rm {} \\;",
        "find . -exec timeout 5 rm {} \\;",
        "find . -exec env -S 'rm x' {} +",
        "find . -execdir xargs rm \\;",
        "nice nice nice rm x",
        "env env env touch x",
        "timeout 1 timeout 2 rm x",
    ],
    "programs that write, install or run code": [
        "rm -rf x",
        "touch f",
        "mv a b",
        "cp a b",
        "dd if=a of=b",
        "tee out",
        "install a b",
        "make",
        "pip install x",
        "npm install",
        "python -c 'print(1)'",
        "python3.11 x.py",
        "pypy3 x.py",
        "node -e 'x'",
        "perl -e 1",
        "nohup ls",
        "setsid ls",
        "sudo ls",
        "./ls",
        "/tmp/ls",
        "~/bin/ls",
        "frobnicate --now",
        "file -C -m x",
        "date -s now",
        "date 0101",
        "hostname evil",
        "uniq a b",
        "find . -delete",
        "find . -fprint out",
        "find . -fprintf out %p",
        "find . -fls out",
        "find . -exec rm {} \\;",
        "find . -execdir sh -c 'rm x' \\;",
        "find . -ok rm {} \\;",
        "find . -exec ls",
        "find . -newer x -delete",
        "find . -name $x",
        "find $x -name y",
        "find . -frobnicate",
        "ionice -p 1 ls",
        "trap 'rm x' EXIT",
        "alias ls='rm -rf'",
        "shopt -s expand_aliases",
        "enable -f x y",
        "hash -p /tmp/x ls",
    ],
    "brace and glob patterns after an empty quote, whose words start with an alternative": [
        'sort ""{-o,/tmp/x} f',
        'sort ""{-o,x}"" f',
        "sort ''\"\"{-o,x} f",
        'sort """"{-o,x} f',
        'sort f ""{-o,x}',
        'git log ""{--output=x,-1}',
        'git log ""{-1,--output=x}',
        'uniq ""{-c,a} b',
        'sed ""{-i,s/a/b/} f',
        'sed -n p ""{-i,f}',
        'rg ""{--pre=sh,x} f',
        'rg x ""{--pre=sh,f}',
        'find . ""{-delete,-print}',
        'find ""{-delete,.}',
        'find . -name ""{a,-delete}',
        'printf ""{-vPATH,x} y',
        'timeout ""{5,rm} ls',
        'nice ""{-n5,rm} ls',
        'env ""{-S,x} "rm y"',
        'xargs ""{-i,x} rm {}',
        'curl ""{-o,x} http://a',
        'tree ""{-o,x}',
        'sort ""{{-o,x},y} f',
        'sort ""{1..2}{-o,x} f',
        "sort $''{-o,x} f",
    ],
    "indirect expansion, whose target may name an array subscript that bash evaluates": [
        "echo ${!x}",
        'echo "${!x}"',
        'x="a[\\$(id)]"; echo ${!x}',
        "echo ${!x[0]}",
        "echo ${!1}",
        "echo ${!#}",
        "echo ${!x:-a}",
        "echo ${!x#a}",
        "echo ${!x/a/b}",
        "echo ${#!x}",
        'echo "a${!x}b"',
        ': "${!x}"',
        "cat <<< ${!x}",
        "cat <<EOF\n${!x}\nEOF",
        "[[ -n ${!x} ]]",
        "test -n ${!x}",
        "case ${!x} in a) ;; esac",
        "for i in ${!x}; do :; done",
        "y=${!x}",
        "echo ${y:-${!x}}",
        "echo $(echo ${!x})",
        "ls > /dev/null${!x}",
    ],
    "environment variables that make a program write a file or load code": [
        "SSLKEYLOGFILE=/tmp/k curl https://a",
        "env SSLKEYLOGFILE=k curl https://a",
        "export SSLKEYLOGFILE=k; curl https://a",
        "SSLKEYLOGFILE=k; curl https://a",
        "declare -x SSLKEYLOGFILE=k",
        "export SSLKEYLOGFILE",
        "for SSLKEYLOGFILE in k; do curl https://a; done",
        "read SSLKEYLOGFILE <<< k",
        "read -a SSLKEYLOGFILE <<< k",
        ": ${SSLKEYLOGFILE:=k}",
        "find . -exec env SSLKEYLOGFILE=k curl https://a \\;",
        "MALLOC_TRACE=/tmp/t ls",
        "MALLOC_CHECK_=3 ls",
        "GLIBC_TUNABLES=x ls",
        "LD_DEBUG=all LD_DEBUG_OUTPUT=/tmp/x ls",
        "LD_AUDIT=x ls",
        "GCONV_PATH=. iconv",
        "LOCPATH=. ls",
        "NLSPATH=x ls",
        "HOSTALIASES=x curl http://a",
        "RES_OPTIONS=x curl http://a",
        "OPENSSL_CONF=x curl https://a",
        "OPENSSL_ENGINES=. curl https://a",
        "SSL_CERT_FILE=x curl https://a",
        "NSS_DEFAULT_DB_TYPE=x curl https://a",
        "GNUTLS_SYSTEM_PRIORITY_FILE=x curl https://a",
        "GIT_TRACE2_EVENT=/tmp/t git status",
        "GIT_TRACE_PACKET=/tmp/t git status",
        "GIT_EXTERNAL_DIFF=x git diff",
        "BASH_XTRACEFD=1 bash -xc ls",
        "HISTFILE=x bash -c ls",
        "LESSKEYIN=x ls",
        "JQ_COLORS=x jq . f",
        "TIMEFORMAT=x ls",
        "FOO=1 ls",
        "env FOO=1 ls",
        "export FOO=bar",
        "_X=1 ls",
        'env -u "$x" ls',
        'read -a "$x" <<< k',
        "path=(.); zsh -c ls",
        "for path in .; do ls; done",
        "myPATH=. ls",
    ],
    "unsetting a variable that chooses what runs (no PATH: bash runs ./ls)": [
        "unset PATH; ls",
        "unset -v PATH; ls",
        "unset x PATH",
        "unset LD_LIBRARY_PATH",
        "unset P\\ATH",
        "unset -v P\\ATH",
        "unset -- PATH",
        "unset -vPATH",
        "env -u PATH ls",
        "env --unset=HOME git log",
    ],
    "words that become several words (brace, glob, split) where the count or position matters": [
        "uniq x{a,b}",
        "uniq a{b,c}d",
        "uniq *.txt",
        "uniq a*",
        "uniq -f 1* in",
        "uniq -c x{a,b}",
        "sort -k $x f",
        'rg -e ""{x,--pre=sh} f',
        'sort -k ""{1,-o} x',
        "sort -t $x f",
        "nice -n * ls",
        "nice -n $x ls",
        "timeout [5r]* ls",
        "timeout 5* ls",
        "timeout x{5,rm} ls",
        "xargs -n $x ls",
        "env -u $x ls",
        "stdbuf -o $x ls",
        "time -f $x ls",
        "ionice -c $x ls",
        "hostname x{a,b}",
    ],
}

ALLOWED_LINES = [
    'LC_ALL="C" sort f',
    "LC_ALL=C LANG=C sort -u f",
    'while read l; do echo "$l"; done < f',
    'while IFS= read -r line; do echo "$line"; done < f',
    "[[ a > b ]]",
    "[[ $x == y* ]]",
    "[[ -f x && -n $y ]]",
    "[[ 3 -eq 3 ]]",
    "[[ $x =~ ^a ]]",
    "sort src/*.txt",
    "sed -n 1p src/*.py",
    "sed -n '1,5p' f",
    "sed -n '/start/,/end/p' f",
    "sed 's/a/b/g' f",
    "sed -E 's/(a)/\\1/2' f",
    "sed -e '1d' -e '$d' f",
    "sed -n '$=' f",
    "sed '/^#/d;s/x/y/' f",
    "sed -n 'l 40' f",
    "sed -ne '/a/{p;q}' f",
    "awk '{print $1}' f",
    "awk -F: '{print $1}' /etc/passwd",
    "awk -v n=3 'NR<n' f",
    "grep -rn 'def ' src",
    "grep -c x f | sort -n",
    "git status",
    "git log --oneline -5",
    "git log --format='%H %s' -- src/",
    "git diff --stat HEAD~1",
    "git diff --output-indicator-new=x",
    "git show HEAD:README.md | head",
    "git branch -a",
    "git tag -l",
    "git config --get user.name",
    "git config --list --show-origin",
    "git --no-pager log -1",
    "git grep -n foo",
    "git ls-files | wc -l",
    "find . -name '*.py' -exec grep -l x {} +",
    "find . -type f -newer README.md -print0",
    "find src -maxdepth 2 -name '*.md'",
    "curl -s https://example.com",
    "curl -sSL -H 'Accept: text/plain' https://example.com",
    "curl -X GET https://example.com",
    "curl --head https://example.com",
    "ls | xargs -I{} cat {}",
    "find . -name x | xargs grep foo",
    "xargs -0 wc -l < list",
    "env foo=1 ls",
    "env",
    "nice ls",
    "nice -n 5 ls",
    "timeout 5 ls",
    "time ls",
    "time -p ls",
    "stdbuf -oL grep x f",
    "command -v rm",
    "echo ${HOME}",
    "echo ${x:-default} ${#x} ${x/a/b} ${x%.py} ${x:1:2}",
    'echo "$(git rev-parse HEAD)"',
    "wc -l $(git ls-files)",
    "cat <<'EOF'\n$(touch x)\nEOF",
    "cat <<EOF\nplain text\nEOF",
    'grep x <<< "$y"',
    'for f in *.py; do wc -l "$f"; done',
    "case $x in a) ls;; b|c) pwd;; esac",
    "if [ -f x ]; then cat x; elif [ -d x ]; then ls x; else echo none; fi",
    "test -f x && cat x",
    "sort -k2 -t, f | uniq -c | sort -rn | head",
    "tree -L 2 -a",
    "rg -n --glob '*.py' foo",
    "date +%Y",
    "date -u '+%F %T'",
    "printf '%s\\n' a b",
    "printf -- '-x\\n'",
    "read -r x < f",
    "x=1; echo $x",
    "export foo=bar",
    "declare -p",
    "echo $((1 + 2))",
    "echo a\\ b",
    "echo $'a\\tb'",
    "ls -la 2>/dev/null || true",
    "ls 2>&1 >/dev/null",
    "! grep -q x f",
    "(cd src && ls)",
    "{ ls; pwd; }",
    "ls # ; rm x",
    "cat -- -o",
    "du -sh .",
    "ps aux | grep python",
    "jq '.a' f.json",
    "diff <(sort a) <(sort b)",
    "uniq -c f",
    "head -n 20 f; tail -5 f",
    "less f",
    "more f",
    "cat f | less",
    "git log | less -R",
    "less -RSN f g",
    "less -p pattern f",
    "less --chop-long-lines --line-numbers f",
    "more -d f",
    "xxd f",
    "xxd -l 64 -c 16 f",
    "xxd -p f | head",
    "xxd -r -p dump",
    "xxd -r dump | head",
    "hd f",
    "hd -n 32 f",
    "hexdump -C f | head",
    "od -An -tx1 f",
    'echo ${!a[@]} ${!a[*]} "${!a[@]}"',
    "echo ${!BASH*} ${!LC_@}",
    "unset x y",
    "unset -f f",
    "TZ=UTC date",
    "LC_COLLATE=C LANGUAGE=en sort f",
    "NO_COLOR=1 COLUMNS=200 TERM=dumb ls",
    "for _ in 1 2; do echo hi; done",
    "http_proxy= curl -s https://example.com",
    "for src in a b; do echo $src; done",
    "for opt in a b; do echo $opt; done",
    "env foo=1 git log -1",
    "",
]


@pytest.mark.parametrize(
    ("family", "command"),
    [(family, c) for family, lines in DENIED_FAMILIES.items() for c in lines],
)
def test_every_family_is_denied(family: str, command: str, tmp_path: Path) -> None:
    ok, reason = classify_bash(command, tmp_path)
    assert not ok, f"{family}: {command!r} was allowed"
    assert reason
    assert reason != "read-only command"


@pytest.mark.parametrize("command", ALLOWED_LINES)
def test_plain_reads_are_allowed(command: str, tmp_path: Path) -> None:
    ok, reason = classify_bash(command, tmp_path)
    assert ok, f"{command!r}: {reason}"


def test_the_corpus_covers_every_family_of_the_red_team_and_more() -> None:
    assert len(DENIED_FAMILIES) >= 18
    assert sum(len(v) for v in DENIED_FAMILIES.values()) >= 400


def test_a_glob_may_expand_to_an_option_where_a_file_starts_with_a_dash(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    assert classify_bash("sort *.txt", tmp_path)[0]
    (tmp_path / "-o.txt").write_text("")
    ok, reason = classify_bash("sort *.txt", tmp_path)
    assert not ok
    assert "could be an option" in reason
    assert classify_bash("sort ./*.txt", tmp_path)[0]  # starts with a literal: never an option
    assert classify_bash("sort -- *.txt", tmp_path)[0]
    # Without a known folder, or after a change of directory, a leading glob is refused.
    assert not classify_bash("sort *.txt")[0]
    assert not classify_bash("cd /tmp && sort *.txt", tmp_path)[0]
    assert not classify_bash("sort *.txt; cd /tmp", tmp_path)[0]  # a loop would run it there
    assert not classify_bash("for i in 1 2; do sort *.txt; c''d /tmp; done", tmp_path)[0]
    # An empty quote first does not make the glob's first character known.
    for command in ('sort ""*.txt', "sort ''*.txt", 'sort """"*', "sort $''*"):
        ok, reason = classify_bash(command, tmp_path)
        assert not ok, command


def test_denials_name_what_was_refused() -> None:
    cases = {
        "sort --out=x f": "`sort --out=x` (read as `--output`) writes a file",
        "env --sp='rm x'": "splits a string into a command line",
        "git -C evil log": "`git -C`",
        "xargs -i rm {}": "`rm` deletes files",
        "cat a > b": "writes a file",
        "echo $((a[$(id)]))": "arithmetic",
    }
    for command, fragment in cases.items():
        ok, reason = classify_bash(command)
        assert not ok
        assert fragment in reason, (command, reason)


def test_sed_script_reader() -> None:
    assert sed_script_problem("s/a/b/g;1d;$!N;/x/{p;q}") is None
    assert sed_script_problem("a\\\nappended text w x") is None  # text, not a command
    assert sed_script_problem("s/a\\/w/b/") is None  # an escaped delimiter inside the regex
    assert "writes" in (sed_script_problem("s/a/b/w x") or "")
    assert "runs" in (sed_script_problem("1e id") or "")
    assert "does not know" in (sed_script_problem("k") or "")
    assert "unterminated" in (sed_script_problem("s/a/b") or "")


def test_every_rule_parses_and_names_a_known_shape() -> None:
    for name, rule in RULES.items():
        assert isinstance(rule, Rule), name
        assert rule.spec is not None
    for name in ("PATH", "GIT_DIR", "XDG_CONFIG_HOME", "LD_PRELOAD", "HOME", "CURL_HOME", "SSLKEYLOGFILE"):
        assert dangerous_variable(name), name
    for name in ("LC_ALL", "IFS", "TZ", "f", "line", "src"):
        assert not dangerous_variable(name), name


# -- property-based: compositions of denied pieces stay denied ----------------------------------

DENIED_PIECES: list[tuple[str, str]] = [
    ("rm", "-rf x"),
    ("touch", "pwned"),
    ("sed", "-i s/a/b/ f"),
    ("sed", "'w out' f"),
    ("sort", "-o out f"),
    ("sort", "--out=x f"),
    ("env", "-S 'rm x'"),
    ("curl", "-o x http://a"),
    ("curl", "-T f http://a"),
    ("git", "config a.b c"),
    ("git", "-C evil log"),
    ("tee", "out"),
    ("awk", "'BEGIN{system(\"id\")}'"),
    ("tree", "-H ."),
    ("find", ". -delete"),
    ("xargs", "-i rm {}"),
    ("time", "-o x ls"),
    ("python3", "-c 1"),
]
SAFE_PIECES = ["ls", "cat f", "git status", "grep -n x f", "echo hi", "sort f", "true"]


def _quoted_name(name: str, style: int) -> str:
    if style == 0 or len(name) < 2:
        return name
    if style == 1:
        return f"'{name}'"
    if style == 2:
        return f'"{name}"'
    if style == 3:
        return "\\" + name
    if style == 4:
        return name[0] + "''" + name[1:]
    return f"$'{name}'"


def _wrap(cmd: str, how: int) -> str:
    wrappers = [
        lambda c: c,
        lambda c: f"env {c}",
        lambda c: f"nice {c}",
        lambda c: f"timeout 5 {c}",
        lambda c: f"command {c}",
        lambda c: f"time {c}",
        lambda c: f"stdbuf -o0 {c}",
        lambda c: f"find . -exec {c} \\;",
        lambda c: f"echo $( {c} )",
        lambda c: f"echo `{c}`",
        lambda c: f'echo "$( {c} )"',
        lambda c: f"cat <( {c} )",
        lambda c: f": ${{v:-$( {c} )}}",
        lambda c: f"bash -c {shlex.quote(c)}",
        lambda c: f"sh -c {shlex.quote(c)}",
        lambda c: f"eval {shlex.quote(c)}",
        lambda c: f"( {c} )",
        lambda c: f"{{ {c}; }}",
        lambda c: f"if true; then {c}; fi",
        lambda c: f"for i in 1; do {c}; done",
        lambda c: f"while false; do :; done; {c}",
        lambda c: f"! {c}",
        lambda c: f"x=$( {c} )",
        lambda c: f"cat <<EOF\n$({c})\nEOF",
    ]
    return wrappers[how % len(wrappers)](cmd)


_REDIRECTS = ["", " 2>/dev/null", " < f", " > /dev/null", " 2>&1"]
_JOINERS = ["; ", " && ", " || ", " | ", "\n", " & "]


@st.composite
def denied_compositions(draw: st.DrawFn) -> str:
    name, args = draw(st.sampled_from(DENIED_PIECES))
    cmd = f"{_quoted_name(name, draw(st.integers(0, 5)))} {args}{draw(st.sampled_from(_REDIRECTS))}"
    for _ in range(draw(st.integers(1, 3))):
        cmd = _wrap(cmd, draw(st.integers(0, 100)))
    safe = draw(st.lists(st.sampled_from(SAFE_PIECES), max_size=2))
    joiner = draw(st.sampled_from(_JOINERS))
    position = draw(st.integers(0, len(safe)))
    parts = [*safe[:position], cmd, *safe[position:]]
    return joiner.join(parts)


@settings(max_examples=400, deadline=None)
@given(denied_compositions())
def test_compositions_of_denied_pieces_stay_denied(command: str) -> None:
    ok, reason = classify_bash(command)
    assert not ok, f"allowed: {command!r}"
    assert reason


@st.composite
def safe_compositions(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(SAFE_PIECES), min_size=1, max_size=4))
    cmd = draw(st.sampled_from(_JOINERS[:4])).join(parts)
    for _ in range(draw(st.integers(0, 2))):
        cmd = _wrap(cmd, draw(st.sampled_from([0, 8, 10, 16, 17, 18, 19])))
    return cmd + draw(st.sampled_from(_REDIRECTS))


@settings(max_examples=200, deadline=None)
@given(safe_compositions())
def test_compositions_of_plain_reads_stay_allowed(command: str) -> None:
    """The other side: the check is not simply refusing everything it is shown."""
    ok, reason = classify_bash(command)
    assert ok, f"{command!r}: {reason}"


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(SAFE_PIECES),
    st.from_regex(r"[a-z][a-z0-9_.]{0,12}", fullmatch=True),
    st.sampled_from([">", ">>", "&>", "2>", ">|", "1>"]),
)
def test_any_redirection_into_a_file_is_denied(piece: str, target: str, op: str) -> None:
    ok, _reason = classify_bash(f"{piece} {op} {target}")
    assert not ok


# -- differential: the word model against bash itself ---------------------------------------------

_WORD_PIECES = [
    "",
    "''",
    '""',
    "$''",
    "x",
    "-o",
    "-",
    "{",
    "}",
    ",",
    "{-o,x}",
    "{a,b}",
    "{1..2}",
    "*",
    "?",
    "$x",
    '"$x"',
    "$e",
    '"$e"',
    "${e}",
    '"$@"',
    "\\-",
    "'-o'",
]


def _word_as_read(word: str) -> Word:
    root = _parser().parse(f"echo {word}".encode()).root_node
    command = root.named_children[0]
    arguments = [c for c in command.named_children if c.type != "command_name"]
    assert len(arguments) == 1, word
    return _Walker(_Context(_Line(None))).word(arguments[0])


def _bash_words(word: str, folder: Path) -> list[str]:
    script = f'x="-o y"; e=; set -- "-a" "b c"; printf "%s\\0" {word}'
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", script], cwd=folder, capture_output=True, timeout=10
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().split("\0")[:-1]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_WORD_PIECES), min_size=1, max_size=4))
@example(['""', "{-o,x}"])
@example(["''", '""', "*"])
@example(['""', "{1..2}", "{-o,x}"])
@example(["$''", "*"])
@example(["x", "{a,b}"])
def test_the_word_model_agrees_with_bash(pieces: list[str]) -> None:
    """Whenever bash makes an option of a word or splits it, the reader says it may."""
    word = "".join(pieces)
    root = _parser().parse(f"echo {word}".encode()).root_node
    command = root.named_children[0] if root.named_children else None
    if root.has_error or command is None or command.type != "command" or len(command.named_children) != 2:
        return  # not one word to the grammar: the check refuses such lines elsewhere
    try:
        read = _word_as_read(word)
    except Denied:
        return
    folder = Path(tempfile.mkdtemp())
    try:
        (folder / "-n").write_text("")  # a glob may expand to an option-like name
        (folder / "a").write_text("")
        words = _bash_words(word, folder)
    finally:
        shutil.rmtree(folder)
    if len(words) != 1:
        assert read.several, (word, words)
    if any(w.startswith("-") and w != "-" for w in words):
        assert read.option_like, (word, words)


@pytest.mark.parametrize(
    ("unit", "allowed"),
    [
        ("echo w ", True),
        ("ls; ", True),
        ('grep -n "x" f | ', False),  # a pipeline this long is refused, not parsed for minutes
        ('a "x" |& ', False),
        ("echo a{b,c} ", True),
        ('echo "ab $x" ', True),
        ("cat <<< $(echo x) ", True),
        ("cat <(ls) ", True),
        ("rm x; ", False),
    ],
)
def test_a_400_kb_line_is_decided(unit: str, allowed: bool) -> None:
    """The check is linear in the line's length (bench/bench_hook.py measures it; no test
    fails on time): a 400 kB line is decided, either way."""
    line = unit * (400_000 // len(unit)) + "ls"
    ok, reason = classify_bash(line)
    assert ok is allowed, reason
