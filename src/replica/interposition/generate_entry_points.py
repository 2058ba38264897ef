#!/usr/bin/env python3
"""Writes the C++ source of the MPI entry points that mpi_calls.txt
describes (its head says how): each checks that MPI_Init has run, finds its
communicators and groups, checks the arguments by their kind, and calls the layer's own
function with the call's name as a last argument. A malformed description
stops the build with the line at fault.

usage: generate_entry_points.py MPI_CALLS.txt OUTPUT.cpp
"""
import re
import sys
from pathlib import Path

CALL_NAME = re.compile(r"^(MPIX?_\w+)\((.*)\)$")
PARAM = re.compile(r"^(.*?)(\w+)((?:\[\d*\])*)$")
# Pointers the call writes through, and the error class of a null one (a
# request's is MPI_ERR_REQUEST, as Open MPI gives; a result's MPI_ERR_ARG).
POINTERS = {("request", "MPI_Request*"): "MPI_ERR_REQUEST", ("array_of_requests", "MPI_Request*"): "MPI_ERR_REQUEST",
            ("comm", "MPI_Comm*"): "MPI_ERR_COMM"}
for name, type_ in [("flag", "int*"), ("message", "MPI_Message*"), ("index", "int*"), ("outcount", "int*"),
                    ("array_of_indices", "int*"), ("newcomm", "MPI_Comm*"), ("newgroup", "MPI_Group*"),
                    ("group", "MPI_Group*"), ("result", "int*"), ("size", "int*"), ("rank", "int*"),
                    ("ndims", "int*"), ("newrank", "int*"), ("errhandler", "MPI_Errhandler*"), ("keyval", "int*"),
                    ("comm_keyval", "int*"), ("position", "int*"), ("parent", "MPI_Comm*"), ("resultlen", "int*"),
                    ("status", "int*"), ("info_used", "MPI_Info*"), ("rank_source", "int*"), ("rank_dest", "int*")]:
    POINTERS[(name, type_)] = "MPI_ERR_ARG"
# Arrays and strings the call reads: not a null pointer (MPI_ERR_ARG); the
# description says when they are read (`if n > 0: ranks`).
INPUTS = {"ranks", "ranks1", "ranks2", "dims", "periods", "coords", "remain_dims", "comm_name"}


class DescriptionError(Exception):
    pass


class Param:
    def __init__(self, text):
        m = PARAM.match(text.strip())
        if not m:
            raise DescriptionError(f"cannot read the parameter '{text}'")
        dims = re.findall(r"\[\d*\]", m.group(3))  # int ranges[][3]: a pointer to int[3]
        base = m.group(1).replace(" ", "").replace("const", "const ")
        self.type = base + ("*" if len(dims) == 1 else f"(*){''.join(dims[1:])}" if dims else "")
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
        self.cartesian = False

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
        elif text == "cartesian":
            if call.cartesian or not any(q.type == "MPI_Comm" for q in call.params):
                raise DescriptionError(f"line {number}: 'cartesian' twice, or in a call without a communicator")
            call.cartesian = True
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
            raise DescriptionError(f"line {number}: neither '-> CALL', 'if COND: P ...', 'inside: P ...' nor 'cartesian'")
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
    sized = (p.type == "int" and p.name in ("root", "dest", "source", "rank")) or p.name.endswith("counts")
    if p.type in ("MPI_Comm", "MPI_Group"):
        return None
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
    if p.type == "int" and p.name in ("n", "ndims", "maxdims"):
        return f'rp::check_not_negative({comm}, {p.name}, "{p.name}", fn)'
    if p.type == "int" and p.name == "rank":
        return f"rp::check_rank({comm}, rank, fn)"
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
    if p.name in INPUTS and p.type.endswith("*"):
        return f'rp::check_present({comm}, {p.name}, "{p.name}", MPI_ERR_ARG, fn)'
    return None


def handles(call):
    """The communicators and groups the call names, found before any check:
    (parameter, the layer's type, the lookup, the error of an invalid one)."""
    found = []
    for p in call.params:
        if p.type == "MPI_Comm":
            found.append((p, "rp::communicator*", f"rp::find_comm({p.name}_handle, fn, &rc)", None))
        elif p.type == "MPI_Group":
            found.append((p, "rp::group*", f"rp::to_group({p.name}_handle)", "MPI_ERR_GROUP"))
    return found


def entry_point(call):
    found = handles(call)
    comms = [p for p, *_ in found if p.type == "MPI_Comm"]
    comm = comms[0].name if comms else "self"  # where errors are raised
    body = [f'    constexpr const char* fn = "{call.name}";', "    rp::started(fn);", "    int rc = MPI_SUCCESS;"]
    if not comms and (found or any(check_of(call, i, comm) for i in range(len(call.params)))):
        body.append("    const rp::communicator* self = rp::communicators::get().find(MPI_COMM_SELF);")
    for p, kind, lookup, error in found:
        body.append(f"    {kind} {p.name} = {lookup};")
        if error:
            body.append(f'    if (!{p.name}) return rp::program_error({comm}, {error}, fn, "an invalid {p.name}");')
        else:
            body.append(f"    if (!{p.name}) return rc;")
    if call.cartesian:
        body.append(f"    if ((rc = rp::check_cartesian({comm}, fn))) return rc;")
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
    text = "\n".join(body[3:])
    if not re.search(r"\brc\b", text):
        body.remove("    int rc = MPI_SUCCESS;")
    return [f"int {call.name}({signature(call, found, text)}) {{"] + body + ["}", ""]


def signature(call, found, body):
    """The C parameters; a handle is renamed (its name is the layer's object),
    and one the body never uses is left unnamed."""
    out = []
    for p in call.params:
        name = p.name + "_handle" if any(p is q for q, *_ in found) else p.name
        used = re.search(rf"\b{name}\b", body)
        at = PARAM.match(p.text).start(2)  # the declarator, whatever the type holds
        out.append(p.text[:at] + (name if used else f"/*{name}*/") + p.text[at + len(p.name):])
    return ", ".join(out)


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
