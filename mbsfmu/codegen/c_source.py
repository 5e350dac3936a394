"""Print the equations of one model as C99 source (the compiled counterpart of
:mod:`mbsfmu.equations.python_source`).

Each quantity group becomes one function
``void mbs_<name>(double t, const double *y, const double *yd, const double *prm,
const double *u, const double *tp, double *out)`` that writes its outputs into ``out`` in the
same order as :class:`~mbsfmu.equations.numeric_model.NumericModel` uses:

* ``dynamics``: M (row-major, f x f), then q - k (f)
* ``constraints``: c (mh), C (row-major, m x f), b' (m) -- m rows, of which the first mh are
  holonomic (``MBS_MH``; the rest are nonholonomic and have no row in c)
* ``constrained``: M, q - k, c, C, b', b''
* ``energy``: kinetic and potential energy
* ``initial_conditions``: e (nic) then E = de/dy (row-major, nic x f) of the model's extra
  initial conditions (``System.initial_condition``; ``MBS_NIC`` = nic)
* ``mass_properties``: m, J11, J12, J13, J22, J23, J33 of each body whose mass properties depend
  on constants (``MBS_NBODYCHECK`` bodies, :func:`~mbsfmu.equations.parameter_requirements.
  body_checks`), for the parameter checks of the native FMU
* ``factor_values``: the value of each flexible-body stiffness or damping factor that depends
  on constants (``MBS_NFACTORCHECK``, :func:`~mbsfmu.equations.parameter_requirements.
  factor_checks`), for the same checks
* ``outputs``: the user outputs that are expressions or frame kinematics (``MBS_NOUT_EXPR``
  of the ``MBS_NOUT`` user outputs; the others are multipliers), ``outputs_du``: their
  derivatives by the inputs (row-major), ``force_du``: d(q - k)/du (f x nu, only for models with
  reaction outputs), see :mod:`mbsfmu.equations.outputs`

and, when every time parameter is given as an expression (``MBS_TP_FUNCTION`` 1),
``void mbs_time_parameters(double t, const double *prm, double *tp)`` writes (p, p', p'') of each
time parameter, so a standalone program (the native FMU) needs no Python to evaluate them.

Every intermediate variable a function needs becomes a ``const double _wN`` local, printed in
definition order.  ``mbs_sizes`` reports the array sizes so a loader can check them.
"""

from __future__ import annotations

import re

import sympy as sp
from sympy.printing.c import get_math_macros

from ..core import constants
from ..core.errors import ModelError
from ..equations.newton_euler import potential_energy
from ..equations.outputs import expression_input_jacobian, expression_outputs, force_input_jacobian
from ..equations.parameter_requirements import body_checks, factor_checks
from ..equations.python_source import argument_symbols
from ..equations.recursive_newton_euler import recursive_newton_euler
from .c_printer import CPrinter, UnknownSymbols

_ARGS = ("t", "y", "yd", "prm", "u", "tp")


def output_groups(eqs, with_dynamics: bool = True, with_energy: bool = True) -> dict[str, list]:
    """The output lists of the generated functions, in NumericModel's order (``dynamics`` and
    ``constrained`` empty without ``with_dynamics``: M and k are then not derived; ``energy``
    empty without ``with_energy``)."""

    def lst(m):
        return [] if m is None else list(m)

    dyn = list(eqs.M) + list(eqs.q - eqs.k) if with_dynamics else []
    return {
        "dynamics": dyn,
        "constraints": lst(eqs.c) + lst(eqs.C) + lst(eqs.b1),
        "constrained": dyn + lst(eqs.c) + lst(eqs.C) + lst(eqs.b1) + lst(eqs.b2),
        "energy": [eqs.kinetic_energy, eqs.potential_energy] if with_energy else [],
        "initial_conditions": initial_condition_outputs(eqs.system),
        "outputs": expression_outputs(eqs),
        "outputs_du": list(expression_input_jacobian(eqs)),
        "force_du": list(force_input_jacobian(eqs)),
        "mass_properties": [e for b in body_checks(eqs.system) for e in b.expressions],
        "factor_values": [fc.expression for fc in factor_checks(eqs.system)],
    }


