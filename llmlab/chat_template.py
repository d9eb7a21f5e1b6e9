"""A published model's own chat template (the Jinja text in ``tokenizer.chat_template``), rendered by llmlab.

:mod:`llmlab.chat` writes the course's two templates in Python. A real model ships its template as
Jinja source inside its files (GGUF key ``tokenizer.chat_template``); SmolLM2's, for instance,
adds a default system prompt when the conversation has none and wraps each turn as
``<|im_start|>role\\n...<|im_end|>\\n``. This module runs that source with a sandboxed Jinja2
environment set up as Hugging Face's ``apply_chat_template`` sets up its own (``trim_blocks``,
``lstrip_blocks``, ``raise_exception``, ``loop controls``), so the rendered text is the same.

Rendering to text is not enough to encode safely: if a user writes ``<|im_end|>`` in a message,
tokenizing the rendered string would turn it into a real end-of-turn marker. So
:meth:`ChatTemplate.pieces` renders the template once more with each message's content replaced by
a placeholder, and cuts the result into the template's own text (where control tokens are
markers) and the contents (always plain text). :func:`llmlab.chat.encode_chat` encodes those
pieces; the ids equal tokenizing the rendered string whenever no content contains a control
token, and never let content become a marker.
"""

from __future__ import annotations

import re

__all__ = ["ChatTemplate"]

_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use characters around a placeholder's number


def _environment():
    try:
        import jinja2
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("rendering a model's chat template needs jinja2: pip install jinja2") from err

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.globals["raise_exception"] = raise_exception
    return env


class ChatTemplate:
    """The Jinja chat template ``source`` of a model whose tokenizer is ``tokenizer``.

    ``tokenizer`` provides ``special_tokens`` (text -> id) and the ids named ``bos_token`` and
    ``eos_token`` inside the template (its ``file_ids``, as a GGUF tokenizer has).
    """

    def __init__(self, source: str, tokenizer):
        if not isinstance(source, str) or not source.strip():
            raise ValueError("a chat template must be a non-empty Jinja string")
        self.source = source
        self.tokenizer = tokenizer
        try:
            self._template = _environment().from_string(source)
        except Exception as err:  # jinja2.TemplateSyntaxError, named without importing jinja2 here
            raise ValueError(f"the chat template is not valid Jinja: {err}") from None
        ids = getattr(tokenizer, "file_ids", {})
        self.bos_token = self._text_of(ids.get("bos"))
        self.eos_token = self._text_of(ids.get("eos"))

    def _text_of(self, token_id):
        return None if token_id is None else self.tokenizer.id_to_token(token_id)

    @property
    def stop_tokens(self) -> tuple[str, ...]:
        """The control tokens that end the assistant's turn: the file's EOS."""
        return () if self.eos_token is None else (self.eos_token,)

    def render(self, messages, add_generation_prompt: bool = False) -> str:
        """The conversation as the text the model reads (HF ``apply_chat_template(..., tokenize=False)``)."""
        from .chat import validate_messages

        return self._render(validate_messages(messages, add_generation_prompt), add_generation_prompt)

    def _render(self, messages: list[dict], add_generation_prompt: bool) -> str:
        return self._template.render(messages=messages, add_generation_prompt=add_generation_prompt,
                                     bos_token=self.bos_token or "", eos_token=self.eos_token or "")

    def pieces(self, messages, add_generation_prompt: bool = False):
        """The rendered conversation as :class:`llmlab.chat.Piece` s: markers, template text, contents."""
        from .chat import Piece, validate_messages

        messages = validate_messages(messages, add_generation_prompt)
        for i, m in enumerate(messages):
            if _OPEN in m["content"] or _CLOSE in m["content"]:
                raise ValueError(f"messages[{i}] contains the private-use characters U+E000/U+E001, reserved by llmlab")
        masked = [{"role": m["role"], "content": f"{_OPEN}{i}{_CLOSE}"} for i, m in enumerate(messages)]
        rendered = self._render(masked, add_generation_prompt)
        specials = sorted(self.tokenizer.special_tokens, key=len, reverse=True)
        marker = re.compile("|".join(map(re.escape, specials))) if specials else None
        out = []
        for n, part in enumerate(re.split(f"{_OPEN}(\\d+){_CLOSE}", rendered)):
            if n % 2:  # a placeholder: the message's content, always plain text
                m = messages[int(part)]
                out.append(Piece(m["content"], False, m["role"] == "assistant"))
                continue
            pos = 0
            for match in marker.finditer(part) if marker else ():
                if match.start() > pos:
                    out.append(Piece(part[pos:match.start()], False, False))
                out.append(Piece(match.group(), True, False))
                pos = match.end()
            if pos < len(part):
                out.append(Piece(part[pos:], False, False))
        if "".join(p.text for p in out) != self._render(messages, add_generation_prompt):
            raise ValueError("the chat template changes the messages' content (trims or edits it), so llmlab "
                             "cannot keep the content apart from the template's markers")
        _mark_answer_closers(out)
        return out


def _mark_answer_closers(pieces) -> None:
    """The marker right after an assistant's content closes the answer: part of what it learns to write."""
    from .chat import Piece

    for i in range(1, len(pieces)):
        prev, cur = pieces[i - 1], pieces[i]
        if cur.special and prev.answer and not prev.special:
            pieces[i] = Piece(cur.text, True, True)
