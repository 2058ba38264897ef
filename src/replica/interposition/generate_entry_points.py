#!/usr/bin/env python3
"""Writes the C++ source of the MPI entry points that mpi_calls.txt
describes (its head says how): each checks that MPI_Init has run, finds the
communicator, checks the arguments by their kind, and calls the layer's own
function with the call's name as a last argument. A malformed description
stops the build with the line at fault.

usage: generate_entry_points.py MPI_CALLS.txt OUTPUT.cpp
"""
import re
import sys
from pathlib import Path

CALL_NAME = re.compile(r"^(MPIX?_\w+)\((.*)\)$")
PARAM = re.compile(r"^(.*?)(\w+)(\[\])?$")
# Pointers the call writes through, and the error class of a null one (a
# request's is MPI_ERR_REQUEST, as Open MPI gives).
POINTERS = {("request", "MPI_Request*"): "MPI_ERR_REQUEST", ("array_of_requests", "MPI_Request*"): "MPI_ERR_REQUEST",
            ("flag", "int*"): "MPI_ERR_ARG", ("message", "MPI_Message*"): "MPI_ERR_ARG",
            ("index", "int*"): "MPI_ERR_ARG", ("outcount", "int*"): "MPI_ERR_ARG",
            ("array_of_indices", "int*"): "MPI_ERR_ARG"}


class DescriptionError(Exception):
    pass


class Param:
    def __init__(self, text):
        m = PARAM.match(text.strip())
        if not m:
            raise DescriptionError(f"cannot read the parameter '{text}'")
        self.type = (m.group(1) + ("*" if m.group(3) else "")).replace(" ", "").replace("const", "const ")
        self.name = m.group(2)
        self.text = text.strip()


class Call:
    def __init__(self, prototype, where):
        m = CALL_NAME.match(prototype)
        if not m:
            raise DescriptionError(f"line {where}: not a prototype: {prototype}")
        self.name, self.where = m.group(1), where
        try:
            self.params = [Param(p) for p in m.group(2).split(",")] if m.group(2).strip() else []
        except DescriptionError as e:
            raise DescriptionError(f"line {where}: {e}") from None
        self.target = None
        self.conditions = []  # (condition, [parameter names])
        self.inside = set()

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        raise DescriptionError(f"line {self.where}: {self.name} has no parameter '{name}'")


def read(path):
    calls = []
    for number, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not raw[0].isspace():
            calls.append(Call(line.strip(), number))
            if any(c.name == calls[-1].name for c in calls[:-1]):
                raise DescriptionError(f"line {number}: {calls[-1].name} is described twice")
            continue
        if not calls:
            raise DescriptionError(f"line {number}: an indented line before any prototype")
        call, text = calls[-1], line.strip()
        if text.startswith("->"):
            if call.target:
                raise DescriptionError(f"line {number}: {call.name} has a second '-> CALL'")
            call.target = text[2:].strip()
        elif text.startswith("inside:"):
            call.inside |= {call.param(n).name for n in text[len("inside:"):].split()}
        elif text.startswith("if ") and ":" in text:
            condition, names = text[3:].rsplit(":", 1)
            if not names.split():
                raise DescriptionError(f"line {number}: 'if' names no parameter")
            if "root" in names.split():
                raise DescriptionError(f"line {number}: the root is always checked (conditions may use it)")
            call.conditions.append((condition.strip(), [call.param(n).name for n in names.split()]))
        else:
            raise DescriptionError(f"line {number}: neither '-> CALL', 'if COND: P ...' nor 'inside: P ...'")
    for call in calls:
        if not call.target:
            raise DescriptionError(f"line {call.where}: {call.name} has no '-> CALL'")
        conditional = {n for _, names in call.conditions for n in names}
        if conditional & call.inside:
            raise DescriptionError(f"line {call.where}: {call.name}: a parameter both under 'if' and 'inside'")
        for i, p in enumerate(call.params):
            if p.name in conditional | call.inside and not check_of(call, i, "c"):
                raise DescriptionError(f"line {call.where}: {call.name}: '{p.name}' has no check to move")
    return calls


def datatype_after(call, index):
    for p in call.params[index + 1:]:
        if p.type == "MPI_Datatype":
            return p.name
    return None


