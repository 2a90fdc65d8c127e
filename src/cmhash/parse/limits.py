"""Resource bounds (README, "Security and guarantees"): what the parser refuses before
anything downstream could blow up. Kubernetes stores an object in etcd, 1.5 MiB at
most, so no real manifest comes near these."""

from __future__ import annotations

from cmhash.errors import NodeError
from cmhash.parse.tree import ALIAS, SCALAR, SEQ, Node

MAX_DEPTH = 1000  # nested collections
MAX_SCALAR = 8 * 1024 * 1024  # characters in one scalar
MAX_ALIAS_EXPANSION = 1_000_000  # nodes a document would have with its aliases expanded


def check_expansion(root: Node) -> None:
    """Refuse what would explode downstream: kubectl expands aliases (a "billion
    laughs" document turns 1 KB into gigabytes) and cannot encode recursive ones."""
    memo: dict[int, int] = {}
    active: set[int] = set()
    todo: list[tuple[Node, bool]] = [(root, False)]
    while todo:
        node, finish = todo.pop()
        key = id(node)
        if finish:
            active.discard(key)
            if node.kind == ALIAS:
                memo[key] = memo[id(node.value)]
                continue
            children = node.value if node.kind == SEQ else [x for pair in node.value for x in pair]
            total = 1 + sum(memo[id(c)] for c in children)
            if total > MAX_ALIAS_EXPANSION:
                raise NodeError(
                    f"aliases expand this node to more than {MAX_ALIAS_EXPANSION} "
                    "nodes (an alias bomb?)",
                    node.start,
                )
            memo[key] = total
            continue
        if key in memo:
            continue
        if key in active:
            raise NodeError("recursive alias: a node contains itself", node.start)
        if node.kind == SCALAR:
            memo[key] = 1
            continue
        active.add(key)
        todo.append((node, True))
        if node.kind == ALIAS:
            target = node.value
            if id(target) in active:
                raise NodeError(
                    f"recursive alias '*{node.anchor}': a node contains itself",
                    node.start,
                    public="recursive alias: a node contains itself",
                )
            todo.append((target, False))
        else:
            children = node.value if node.kind == SEQ else [x for pair in node.value for x in pair]
            todo.extend((c, False) for c in children)