def initial_condition_outputs(system) -> list:
    """e (one per initial condition) followed by the rows of de/dy."""
    ics = system.initial_conditions
    if not ics:
        return []
    e = sp.Matrix([ic.expression for ic in ics])
    return list(e) + list(e.jacobian(system.y))


def time_parameters_native(system) -> bool:
    """True if every time parameter is an expression (none is a Python callable)."""
    return all(p.functions is None for p in system.time_parameters.values())


def sizes(eqs) -> dict[str, int]:
    """Argument array sizes (f, nprm, nu, ntp, m, mh) of the generated functions: f coordinates,
    m rows of C, of which mh are holonomic (rows of c); the letters of docs/architecture.md's
    glossary, which C writes MBS_F, MBS_M, MBS_MH."""
    n = {arg: len(syms) for arg, syms in argument_symbols(eqs.system)}
    return {"F": n["y"], "NPRM": n["prm"], "NU": n["u"], "NTP": n["tp"], "M": eqs.m, "MH": eqs.mh}


def c_names(eqs) -> dict:
    """The C name of every symbol a generated function may read: ``t``, the argument arrays'
    elements (``y[0]``, ``prm[2]``, ...) and the intermediates (``_wN`` locals)."""
    system = eqs.system
    names = {system.t: "t"}
    for arg, syms in argument_symbols(system):
        for i, s in enumerate(syms):
            names[s] = f"{arg}[{i}]"
    names.update((s, str(s)) for s in eqs.intermediates.symbols)
    return names


def print_c(printer: CPrinter, expr, what: str, system) -> str:
    """C text of ``expr``; ModelError naming ``what`` if it reads a symbol without a C name."""
    try:
        return printer.doprint(expr)
    except UnknownSymbols as exc:
        raise ModelError(f"{system.name}: {what} depends on unknown symbol(s) "
                         f"{exc.symbols}; cannot generate C code") from None


#: straight-line functions longer than this many statements are split into parts (see
#: :func:`function_lines`): gcc's register allocation grows faster than linearly in the length
#: of one basic block (a 3600-statement mbs_aba took 13 s at -O2 in one piece, 3 s in parts)
CHUNK_STATEMENTS = 150

_ARG_LIST = ("double t, const double *y, const double *yd, const double *prm,",
             "        const double *u, const double *tp, double *out")
_INTERMEDIATE = re.compile(r"\b_[wf]\d+\b")
_DEFINITION = re.compile(r"    const double (_[wf]\d+) = ")


