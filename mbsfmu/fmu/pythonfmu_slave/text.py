"""How the slave of the pythonfmu FMUs writes numbers and FMI types in its messages, and reads
the value references pythonfmu hands over."""


def num(v):
    """A number as Python writes it back exactly (0.05, 1e+300, nan, inf)."""
    try:
        return repr(float(v))
    except (TypeError, ValueError, OverflowError):
        return repr(v)


def vr_of(vr):
    """The value reference the importer passed (pythonfmu hands them over as C ints)."""
    return int(vr) & 0xFFFFFFFF


def a_or_an(type_name):
    """'a Real', 'an Integer'."""
    return f"{'an' if type_name[0] in 'AEIOU' else 'a'} {type_name}"


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)