def check_of(call, index, comm):
    """The check of one parameter by its kind, or None."""
    p = call.params[index]
    receives = any(q.name == "source" for q in call.params)
    sized = (p.type == "int" and p.name in ("root", "dest", "source")) or p.name.endswith("counts")
    if sized and not any(q.type == "MPI_Comm" for q in call.params):
        raise DescriptionError(f"line {call.where}: {call.name}: '{p.name}' needs a communicator to check it against")
    if p.type == "int" and p.name == "root":
        return f"rp::check_root({comm}, root, fn)"
    if p.type == "int" and p.name in ("dest", "source"):
        return f"rp::check_peer({comm}, {p.name}, {str(p.name == 'source').lower()}, fn)"
    if p.type == "int" and p.name in ("tag", "sendtag", "recvtag"):
        any_allowed = p.name == "recvtag" or (p.name == "tag" and receives)
        return f"rp::check_tag({comm}, {p.name}, {str(any_allowed).lower()}, fn)"
    datatype = datatype_after(call, index)
    if p.type == "int" and p.name.endswith("count"):
        if datatype:
            return f"rp::check_buffer({comm}, {p.name}, {datatype}, fn)"
        return f'rp::check_not_negative({comm}, {p.name}, "{p.name}", fn)'
    if p.type == "const int*" and p.name.endswith("counts"):
        if not datatype:
            raise DescriptionError(f"line {call.where}: {call.name}: no datatype after '{p.name}'")
        return f"rp::check_counts({comm}, {p.name}, {datatype}, fn)"
    if p.type == "const int*" and p.name.endswith("displs"):
        return f'rp::check_present({comm}, {p.name}, "{p.name}", MPI_ERR_ARG, fn)'
    if (p.name, p.type) in POINTERS:
        return f'rp::check_present({comm}, {p.name}, "{p.name}", {POINTERS[(p.name, p.type)]}, fn)'
    return None


def entry_point(call):
    comms = [p for p in call.params if p.type == "MPI_Comm"]
    if len(comms) > 1:
        raise DescriptionError(f"line {call.where}: {call.name} has more than one communicator")
    comm = comms[0].name if comms else "self"
    signature = ", ".join(p.text + ("_handle" if p in comms else "") for p in call.params)
    body = [f'    constexpr const char* fn = "{call.name}";', "    rp::started(fn);", "    int rc = MPI_SUCCESS;"]
    if comms:
        body += [f"    rp::communicator* {comm} = rp::find_comm({comm}_handle, fn, &rc);", f"    if (!{comm}) return rc;"]
    elif any(check_of(call, i, comm) for i in range(len(call.params))):
        body.append("    const rp::communicator* self = rp::communicators::get().find(MPI_COMM_SELF);")
    conditional = {n for _, names in call.conditions for n in names}
    for i, p in enumerate(call.params):
        check = check_of(call, i, comm)
        if check and p.name not in conditional and p.name not in call.inside:
            body.append(f"    if ((rc = {check})) return rc;")
    for condition, names in call.conditions:
        checks = [check_of(call, i, comm) for i, p in enumerate(call.params) if p.name in names]
        if None in checks:
            raise DescriptionError(f"line {call.where}: {call.name}: a parameter under 'if' has no check")
        body.append(f"    if ({condition}) {{")
        body += [f"        if ((rc = {c})) return rc;" for c in checks]
        body.append("    }")
    target = call.target
    if not target.endswith(")"):
        raise DescriptionError(f"line {call.where}: {call.name}: the call '{target}' does not end with ')'")
    body.append(f"    return entry::{target[:-1]}{', ' if not target.endswith('()') else ''}fn);")
    return [f"int {call.name}({signature}) {{"] + body + ["}", ""]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    source, output = sys.argv[1], Path(sys.argv[2])
    try:
        calls = read(source)
        lines = [f"// Generated by generate_entry_points.py from {Path(source).name}: do not edit.",
                 '#include "api.hpp"', '#include "entry_points.hpp"', "",
                 "namespace rp = rampart::replica::detail;", "namespace entry = rp::entry;", "",
                 'extern "C" {', ""]
        for call in calls:
            lines += entry_point(call)
        lines += ['}  // extern "C"']
    except DescriptionError as e:
        sys.exit(f"{source}: {e}")
    text = "\n".join(lines) + "\n"
    if not output.exists() or output.read_text() != text:
        output.write_text(text)


if __name__ == "__main__":
    main()