def function_lines(ret: str, name: str, body: list[str], prologue: tuple = (),
                   static: bool = False) -> list[str]:
    """A C function ``<ret> name(MBS_EQ_ARGS)`` running the statements ``body`` (one per line,
    indented by four spaces: ``const double _wN = ...;`` definitions, output assignments and,
    for ``ret == "int"``, ``if (...) return k;`` tests), then ``return 0;`` for an int function.

    A long body is split into parts ``static int name_partK(MBS_EQ_ARGS, double *W)`` of at
    most :data:`CHUNK_STATEMENTS` statements, called in order; an intermediate read by a later
    part is stored in W (the caller's array, one slot per such intermediate) and read from
    there, so each part is one short basic block for the compiler.  A part returns the first
    non-zero status of its tests, which the function returns at once."""
    head = ("static " if static else "") + f"{ret} {name}({_ARG_LIST[0]}"
    voids = [f"    (void){a};" for a in _ARGS]
    if len(body) <= CHUNK_STATEMENTS:
        return [head, _ARG_LIST[1] + ")", "{", *prologue, *voids,
                *([] if ret == "int" else ["    (void)out;"]), *body,
                *(["    return 0;"] if ret == "int" else []), "}"]
    parts = [body[i:i + CHUNK_STATEMENTS] for i in range(0, len(body), CHUNK_STATEMENTS)]
    defined_in = {}
    for k, part in enumerate(parts):
        for line in part:
            m = _DEFINITION.match(line)
            if m:
                defined_in[m.group(1)] = k
    slot: dict[str, int] = {}
    for k, part in enumerate(parts):
        for line in part:
            for sym in _INTERMEDIATE.findall(line):
                if defined_in.get(sym, k) < k and sym not in slot:
                    slot[sym] = len(slot)
    lines = []
    for k, part in enumerate(parts):
        lines += [f"static int {name}_part{k}({_ARG_LIST[0]}", _ARG_LIST[1] + ", double *restrict W)",
                  "{", *voids, "    (void)out;", "    (void)W;"]
        for line in part:
            m = _DEFINITION.match(line)
            head_text, rest = (line[:m.end()], line[m.end():]) if m else ("", line)
            rest = _INTERMEDIATE.sub(
                lambda mm, k=k: f"W[{slot[mm.group(0)]}]" if defined_in.get(mm.group(0), k) < k
                else mm.group(0), rest)
            lines.append(head_text + rest)
            if m and m.group(1) in slot:
                lines.append(f"    W[{slot[m.group(1)]}] = {m.group(1)};")
        lines += ["    return 0;", "}", ""]
    call = "(t, y, yd, prm, u, tp, out, W)"
    lines += [head, _ARG_LIST[1] + ")", "{", *prologue, f"    double W[{max(len(slot), 1)}];"]
    if ret == "int":
        lines.append("    int rc;")
        lines += [f"    if ((rc = {name}_part{k}{call}) != 0)\n        return rc;"
                  for k in range(len(parts))]
        lines.append("    return 0;")
    else:
        lines += [f"    (void){name}_part{k}{call};" for k in range(len(parts))]
    lines.append("}")
    return lines


def _statements(name, items, eqs, printer, loaded=None) -> list[str]:
    """Body lines writing ``out[i] = expr`` for the ``(i, expr)`` items: first a ``const double``
    definition of every intermediate they need, in definition order, except those in ``loaded``
    (a dict intermediate -> C text of where it is already held, which is read instead)."""
    w = eqs.intermediates
    loaded = loaded or {}
    items = [(i, sp.sympify(e)) for i, e in items]
    lines = []

    def body(expr, what):
        return print_c(printer, expr, what, eqs.system)

    needed = w.needed_for([e for _, e in items])
    if loaded:  # what is held already is read, not derived again from its own inputs
        reach = _reachable(w, [e for _, e in items], loaded)
        needed = [s for s in needed if s in reach]
    for s in needed:
        value = loaded[s] if s in loaded else body(w.definitions[s], str(s))
        lines.append(f"    const double {s} = {value};")
    # an output equal to an earlier one (the mirrored half of the symmetric M, repeated zeros)
    # is copied, not evaluated again: the compiler does not merge long sums reliably
    first: dict = {}
    for i, e in items:
        j = first.setdefault(e, i)
        if j != i and not e.is_Number:
            lines.append(f"    out[{i}] = out[{j}];")
        else:
            lines.append(f"    out[{i}] = {body(e, f'output {i} of {name}')};")
    return lines


def _reachable(w, exprs, stop) -> set:
    """The intermediates that ``exprs`` read, directly or through definitions, without looking
    into the definitions of those in ``stop``."""
    seen: set = set()
    stack = [x for e in exprs for x in sp.sympify(e).free_symbols if x in w.definitions]
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        if x not in stop:
            stack.extend(d for d in w.definitions[x].free_symbols if d in w.definitions)
    return seen


def _function(name, outputs, eqs, printer, static=False) -> list[str]:
    lines = _statements(name, list(enumerate(outputs)), eqs, printer)
    return function_lines("void", f"mbs_{name}", lines, static=static)


