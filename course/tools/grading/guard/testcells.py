"""How a test cell is run by the guard: names of the setup cell bound to the genuine objects, and the cell's
variables kept in a function scope while it runs (so the student's code cannot read them from globals)."""

from __future__ import annotations

import ast


class HandleNames(ast.NodeTransformer):
    """`check_close(...)` -> `<handle>.check_close(...)` for every name the setup cell bound that the test
    cell does not bind itself: the test uses the objects captured at start-up, whatever the notebook did."""

    def __init__(self, handle: str, handles: dict):
        self.handle = handle
        self.names = set(handles)
        self.bound: set[str] = set()

    def visit_Module(self, node):
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and not isinstance(inner.ctx, ast.Load):
                self.bound.add(inner.id)
            elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound.add(inner.name)
            elif isinstance(inner, ast.arg):
                self.bound.add(inner.arg)
            elif isinstance(inner, ast.alias):
                self.bound.add((inner.asname or inner.name).split(".")[0])
            elif isinstance(inner, ast.ExceptHandler) and inner.name:
                self.bound.add(inner.name)
        self.names -= self.bound
        return self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.names:
            return ast.copy_location(ast.Attribute(ast.copy_location(ast.Name(self.handle, ast.Load()), node),
                                                   node.id, ast.Load()), node)
        return node


def function_safe(tree: ast.Module) -> bool:
    """Can the cell run as the body of a function with the same meaning? (No global/return/yield/await at
    its top level, and no name read before the cell itself assigns it: that would become UnboundLocalError.)"""
    for node in _top_scope(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal, ast.Return, ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return False
    assigned = {n.id for n in _top_scope(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    assigned |= {(a.asname or a.name).split(".")[0] for n in _top_scope(tree) if isinstance(n, (ast.Import,
                 ast.ImportFrom)) for a in n.names}
    assigned |= {n.name for n in _top_scope(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef,
                                                                    ast.AsyncFunctionDef))}
    stored: set[str] = set()
    for node in _in_order(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                if node.id in assigned and node.id not in stored:
                    return False
            else:
                stored.add(node.id)
        elif isinstance(node, ast.alias):
            stored.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            stored.add(node.name)
    return True


def _top_scope(tree):
    """Nodes of the module's own scope (not inside functions, lambdas, classes or comprehensions)."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
                             ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _in_order(node):
    """Nodes roughly in evaluation order: values before the targets they are assigned to."""
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
        yield from _in_order(node.value) if node.value is not None else ()
        for target in getattr(node, "targets", None) or [node.target]:
            yield from _in_order(target)
        return
    if isinstance(node, ast.AugAssign):
        yield ast.Name(node.target.id, ast.Load()) if isinstance(node.target, ast.Name) else node.target
        yield from _in_order(node.value)
        yield from _in_order(node.target)
        return
    if isinstance(node, (ast.For, ast.AsyncFor)):
        yield from _in_order(node.iter)
        yield from _in_order(node.target)
        for inner in node.body + node.orelse:
            yield from _in_order(inner)
        return
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        for gen in node.generators:  # the comprehension's own variables are its own business
            yield from _in_order(gen.iter)
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        for deco in node.decorator_list:
            yield from _in_order(deco)
        yield node
        return
    if isinstance(node, ast.Lambda):
        return
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _in_order(child)

