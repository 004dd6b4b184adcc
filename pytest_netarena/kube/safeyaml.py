"""Loading untrusted YAML within bounds: depth, expanded size (alias bombs) and bytes, or ValueError."""

from __future__ import annotations

#: the deepest nesting accepted (Kubernetes objects are far shallower)
MAX_DEPTH = 64
#: the most nodes a document may expand to once aliases are followed ("billion laughs")
MAX_NODES = 200_000


def load_all(raw: bytes | str, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> list:
    """The documents of raw (None documents dropped); ValueError names what was too deep, big or broken."""
    import yaml

    loader = yaml.SafeLoader(raw)
    try:
        try:  # composed once: measured as nodes, then built from the same nodes
            nodes = []
            while loader.check_node():
                nodes.append(loader.get_node())
        except RecursionError:
            raise ValueError(f"the YAML is nested too deeply (more than {max_depth} levels)") from None
        except yaml.YAMLError as error:
            raise ValueError(f"the YAML cannot be read: {error}".replace("\n", " ")) from None
        sizes: dict[int, int] = {}
        for node in nodes:
            _measure(node, 1, max_depth, max_nodes, sizes)
        try:
            documents = [loader.construct_document(node) for node in nodes]
        except (yaml.YAMLError, RecursionError) as error:
            raise ValueError(f"the YAML cannot be read: {error}".replace("\n", " ")) from None
        return [document for document in documents if document is not None]
    finally:
        loader.dispose()


def _measure(node, depth: int, max_depth: int, max_nodes: int, sizes: dict[int, int]) -> int:
    """Nodes under node once aliases are expanded (memoised: shared nodes are counted, not walked, again)."""
    import yaml

    if depth > max_depth:
        raise ValueError(f"the YAML is nested too deeply (more than {max_depth} levels)")
    known = sizes.get(id(node))
    if known == -1:
        raise ValueError("the YAML holds a recursive alias (a value that contains itself)")
    if known is not None:
        return known
    sizes[id(node)] = -1  # being measured
    total = 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            total += _measure(key, depth + 1, max_depth, max_nodes, sizes)
            total += _measure(value, depth + 1, max_depth, max_nodes, sizes)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            total += _measure(item, depth + 1, max_depth, max_nodes, sizes)
    if total > max_nodes:
        raise ValueError(f"the YAML expands to more than {max_nodes} values (aliases repeated too often)")
    sizes[id(node)] = total
    return total