def constrained_split(eqs):
    """How ``mbs_constrained`` splits into two halves for the null-space formulations, which
    need C before they can project y' and evaluate b'' at the projected y' (see mbs_model.h):
    ``(positions, velocities, shared)`` with the ``(offset, expr)`` items of c, C, b' (at y) and
    of M, q - k, b'' (at y, y') in the layout of ``mbs_constrained``, and the intermediates of
    the first half that the second reads (held in ``out`` after that layout, in this order).
    None for a model without constraints (or whose M is not derived)."""

    def split(e):
        m = e.m
        if m == 0:
            return None
        f = len(e.system.y)
        lay = constants.constrained_layout(f, m, e.mh)
        pos = [(lay[k].start + i, v) for k, mat in (("c", e.c), ("C", e.C), ("b1", e.b1))
               for i, v in enumerate(mat)]
        dyn = list(e.M) + list(e.q - e.k)
        vel = [(i, v) for i, v in enumerate(dyn)] + [(lay["b2"].start + i, v) for i, v in enumerate(e.b2)]
        w = e.intermediates
        first = set(w.needed_for([v for _, v in pos]))
        reach = _reachable(w, [v for _, v in vel], first)
        return pos, vel, [s for s in w.symbols if s in first and s in reach]

    return eqs.derived("constrained_split", split)


def _constrained_halves(eqs, printer) -> list[str]:
    """``mbs_constrained_positions`` and ``mbs_constrained_velocities`` (:func:`constrained_split`);
    without constraints the first writes nothing and the second is ``mbs_constrained``."""
    split = constrained_split(eqs)
    if split is None:
        return [f"void mbs_constrained_positions({_ARG_LIST[0]}", _ARG_LIST[1] + ")", "{",
                *[f"    (void){a};" for a in (*_ARGS, "out")], "}", "",
                *_forwarding_function("constrained_velocities", "constrained")]
    pos, vel, shared = split
    f, m = len(eqs.system.y), eqs.m
    tail = sum(n.stop - n.start for n in constants.constrained_layout(f, m, eqs.mh).values())
    first = _statements("constrained_positions", pos, eqs, printer)
    first += [f"    out[{tail + k}] = {s};" for k, s in enumerate(shared)]
    second = _statements("constrained_velocities", vel, eqs, printer,
                         loaded={s: f"out[{tail + k}]" for k, s in enumerate(shared)})
    return [*function_lines("void", "mbs_constrained_positions", first), "",
            *function_lines("void", "mbs_constrained_velocities", second)]


def _tree_dynamics(rn, eqs, printer, separate=None) -> list[str]:
    """``mbs_dynamics`` of a tree on joint coordinates from the recursive Newton-Euler parts
    (:mod:`mbsfmu.equations.recursive_newton_euler`): column j of M is M e_j (e_j passed in
    the place of y'), symmetrized, then q - k; O(N f) operations and O(N) lines instead of the
    O(N f^2) terms of the assembled M.  With ``separate`` (a list) the parts
    ``mbs_mass_times`` and ``mbs_tree_force`` are appended to it instead (a file of their
    own, which needs no header) and only declared here."""
    parts = _function("mass_times", rn.mass_times, eqs, printer, static=separate is None)
    parts.append("")
    parts += _function("tree_force", rn.force, eqs, printer, static=separate is None)
    if separate is None:
        lines = parts
    else:
        separate += parts
        lines = [f"void mbs_{name}({_ARG_LIST[0]}\n{_ARG_LIST[1]});" for name in ("mass_times", "tree_force")]
    lines += ["", "/* M column by column from M v (recursive Newton-Euler), then q - k */",
              f"void mbs_dynamics({_ARG_LIST[0]}", _ARG_LIST[1] + ")", "{",
              "    double e[MBS_F], col[MBS_F];",
              "    int i, j;",
              "    for (j = 0; j < MBS_F; j++)",
              "        e[j] = 0.0;",
              "    for (j = 0; j < MBS_F; j++) {",
              "        e[j] = 1.0;",
              "        mbs_mass_times(t, y, e, prm, u, tp, col);",
              "        e[j] = 0.0;",
              "        for (i = 0; i < MBS_F; i++)",
              "            out[i * MBS_F + j] = col[i];",
              "    }",
              "    for (j = 0; j < MBS_F; j++)",
              "        for (i = j + 1; i < MBS_F; i++) {",
              "            const double m = 0.5 * (out[i * MBS_F + j] + out[j * MBS_F + i]);",
              "            out[i * MBS_F + j] = m;",
              "            out[j * MBS_F + i] = m;",
              "        }",
              "    mbs_tree_force(t, y, yd, prm, u, tp, out + MBS_F * MBS_F);",
              "}"]
    return lines


