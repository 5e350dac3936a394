"""SSP 1.0 (System Structure and Parameterization) export and import of diagrams of FMUs.

An ``.ssp`` is a zip with ``SystemStructure.ssd`` and ``resources/``.  :func:`export_ssp` writes

* one ``ssd:Component`` per FMU block (:class:`~mbsfmu.runner.fmu_block.FMU`, the block type
  registered as ``'FMU'``), ``source="resources/<block>.fmu"``
  (a copy of the block's FMU file, FMI 2.0 or 3.0), ``implementation`` the interface the block
  runs (``CoSimulation`` or ``ModelExchange``: SSP's own attribute for the choice), with a
  ``ssd:Connector`` per port (``kind`` input/output and the port type);
* the values given to the FMU block (``parameters=`` and ``start_values=``) as one inline
  ``ssd:ParameterBinding`` per component (an ``ssv:ParameterSet`` with the bare variable names;
  Real values written with ``repr`` so that they read back bit-identically);
* one ``ssd:Connection`` per diagram connection;
* ``ssd:DefaultExperiment startTime=<t0>`` with an annotation of type ``org.mbsfmu.runner`` that
  holds the communication step (SSP 1.0 has no standard place for it), and per component an
  annotation with what the FMU block needs besides the SSP content (``sample_time``,
  ``instance_name`` and, with Model Exchange, the block's integrator: ``method``, ``rtol``,
  ``atol``, ``max_step``).

:func:`import_ssp` reads such a file (or any flat SSP 1.0 system of FMU components) back into a
:class:`~mbsfmu.runner.diagram.Diagram`: each component an FMU block (parameters and start values
from its bindings, split by the variable's causality), each connection a connection.  Not
supported (an :class:`SSPError` says so): nested systems, connections to the system's own
connectors, connection transformations, parameter mappings, parameter sources outside the file.

The same values are also written as one SSP parameter set with hierarchical names
(``<component>.<variable>``) in ``resources/parameters.ssv``, the form ``fmpy.ssp.simulate_ssp``
takes as its ``parameter_set``.

Running an exported SSP elsewhere: ``fmpy.ssp.simulate_ssp`` (fmpy 0.3) reads the parameter
bindings but does not apply them: it applies only its ``parameter_set`` argument, so a plain
``simulate_ssp(path)`` runs every FMU with its default parameters, silently.
:func:`simulate_ssp_fmpy` runs one of our SSPs in fmpy with its parameters (and its step);
:func:`fmpy_parameter_set` gives the parameter set for a call of one's own.  fmpy couples the
FMUs with a Jacobi scheme: every FMU steps from ``t_k`` to ``t_k+1`` with the inputs read from the other
FMUs after their previous step, all connector values starting at 0.  The diagram runner computes
the outputs at ``t_k`` first (in feed-through order) and then updates: the two agree when no
connected output has direct feed-through and every connected output is 0 at ``t0``; otherwise
fmpy's inputs lag by one step.
"""

from __future__ import annotations

import difflib
import pathlib
import shutil
import tempfile
import weakref
import xml.etree.ElementTree as ET
import zipfile

from ..core.errors import MbsError
from . import fmu_block  # noqa: F401  (defines and registers the block type FMU_BLOCK)
from .block import BlockError, block_type
from .block_fmu import export_block_fmu
from .diagram import Diagram, DiagramError
from .fmi_access import INTERFACES

NS = {
    "ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
    "ssc": "http://ssp-standard.org/SSP1/SystemStructureCommon",
    "ssv": "http://ssp-standard.org/SSP1/SystemStructureParameterValues",
    "mbs": "urn:mbsfmu:runner",
}
for _prefix, _uri in NS.items():
    ET.register_namespace(_prefix, _uri)

ANNOTATION = "org.mbsfmu.runner"
FMU_TYPE = "application/x-fmu-sharedlibrary"
#: the registered block type that runs an FMU component (the runner's own, :mod:`.fmu_block`)
FMU_BLOCK = "FMU"
#: SSP's implementation attribute of a component -> the FMU block's interface (any: the block's default)
IMPLEMENTATIONS = {"any": None, **{v: k for k, v in INTERFACES.items()}}
#: the options of a Model Exchange FMU block kept in the component's annotation, with their types
INTEGRATOR_OPTIONS = {"method": str, "rtol": float, "atol": float, "max_step": float}
#: the parameter set with hierarchical names written beside the SSD (for fmpy's parameter_set)
PARAMETERS_SSV = "resources/parameters.ssv"


