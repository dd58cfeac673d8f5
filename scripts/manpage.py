#!/usr/bin/env python3
"""manpage.py PROGRAM SECTION SUMMARY OUT: a man page for PROGRAM made of
its own --help texts, so the page can never say other than the program.

PROGRAM's `--help` is the description; each command its help lists (the
lines under "commands:", as `vmscope --help` prints them) gets a section
with `PROGRAM COMMAND --help`, and each sub-command that command's usage
names (`vmscope report exits`, `vmscope session start`) one with its own
--help when it has one of its own. A help that fails (non-zero exit, or
nothing on stdout) fails the build: a page with a hole never installs."""
import datetime
import os
import re
import subprocess
import sys


def run_help(argv):
    p = subprocess.run(argv + ["--help"], capture_output=True, text=True)
    if p.returncode != 0 or not p.stdout.strip():
        sys.exit(f"manpage.py: `{' '.join(argv)} --help` exited "
                 f"{p.returncode}: {p.stderr.strip()[:200]}")
    return p.stdout.rstrip("\n")


def roff_text(text):
    """Preformatted text: backslashes escaped, no line read as a request."""
    out = []
    for line in text.replace("\\", "\\e").split("\n"):
        out.append("\\&" + line if line[:1] in (".", "'") else line)
    return "\n".join(out)


def commands(top_help):
    """The COMMAND names listed under "commands:" in PROGRAM --help."""
    names, inside = [], False
    for line in top_help.split("\n"):
        if line.strip() == "commands:":
            inside = True
        elif inside:
            m = re.match(r"  ([a-z][a-z0-9-]*)\s", line)
            if not m:
                break
            names.append(m.group(1))
    return names


def subcommands(prog, cmd, cmd_help):
    """Lower-case words right after `PROG CMD` in the usage lines."""
    name = os.path.basename(prog)
    subs = []
    for m in re.finditer(rf"\b{re.escape(name)} {re.escape(cmd)} ([a-z][a-z0-9-]*)\b",
                         cmd_help):
        if m.group(1) not in subs:
            subs.append(m.group(1))
    return subs


def section(title, text):
    return f".SS \"{title}\"\n.nf\n{roff_text(text)}\n.fi\n"


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: manpage.py PROGRAM SECTION SUMMARY OUT")
    prog, sect, summary, out = sys.argv[1:]
    name = os.path.basename(prog)
    top = run_help([prog])
    # SOURCE_DATE_EPOCH (Debian's builds set it): the same page from the
    # same tree
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = datetime.datetime.fromtimestamp(int(epoch) if epoch else
                                           datetime.datetime.now().timestamp(),
                                           datetime.timezone.utc)
    cmds = commands(top)
    page = [f".TH {name.upper()} {sect} \"{when:%Y-%m-%d}\" vmscope \"vmscope\"",
            ".SH NAME", f"{name} \\- {summary}",
            ".SH DESCRIPTION",
            f"This page is {name}'s own \\fB\\-\\-help\\fR text"
            + (", and each command's." if cmds else "."),
            ".PP", ".nf", roff_text(top), ".fi"]
    if cmds:
        page.append(".SH COMMANDS")
    for cmd in cmds:
        text = run_help([prog, cmd])
        page.append(section(f"{name} {cmd}", text))
        for sub in subcommands(prog, cmd, text):
            p = subprocess.run([prog, cmd, sub, "--help"], capture_output=True, text=True)
            sub_text = p.stdout.rstrip("\n")
            # a sub-command without a help of its own prints its command's
            if p.returncode == 0 and sub_text and sub_text != text:
                page.append(section(f"{name} {cmd} {sub}", sub_text))
    page.append(".SH SEE ALSO")
    page.append("/usr/share/doc/vmscope/README.md: what vmscope answers, a "
                "session from record to report, installing on a KVM host.")
    with open(out + ".tmp", "w") as f:
        f.write("\n".join(page) + "\n")
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