def scleronomic(eqs) -> bool:
    """True if no frame moves with time by itself (no rheonomic velocity terms, eqs. 4-5):
    then the kinetic energy is y'^T M y' / 2.  Read from the placements: a frame whose position
    or rotation depends on t or a time parameter makes its subtree rheonomic."""
    s = eqs.system
    timed = {s.t} | {p.symbol for p in s.time_parameters.values()}
    return not any((fr.position.free_symbols | fr.rotation.matrix().free_symbols) & timed
                   for fr in list(s.frames.values())[1:])


def _tree_energy(eqs, printer) -> list[str]:
    """``mbs_energy`` of a scleronomic tree: T = y'^T (M y') / 2 with the recursive
    Newton-Euler M v (``mbs_mass_times``, emitted by :func:`_tree_dynamics`), V printed; the
    kinetic energy is then neither derived nor compiled (for a 50-link chain 150 kB of C)."""
    V = potential_energy(eqs.system, eqs.kinematics, eqs.intermediates)
    lines = _function("potential_energy", [V], eqs, printer, static=True)
    lines += ["", "/* kinetic energy y'^T (M y') / 2 from the recursive Newton-Euler M v */",
              f"void mbs_energy({_ARG_LIST[0]}", _ARG_LIST[1] + ")", "{",
              "    double my[MBS_F], T = 0.0;",
              "    int i;",
              "    mbs_mass_times(t, y, yd, prm, u, tp, my);",
              "    for (i = 0; i < MBS_F; i++)",
              "        T += yd[i] * my[i];",
              "    out[0] = 0.5 * T;",
              "    mbs_potential_energy(t, y, yd, prm, u, tp, out + 1);",
              "}"]
    return lines


def _forwarding_function(name, target) -> list[str]:
    return [f"void mbs_{name}(double t, const double *y, const double *yd, const double *prm,",
            "        const double *u, const double *tp, double *out)", "{",
            f"    mbs_{target}(t, y, yd, prm, u, tp, out);", "}"]


def _time_parameter_function(system, printer) -> list[str]:
    lines = ["void mbs_time_parameters(double t, const double *prm, double *tp)", "{",
             "    (void)t;", "    (void)prm;", "    (void)tp;"]
    i = 0
    for p in system.time_parameters.values():
        for e in p.expressions:
            lines.append(f"    tp[{i}] = {print_c(printer, e, f'time parameter {p.name!r}', system)};")
            i += 1
    lines.append("}")
    return lines


