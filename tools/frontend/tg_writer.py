"""Writes tg programs as text in tg's custom form: one `func.func` at a time, its arguments (with
optional argument attributes) and its ops in order. The example generator (examples/generate.py)
and `spatial-import` both write their programs with it."""

from __future__ import annotations


class Writer:
    """One func.func body; `arg` and `op` return the new SSA name."""

    def __init__(self) -> None:
        self.args: list[tuple[str, str, str]] = []
        self.lines: list[str] = []

    def arg(self, name: str, t: str, attrs: str = "") -> str:
        self.args.append((name, t, attrs))
        return f"%{name}"

    def shared_arg(self, name: str, t: str) -> str:
        """An argument every layer of the function reads (rope tables, the position): once."""
        return f"%{name}" if any(n == name for n, _, _ in self.args) else self.arg(name, t)

    def op(self, result: str, text: str) -> str:
        self.lines.append(f"  %{result} = {text}")
        return f"%{result}"

    def ops(self, results: list[str], text: str) -> list[str]:
        """An op of several results (an output and a carried state): their SSA names."""
        names = [f"%{r}" for r in results]
        self.lines.append(f"  {', '.join(names)} = {text}")
        return names

    def func(self, name: str, results: list[tuple[str, str]]) -> str:
        args = ",\n    ".join(f"%{n}: {t}" + (f" {{{a}}}" if a else "") for n, t, a in self.args)
        types = ", ".join(t for _, t in results)
        values = ", ".join(v for v, _ in results)
        body = "\n".join(self.lines)
        return (
            f"func.func @{name}(\n    {args}) -> ({types}) {{\n{body}\n"
            f"  func.return {values} : {types}\n}}\n"
        )


def tensor(*shape: int, elt: str = "bf16") -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{elt}>"