class SSPError(MbsError, ValueError):
    """An SSP file that cannot be written from a diagram or read into one."""


def _q(prefix: str, tag: str) -> str:
    return f"{{{NS[prefix]}}}{tag}"


def _value_text(kind: str, value) -> str:
    if kind == "Real":
        return repr(float(value))
    if kind == "Boolean":
        return "true" if value else "false"
    return str(value)


def _fmu_class():
    return block_type(FMU_BLOCK)


# -- export -----------------------------------------------------------------------------------------


def export_ssp(diagram, path, *, python_blocks: str = "error") -> pathlib.Path:
    """Write ``diagram`` as an SSP 1.0 file at ``path``; returns the path.

    Every block must be an FMU block; ``python_blocks="export"`` instead exports the other blocks
    as FMUs with :func:`~mbsfmu.runner.block_fmu.export_block_fmu` (they then need mbsfmu and
    their class importable in the tool's Python)."""
    FMU = _fmu_class()
    if python_blocks not in ("error", "export"):
        raise SSPError(f"python_blocks must be 'error' or 'export', not {python_blocks!r}")
    others = [name for name, b in diagram.blocks.items() if not isinstance(b, FMU)]
    if others and python_blocks == "error":
        kinds = ", ".join(f"{n} ({type(diagram.blocks[n]).__name__})" for n in others)
        raise SSPError(f"an SSP holds FMUs only; these blocks are not FMU blocks: {kinds} "
                       "(export them with python_blocks='export', or wrap FMUs in blocks.FMU)")
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mbsfmu_ssp_") as tmp:
        sources = {}
        for name, b in diagram.blocks.items():
            if isinstance(b, FMU):
                sources[name] = b.path
            else:
                step = diagram.step if b.sample_time is None else b.sample_time
                try:
                    sources[name] = export_block_fmu(b, pathlib.Path(tmp) / f"{name}.fmu", name=name,
                                                     step_size=step)
                except BlockError as exc:
                    raise SSPError(f"block {name!r}: {exc}") from exc
        root = _ssd(diagram, FMU)
        xml = ET.tostring(root, encoding="UTF-8", xml_declaration=True)
        every = [(f"{name}.{var}", kind, text) for name, b in diagram.blocks.items()
                 for var, kind, text in _bound_values(b, FMU)]
        ssv = ET.tostring(_parameter_set("parameters", every), encoding="UTF-8",
                          xml_declaration=True)
        tmp_path = path.with_name(path.name + ".tmp")
        with zipfile.ZipFile(tmp_path, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("SystemStructure.ssd", xml)
            zf.writestr(PARAMETERS_SSV, ssv)
            for name, src in sources.items():
                zf.write(src, f"resources/{name}.fmu")
        tmp_path.replace(path)
    return path


def _bound_values(b, FMU) -> list[tuple[str, str, str]]:
    """(variable, SSV type, value text) of the values given to an FMU block."""
    if not isinstance(b, FMU):
        return []
    out = []
    for var, value in {**b.start_values, **b.parameters}.items():
        kind = b.value_type(var)
        out.append((var, kind, _value_text(kind, value)))
    return out


def _parameter_set(name: str, values) -> ET.Element:
    """An ssv:ParameterSet element holding (name, type, value text) entries."""
    pset = ET.Element(_q("ssv", "ParameterSet"), version="1.0", name=name)
    params = ET.SubElement(pset, _q("ssv", "Parameters"))
    for var, kind, text in values:
        p = ET.SubElement(params, _q("ssv", "Parameter"), name=var)
        ET.SubElement(p, _q("ssv", kind), value=text)
    return pset


def _ssd(diagram, FMU) -> ET.Element:
    root = ET.Element(_q("ssd", "SystemStructureDescription"), version="1.0", name="diagram")
    system = ET.SubElement(root, _q("ssd", "System"), name="diagram")
    elements = ET.SubElement(system, _q("ssd", "Elements"))
    for name, b in diagram.blocks.items():
        comp = ET.SubElement(elements, _q("ssd", "Component"), name=name, type=FMU_TYPE,
                             source=f"resources/{name}.fmu")
        if isinstance(b, FMU):
            comp.set("implementation", INTERFACES[b.interface])
        ports = [(p, "input") for p in b.inputs] + [(p, "output") for p in b.outputs]
        if ports:
            connectors = ET.SubElement(comp, _q("ssd", "Connectors"))
            for port, kind in ports:
                c = ET.SubElement(connectors, _q("ssd", "Connector"), name=port, kind=kind)
                ET.SubElement(c, _q("ssc", b.port_type(port)))
        values = _bound_values(b, FMU)
        if values:
            bindings = ET.SubElement(comp, _q("ssd", "ParameterBindings"))
            binding = ET.SubElement(bindings, _q("ssd", "ParameterBinding"))
            holder = ET.SubElement(binding, _q("ssd", "ParameterValues"))
            holder.append(_parameter_set(name, values))
        extra = {}
        if isinstance(b, FMU):
            if b.sample_time is not None:
                extra["sample_time"] = repr(float(b.sample_time))
            extra["instance_name"] = b.instance_name
            if b.integrator is not None:
                extra.update({k: str(v) if isinstance(v, str) else repr(float(v))
                              for k, v in b.integrator.as_dict().items()})
        elif b.sample_time is not None:
            extra["sample_time"] = repr(float(b.sample_time))
        if extra:
            ann = ET.SubElement(ET.SubElement(comp, _q("ssd", "Annotations")), _q("ssc", "Annotation"),
                                type=ANNOTATION)
            ET.SubElement(ann, _q("mbs", "Block"), **extra)
    if diagram.connections:
        conns = ET.SubElement(system, _q("ssd", "Connections"))
        for src, dst in diagram.connections:
            a, p = src.split(".", 1)
            b_, q = dst.split(".", 1)
            ET.SubElement(conns, _q("ssd", "Connection"), startElement=a, startConnector=p,
                          endElement=b_, endConnector=q)
    exp = ET.SubElement(root, _q("ssd", "DefaultExperiment"), startTime=repr(float(diagram.t0)))
    ann = ET.SubElement(ET.SubElement(exp, _q("ssd", "Annotations")), _q("ssc", "Annotation"),
                        type=ANNOTATION)
    ET.SubElement(ann, _q("mbs", "Diagram"), step=repr(float(diagram.step)))
    return root


# -- import -----------------------------------------------------------------------------------------


def _annotation(element, tag):
    """The mbsfmu annotation element ``tag`` under ``element`` (None if absent)."""
    for ann in element.findall("ssd:Annotations/ssc:Annotation", NS):
        if ann.get("type") == ANNOTATION:
            found = ann.find(f"mbs:{tag}", NS)
            if found is not None:
                return found
    return None


def _parse_value(kind: str, text: str, where: str):
    try:
        if kind == "Real":
            return float(text)
        if kind in ("Integer", "Enumeration"):
            return int(text)
        if kind == "Boolean":
            if text not in ("true", "false", "1", "0"):
                raise ValueError(text)
            return text in ("true", "1")
        return text
    except (TypeError, ValueError):
        raise SSPError(f"{where}: {text!r} is not a valid {kind} value") from None


def _parameter_sets(comp, zf, where):
    """{name: value} of the component's parameter bindings (later bindings win)."""
    values = {}
    for binding in comp.findall("ssd:ParameterBindings/ssd:ParameterBinding", NS):
        kind = binding.get("type", "application/x-ssp-parameter-set")
        if kind != "application/x-ssp-parameter-set":
            raise SSPError(f"{where}: parameter binding of type {kind!r} is not supported")
        if binding.find("ssd:ParameterMapping", NS) is not None:
            raise SSPError(f"{where}: parameter mappings are not supported")
        prefix = binding.get("prefix", "")
        source = binding.get("source")
        if source is not None:
            if binding.get("sourceBase", "SSD") != "SSD" or ":" in source:
                raise SSPError(f"{where}: parameter source {source!r} outside the SSP is not supported")
            try:
                psets = [ET.fromstring(zf.read(source))]
            except KeyError:
                raise SSPError(f"{where}: parameter source {source!r} is not in the SSP") from None
        else:
            psets = binding.findall("ssd:ParameterValues/ssv:ParameterSet", NS)
        for pset in psets:
            for p in pset.findall("ssv:Parameters/ssv:Parameter", NS):
                typed = [c for c in p if c.tag.startswith(f"{{{NS['ssv']}}}")]
                if not typed:
                    raise SSPError(f"{where}: parameter {p.get('name')!r} has no value")
                kind = typed[0].tag.split("}", 1)[1]
                if kind not in ("Real", "Integer", "Boolean", "String", "Enumeration"):
                    raise SSPError(f"{where}: parameter {p.get('name')!r} of type {kind} is not supported")
                name = prefix + p.get("name")
                values[name] = _parse_value(kind, typed[0].get("value"), f"{where}, parameter {name!r}")
    return values


def import_ssp(path, *, step: float | None = None, unpack_dir=None):
    """Read the SSP file ``path`` into a :class:`~mbsfmu.runner.diagram.Diagram` of FMU blocks.

    ``step``: the communication step (default: the one :func:`export_ssp` stored; required for
    SSPs from other tools).  The FMUs are unpacked into ``unpack_dir`` (default: a temporary
    folder removed when the diagram is garbage-collected)."""
    FMU = _fmu_class()
    path = pathlib.Path(path)
    if not path.is_file():
        raise SSPError(f"SSP file {str(path)!r} does not exist")
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise SSPError(f"{path.name} is not an SSP (not a zip archive)") from None
    with zf:
        try:
            root = ET.fromstring(zf.read("SystemStructure.ssd"))
        except KeyError:
            raise SSPError(f"{path.name} has no SystemStructure.ssd") from None
        except ET.ParseError as exc:
            raise SSPError(f"{path.name}: SystemStructure.ssd is not well-formed XML: {exc}") from None
        if root.tag != _q("ssd", "SystemStructureDescription"):
            raise SSPError(f"{path.name}: the root element of SystemStructure.ssd is {root.tag!r}, "
                           "not an SSP 1.0 ssd:SystemStructureDescription")
        system = root.find("ssd:System", NS)
        if system is None:
            raise SSPError(f"{path.name}: SystemStructure.ssd has no ssd:System")
        if system.find("ssd:Elements/ssd:System", NS) is not None:
            raise SSPError(f"{path.name}: nested systems are not supported")
        exp = root.find("ssd:DefaultExperiment", NS)
        t0 = float(exp.get("startTime", 0.0)) if exp is not None else 0.0
        if step is None:
            stored = _annotation(exp, "Diagram") if exp is not None else None
            if stored is None or stored.get("step") is None:
                raise SSPError(f"{path.name} does not store a communication step: give step=")
            step = float(stored.get("step"))
        try:
            diagram = Diagram(step, t0=t0)
        except DiagramError as exc:
            raise SSPError(f"{path.name}: {exc}") from exc
        if unpack_dir is None:
            unpack_dir = pathlib.Path(tempfile.mkdtemp(prefix="mbsfmu_ssp_"))
            weakref.finalize(diagram, shutil.rmtree, str(unpack_dir), True)
        unpack_dir = pathlib.Path(unpack_dir)
        unpack_dir.mkdir(parents=True, exist_ok=True)
        members = set(zf.namelist())
        for comp in system.findall("ssd:Elements/ssd:Component", NS):
            name = comp.get("name")
            where = f"{path.name}, component {name!r}"
            kind = comp.get("type", FMU_TYPE)
            if kind != FMU_TYPE:
                raise SSPError(f"{where}: components of type {kind!r} are not supported (FMUs only)")
            source = comp.get("source", "")
            if source not in members:
                raise SSPError(f"{where}: source {source!r} is not in the SSP")
            target = unpack_dir / f"{len(diagram.blocks)}_{pathlib.PurePosixPath(source).name}"
            target.write_bytes(zf.read(source))
            values = _parameter_sets(comp, zf, where)
            extra = _annotation(comp, "Block")
            opts = {}
            if extra is not None:
                if extra.get("sample_time") is not None:
                    opts["sample_time"] = float(extra.get("sample_time"))
                if extra.get("instance_name") is not None:
                    opts["instance_name"] = extra.get("instance_name")
                for key, kind in INTEGRATOR_OPTIONS.items():
                    if extra.get(key) is not None:
                        opts[key] = _parse_value("Real" if kind is float else "String", extra.get(key),
                                                 f"{where}, annotation {key!r}")
            implementation = comp.get("implementation", "any")
            if implementation not in IMPLEMENTATIONS:
                raise SSPError(f"{where}: implementation {implementation!r} is not supported (the FMU "
                               f"block runs {', '.join(map(repr, IMPLEMENTATIONS))})")
            opts["interface"] = IMPLEMENTATIONS[implementation]
            try:
                probe = FMU(target, interface=opts["interface"])
                unknown = [n for n in values if n not in probe.variables]
                if unknown:
                    close = difflib.get_close_matches(unknown[0], list(probe.variables), n=3)
                    raise SSPError(f"{where}: parameter binding names unknown variables {unknown}"
                                   + (f" (close names: {', '.join(close)})" if close else ""))
                params = {n: v for n, v in values.items() if probe.variables[n].causality == "parameter"}
                starts = {n: v for n, v in values.items() if n not in params}
                outputs = [c.get("name") for c in comp.findall("ssd:Connectors/ssd:Connector", NS)
                           if c.get("kind") == "output"]
                if comp.find("ssd:Connectors", NS) is None or outputs == list(probe.outputs):
                    outputs = None
                block = FMU(target, parameters=params, start_values=starts, outputs=outputs, **opts)
                diagram.add(name, block)
            except (BlockError, DiagramError) as exc:
                raise SSPError(f"{where}: {exc}") from exc
        names = list(diagram.blocks)
        for c in system.findall("ssd:Connections/ssd:Connection", NS):
            a, p = c.get("startElement"), c.get("startConnector")
            b, q = c.get("endElement"), c.get("endConnector")
            text = f"{a}.{p} -> {b}.{q}"
            if a is None or b is None:
                raise SSPError(f"{path.name}: connection {text}: connections to the system's own "
                               "connectors are not supported")
            for element in (a, b):
                if element not in diagram.blocks:
                    close = difflib.get_close_matches(element, names, n=3)
                    raise SSPError(f"{path.name}: connection {text} names the unknown component "
                                   f"{element!r} (components: {', '.join(names) or 'none'}"
                                   + (f"; did you mean {', '.join(close)}?" if close else "") + ")")
            if len(c):
                extra = [child.tag.split("}", 1)[-1] for child in c]
                if any(t not in ("ConnectionGeometry", "Annotations") for t in extra):
                    raise SSPError(f"{path.name}: connection {text}: {extra} (transformations) are "
                                   "not supported")
            try:
                diagram.connect(f"{a}.{p}", f"{b}.{q}")
            except DiagramError as exc:
                raise SSPError(f"{path.name}: connection {text}: {exc}") from exc
    return diagram


# -- running in fmpy --------------------------------------------------------------------------------


def fmpy_parameter_set(path):
    """The parameter bindings of the SSP file ``path`` as an fmpy ``ParameterSet`` with
    hierarchical names (``<component>.<variable>``), the form ``fmpy.ssp.simulate_ssp`` applies."""
    from fmpy.ssp.ssd import Parameter, ParameterSet

    path = pathlib.Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            root = ET.fromstring(zf.read("SystemStructure.ssd"))
            pset = ParameterSet(name="bindings")
            for comp in root.findall("ssd:System/ssd:Elements/ssd:Component", NS):
                name = comp.get("name")
                for var, value in _parameter_sets(comp, zf, f"{path}: component {name!r}").items():
                    kind = {bool: "Boolean", int: "Integer", float: "Real"}.get(type(value), "String")
                    pset.parameters.append(Parameter(name=f"{name}.{var}", type=kind,
                                                     value=_value_text(kind, value)))
    except (OSError, zipfile.BadZipFile, KeyError, ET.ParseError) as exc:
        raise SSPError(f"{path}: not a readable SSP file ({exc})") from None
    return pset


def simulate_ssp_fmpy(path, stop_time=None, step_size=None, **kwargs):
    """``fmpy.ssp.simulate_ssp`` of the SSP file ``path`` with its parameter bindings applied
    (see the module docstring) and, by default, the communication step that
    :func:`export_ssp` stored; further keyword arguments go to fmpy."""
    from fmpy.ssp.simulation import simulate_ssp

    pset = fmpy_parameter_set(path)  # also checks that the file is a readable SSP
    if step_size is None:
        with zipfile.ZipFile(path) as zf:
            exp = ET.fromstring(zf.read("SystemStructure.ssd")).find("ssd:DefaultExperiment", NS)
        ann = _annotation(exp, "Diagram") if exp is not None else None
        step_size = float(ann.get("step")) if ann is not None else None
    return simulate_ssp(str(path), stop_time=stop_time, step_size=step_size, parameter_set=pset,
                        **kwargs)