def generate_c_functions(eqs, tree_dynamics: bool = False, separate: dict | None = None
                         ) -> tuple[str, bool]:
    """(C99 text, tp_native): the functions of every quantity group of ``eqs`` (and
    ``mbs_time_parameters`` when tp_native, i.e. every time parameter is an expression),
    preceded by the math macros they use that strict C99 lacks.  No size macros: the model
    contract's header (mbs_model.h with model_config.h) or :func:`generate_c` provides them.

    With ``tree_dynamics`` (a build whose runs use the articulated-body algorithm) a tree on
    joint coordinates gets ``mbs_dynamics`` from the recursive Newton-Euler algorithm
    (:func:`_tree_dynamics`), so neither M nor k is derived or printed, and if it is
    scleronomic ``mbs_energy`` from that M v (:func:`_tree_energy`), so neither is the kinetic
    energy.  With ``separate`` (a dict) the two Newton-Euler functions, the largest part of
    the text, go into ``separate["model_tree.c"]`` instead (self-contained C, no header needed;
    "" for other models), so a build can compile them in parallel with the rest."""
    system = eqs.system
    rn = None
    if tree_dynamics:
        rn = recursive_newton_euler(eqs)
        if rn.mass_times is None:
            rn = None
    tree_energy = rn is not None and scleronomic(eqs)
    if tree_energy:  # its intermediates before the printer takes the names
        potential_energy(system, eqs.kinematics, eqs.intermediates)
    # derives what they need first
    groups = output_groups(eqs, with_dynamics=rn is None, with_energy=not tree_energy)
    printer = CPrinter(c_names(eqs))
    functions = []
    tree_parts = None if separate is None else []
    emitted: dict = {}
    for name, outputs in groups.items():
        functions.append("")
        if name in ("dynamics", "constrained") and rn is not None:
            # without constraints, M|q-k|c|C|b'|b'' is M|q-k
            functions += (_tree_dynamics(rn, eqs, printer, tree_parts) if name == "dynamics"
                          else _forwarding_function(name, "dynamics"))
            continue
        if name == "energy" and tree_energy:
            functions += _tree_energy(eqs, printer)
            continue
        key = tuple(sp.sympify(e) for e in outputs)
        if key and key in emitted:
            # a group identical to an earlier one (M|q-k|c|C|b'|b'' of a model without
            # constraints is M|q-k): one call instead of a second copy of the largest function,
            # which would double the source and the compile time of big models
            functions += _forwarding_function(name, emitted[key])
            continue
        emitted.setdefault(key, name)
        functions += _function(name, outputs, eqs, printer)
    functions.append("")
    functions += _constrained_halves(eqs, printer)
    tp_fn = time_parameters_native(system)
    if tp_fn:
        functions.append("")
        functions += _time_parameter_function(system, printer)
    if separate is not None:
        separate["model_tree.c"] = _with_math_macros(tree_parts) if tree_parts else ""
    return _with_math_macros(functions), tp_fn


def _with_math_macros(functions: list[str]) -> str:
    """The lines ``functions`` preceded by the definitions of the math macros they use (M_PI
    etc. are not part of strict C99: defined where math.h does not)."""
    lines = []
    used = set(re.findall(r"\bM_[A-Z0-9_]+\b", "\n".join(functions)))
    for expr, macro in get_math_macros().items():
        value = sp.N(expr.doit(), 21)
        if macro in used and value.is_Float:
            used.discard(macro)
            lines += [f"#ifndef {macro}", f"#define {macro} {value}", "#endif"]
    return "\n".join(lines + functions) + "\n"


def _size_lines(system, n, macros=()) -> list[str]:
    """The head of a self-contained model source: the comment, the size macros MBS_<k> of ``n``,
    the further ``macros`` lines and ``mbs_sizes``."""
    title = str(system.name).replace("*/", "* /")
    lines = [
        f"/* Equations of motion of model {title}: f={n['F']}, nprm={n['NPRM']},",
        f"   nu={n['NU']}, ntp={n['NTP']}, m={n['M']}, mh={n['MH']}.",
        "   Generated by mbsfmu (mbsfmu.codegen.c_source); do not edit. */",
        "#include <math.h>",
        "",
    ]
    lines += [f"#define MBS_{k} {v}" for k, v in n.items()]
    lines += macros
    lines += ["", "int mbs_sizes(int *out)", "{",
              *[f"    out[{i}] = MBS_{k};" for i, k in enumerate(n)], f"    return {len(n)};", "}"]
    return lines


def generate_c(eqs) -> str:
    """Self-contained C99 source: the size macros, ``mbs_sizes`` and one function per quantity
    group of ``eqs`` (see the module doc)."""
    system = eqs.system
    n = sizes(eqs)
    functions, tp_fn = generate_c_functions(eqs)
    groups = output_groups(eqs)
    lines = _size_lines(system, n, [f"#define MBS_NIC {len(system.initial_conditions)}",
                                    f"#define MBS_NOUT {len(system.outputs)}",
                                    f"#define MBS_NOUT_EXPR {len(groups['outputs'])}",
                                    f"#define MBS_NBODYCHECK {len(groups['mass_properties']) // 7}",
                                    f"#define MBS_NFACTORCHECK {len(groups['factor_values'])}",
                                    f"#define MBS_TP_FUNCTION {int(tp_fn)}"])
    return "\n".join(lines) + "\n" + functions
