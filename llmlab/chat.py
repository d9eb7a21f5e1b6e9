"""Chat templates: how a list of messages becomes the single sequence a model reads.

A chat model never sees "messages". It sees one stream of tokens in which its training put
markers around each turn. The template is the contract between the conversation and those
markers: render it differently from how the model was trained and the model still answers, but
worse (it ignores the system prompt, confuses roles, keeps writing the user's part, or never
stops). Two real styles are implemented here:

``"chatml"`` (role markers, like ChatML, Zephyr or Phi-3)::

    <|bos|><|system|>
    Eres un asistente útil.<|end|>
    <|user|>
    Explica el caché KV.<|end|>
    <|assistant|>
                                    <- add_generation_prompt=True ends here
    Each message is ``<|role|>\\n{content}<|end|>\\n``; ``<|end|>`` closes a turn and is where
    generation stops.

``"inst"`` (like Llama-2)::

    <|bos|>[INST] <<SYS>>
    Eres un asistente útil.
    <</SYS>>

    Explica el caché KV. [/INST] Es una memoria...<|eos|><|bos|>[INST] ¿Y en GQA? [/INST]

    Each user turn is ``<|bos|>[INST] {content} [/INST]`` and each answer `` {content}<|eos|>``.
    There is no system role in this format: the system message is folded into the first user turn
    between ``<<SYS>>`` lines, the Llama-2 way. ``add_generation_prompt`` adds nothing: the closing
    ``[/INST]`` already says "your turn", and generation stops at ``<|eos|>``.

Both styles are also written as Jinja templates in :data:`JINJA_TEMPLATES`, the format Hugging
Face ``apply_chat_template`` uses; the tests prove both renderings are identical.

``"template"`` is a published model's own template, the Jinja source its tokenizer carries
(``tokenizer.chat_template``, a :class:`llmlab.chat_template.ChatTemplate`; SmolLM2's is ChatML
with ``<|im_start|>``/``<|im_end|>``). Pass the tokenizer to :func:`render_chat` and
:func:`render_pieces`; :func:`stop_ids` gives the ids that end an answer in any style.

Security: :func:`encode_chat` turns the template's markers into special ids but encodes every
message's content as plain text, so a user who types ``<|assistant|>`` cannot fake a turn.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

__all__ = [
    "JINJA_TEMPLATES",
    "Piece",
    "ROLES",
    "STOP_TOKENS",
    "STYLES",
    "encode_chat",
    "render_chat",
    "render_plain",
    "render_pieces",
    "stop_ids",
    "validate_messages",
    "wrong_template_variants",
]

ROLES = ("system", "user", "assistant")
STYLES = ("chatml", "inst")
# The tokens that end the model's answer in each style (what generation should stop on).
STOP_TOKENS = {"chatml": ("<|end|>", "<|eos|>"), "inst": ("<|eos|>",)}
_ALIASES = {"A": "chatml", "B": "inst"}  # the inference guide calls them template A and template B
TEMPLATE = "template"  # the tokenizer's own Jinja template (a published model's)


class Piece(NamedTuple):
    """One piece of a rendered chat."""

    text: str
    special: bool  # a control marker, encoded as one special id
    answer: bool  # part of an assistant answer (what supervised fine-tuning trains on)


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------
def validate_messages(messages, add_generation_prompt: bool = False) -> list[dict[str, str]]:
    """Check a conversation and return it as a list of ``{"role", "content"}`` dicts.

    Rules: at least one user message; an optional system message, only first; then user and
    assistant strictly alternate, starting with the user. With ``add_generation_prompt=True`` the
    last message must be the user's (the model is about to answer it).
    """
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Iterable):
        raise TypeError(f"messages must be a list of {{'role', 'content'}} dicts, got {type(messages).__name__}")
    messages = list(messages)
    if not messages:
        raise ValueError("messages is empty: a conversation needs at least one user message")
    clean = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise TypeError(f"messages[{i}] must be a dict with 'role' and 'content', got {type(message).__name__}")
        if "role" not in message or "content" not in message:
            raise ValueError(f"messages[{i}] must have 'role' and 'content' keys, got keys {sorted(message)}")
        role, content = message["role"], message["content"]
        if role not in ROLES:
            raise ValueError(f"messages[{i}] has unknown role {role!r}; expected one of {ROLES}")
        if not isinstance(content, str):
            raise TypeError(f"messages[{i}]['content'] must be a str, got {type(content).__name__}")
        clean.append({"role": role, "content": content})

    first = 1 if clean[0]["role"] == "system" else 0
    for i, message in enumerate(clean):
        if message["role"] == "system" and i > 0:
            raise ValueError(f"messages[{i}] is a system message; only the first message may be a system message")
        if i >= first:
            expected = "user" if (i - first) % 2 == 0 else "assistant"
            if message["role"] != expected:
                raise ValueError(
                    f"messages[{i}] is {message['role']!r} but {expected!r} was expected: after the optional "
                    "system message, turns must alternate user, assistant, user, ..."
                )
    if len(clean) == first:
        raise ValueError("the conversation has a system message but no user message")
    if add_generation_prompt and clean[-1]["role"] != "user":
        raise ValueError(
            "add_generation_prompt=True asks the model for a new answer, so the last message must be "
            f"from the user, not {clean[-1]['role']!r}"
        )
    return clean


def _check_style(style: str) -> str:
    style = _ALIASES.get(style, style)
    if style not in STYLES and style != TEMPLATE:
        raise ValueError(f"unknown chat style {style!r}; expected one of {STYLES}, 'template' (the tokenizer's own) or 'A'/'B' as in the guide")
    return style


# ---------------------------------------------------------------------------------------------
# The two templates, as lists of pieces
# ---------------------------------------------------------------------------------------------
def _marker(text: str, answer: bool = False) -> Piece:
    return Piece(text, True, answer)


def _text(text: str, answer: bool = False) -> Piece:
    return Piece(text, False, answer)


def _render_chatml(messages: list[dict], add_generation_prompt: bool) -> list[Piece]:
    pieces = [_marker("<|bos|>")]
    for m in messages:
        answer = m["role"] == "assistant"
        pieces += [_marker(f"<|{m['role']}|>"), _text("\n")]
        pieces += [_text(m["content"], answer), _marker("<|end|>", answer)]  # the model learns to close its turn
        pieces += [_text("\n")]
    if add_generation_prompt:
        pieces += [_marker("<|assistant|>"), _text("\n")]
    return pieces


def _render_inst(messages: list[dict], add_generation_prompt: bool) -> list[Piece]:
    system = messages[0]["content"] if messages[0]["role"] == "system" else None
    turns = messages[1:] if system is not None else messages
    pieces = []
    for i, m in enumerate(turns):
        if m["role"] == "user":
            pieces += [_marker("<|bos|>"), _marker("[INST]"), _text(" ")]
            if i == 0 and system is not None:
                pieces += [_text("<<SYS>>\n"), _text(system), _text("\n<</SYS>>\n\n")]
            pieces += [_text(m["content"]), _text(" "), _marker("[/INST]")]
        else:
            pieces += [_text(" " + m["content"], answer=True), _marker("<|eos|>", answer=True)]
    # add_generation_prompt: nothing to add, "[/INST]" already opens the assistant's turn.
    return pieces


_RENDERERS = {"chatml": _render_chatml, "inst": _render_inst}


def _own_template(tokenizer):
    template = getattr(tokenizer, "chat_template", None)
    if template is None:
        raise ValueError("style 'template' needs the tokenizer of a model that ships a chat template "
                         "(tokenizer.chat_template), e.g. pretrained.load('smollm2-135m-instruct')")
    return template


def render_pieces(messages, style: str = "chatml", add_generation_prompt: bool = False, *, tokenizer=None) -> list[Piece]:
    """The rendered chat as :class:`Piece` s (text, is it a marker, is it part of an answer).

    ``tokenizer`` is needed only for ``style="template"`` (its own chat template is rendered).
    """
    style = _check_style(style)
    if style == TEMPLATE:
        return _own_template(tokenizer).pieces(messages, add_generation_prompt)
    messages = validate_messages(messages, add_generation_prompt)
    return _RENDERERS[style](messages, add_generation_prompt)


def render_chat(messages, style: str = "chatml", add_generation_prompt: bool = False, *, tokenizer=None) -> str:
    """Render a conversation as the string the model reads (like HF ``apply_chat_template(tokenize=False)``).

    ``add_generation_prompt=True`` ends the string with the cue that opens the assistant's turn;
    use it when asking the model for an answer, not when building training examples.
    """
    return "".join(p.text for p in render_pieces(messages, style, add_generation_prompt, tokenizer=tokenizer))


def stop_ids(style: str, tokenizer) -> list[int]:
    """The token ids that end the assistant's answer in ``style`` (where generation should stop)."""
    style = _check_style(style)
    names = _own_template(tokenizer).stop_tokens if style == TEMPLATE else STOP_TOKENS[style]
    return [tokenizer.special_tokens[t] for t in names]


def encode_chat(
    messages,
    tokenizer,
    style: str = "chatml",
    add_generation_prompt: bool = False,
    return_assistant_mask: bool = False,
):
    """Render and tokenize a conversation safely: markers become special ids, content stays text.

    ``tokenizer`` is a :class:`llmlab.tokenizer.BPETokenizer` (anything with ``special_tokens``,
    ``encode`` and ``token_bytes`` works) that has the style's markers as special tokens.

    Consecutive text pieces are encoded together, exactly as tokenizing the rendered string
    would, so the ids equal HF's ``apply_chat_template(..., sanitize_control_tokens=True)``.
    No BOS is added on top of the template's own (a doubled BOS is a classic bug).

    With ``return_assistant_mask=True`` it returns ``(ids, mask)``: ``mask[i] == 1`` for the
    tokens of assistant answers and their closing marker, the tokens a fine-tuning loss is
    computed on.
    """
    pieces = render_pieces(messages, style, add_generation_prompt, tokenizer=tokenizer)
    missing = sorted({p.text for p in pieces if p.special} - set(tokenizer.special_tokens))
    if missing:
        raise ValueError(f"the tokenizer has no special tokens {missing}, which the {style!r} template needs")

    ids: list[int] = []
    mask: list[int] = []
    run: list[Piece] = []  # consecutive text pieces, encoded as one string

    def flush() -> None:
        text = "".join(p.text for p in run)
        run_ids = tokenizer.encode(text)  # no special tokens allowed inside text
        # Which bytes of the run belong to an answer; a token is an answer token if it overlaps them.
        answer_bytes, pos = [], 0
        for p in run:
            n = len(p.text.encode("utf-8"))
            if p.answer:
                answer_bytes.append((pos, pos + n))
            pos += n
        pos = 0
        for token_id in run_ids:
            end = pos + len(tokenizer.token_bytes(token_id))
            mask.append(int(any(start < end and pos < stop for start, stop in answer_bytes)))
            pos = end
        ids.extend(run_ids)
        run.clear()

    for p in pieces:
        if p.special:
            flush()
            ids.append(tokenizer.special_tokens[p.text])
            mask.append(int(p.answer))
        else:
            run.append(p)
    flush()
    return (ids, mask) if return_assistant_mask else ids


# ---------------------------------------------------------------------------------------------
# The same templates in Jinja, the language of HF ``tokenizer.chat_template``
# ---------------------------------------------------------------------------------------------
# `raise_exception` and `{% generation %}` (which marks the answer tokens for
# `return_assistant_tokens_mask`) are provided by transformers, not by plain jinja2.
_JINJA_VALIDATION = r"""
{%- if messages | length == 0 -%}
    {{- raise_exception('messages is empty') -}}
{%- endif -%}
{%- set first = 1 if messages[0]['role'] == 'system' else 0 -%}
{%- for message in messages -%}
    {%- if message['role'] not in ['system', 'user', 'assistant'] -%}
        {{- raise_exception('unknown role: ' + message['role']) -}}
    {%- elif message['role'] == 'system' and not loop.first -%}
        {{- raise_exception('only the first message may be a system message') -}}
    {%- elif message['role'] != 'system' and (message['role'] == 'user') != ((loop.index0 - first) % 2 == 0) -%}
        {{- raise_exception('turns must alternate user, assistant, user, ...') -}}
    {%- endif -%}
{%- endfor -%}
{%- if messages | length == first -%}
    {{- raise_exception('the conversation has no user message') -}}
{%- endif -%}
{%- if add_generation_prompt and messages[-1]['role'] != 'user' -%}
    {{- raise_exception('add_generation_prompt needs the last message to be from the user') -}}
{%- endif -%}
"""

JINJA_TEMPLATES = {
    "chatml": _JINJA_VALIDATION
    + r"""
{{- bos_token -}}
{%- for message in messages -%}
    {%- if message['role'] == 'system' -%}
        {{- '<|system|>\n' + message['content'] + '<|end|>\n' -}}
    {%- elif message['role'] == 'user' -%}
        {{- '<|user|>\n' + message['content'] + '<|end|>\n' -}}
    {%- else -%}
        {{- '<|assistant|>\n' -}}
        {%- generation -%}{{- message['content'] + '<|end|>' -}}{%- endgeneration -%}
        {{- '\n' -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|assistant|>\n' -}}
{%- endif -%}
""",
    "inst": _JINJA_VALIDATION
    + r"""
{%- if messages[0]['role'] == 'system' -%}
    {%- set system = messages[0]['content'] -%}
    {%- set turns = messages[1:] -%}
{%- else -%}
    {%- set system = none -%}
    {%- set turns = messages -%}
{%- endif -%}
{%- for message in turns -%}
    {%- if message['role'] == 'user' -%}
        {%- if loop.first and system is not none -%}
            {%- set content = '<<SYS>>\n' + system + '\n<</SYS>>\n\n' + message['content'] -%}
        {%- else -%}
            {%- set content = message['content'] -%}
        {%- endif -%}
        {{- bos_token + '[INST] ' + content + ' [/INST]' -}}
    {%- else -%}
        {%- generation -%}{{- ' ' + message['content'] + eos_token -}}{%- endgeneration -%}
    {%- endif -%}
{%- endfor -%}
""",
}


# ---------------------------------------------------------------------------------------------
# Getting it wrong on purpose (inference guide: "plantillas de chat", wrong-template symptoms)
# ---------------------------------------------------------------------------------------------
def render_plain(messages) -> str:
    """The conversation with no template at all: the contents, one per line.

    This is what a model receives when a chat is sent to it as raw text: no roles, no turn
    boundaries, no cue that it should answer. A base model just continues the text.
    """
    return "\n".join(m["content"] for m in validate_messages(messages))


def wrong_template_variants(messages, tokenizer, style: str = "chatml") -> list[dict]:
    """The same conversation, asking for an answer, rendered right and in four wrong ways.

    Returns one dict per variant with ``name``, ``note`` (a Spanish sentence for the lab),
    ``text`` (what the model would read, markers included) and ``ids``. ``style`` is the
    template the model was trained with.
    """
    style = _check_style(style)
    other = "inst" if style == "chatml" else "chatml"
    right = encode_chat(messages, tokenizer, style, add_generation_prompt=True)
    rendered = render_chat(messages, style, add_generation_prompt=True)
    plain = render_plain(messages)
    bos = tokenizer.special_tokens.get("<|bos|>")
    variants = [
        ("right", "Plantilla correcta: la misma con la que se entrenó el modelo.", rendered, right),
        (
            "no_template",
            "Sin plantilla: el modelo ve texto suelto, sin roles ni turno del asistente; "
            "un modelo base se limita a continuarlo.",
            plain,
            tokenizer.encode(plain),
        ),
        (
            "other_template",
            f"Plantilla de otra familia ({other}): marcadores que el modelo no vio al entrenarse.",
            render_chat(messages, other, add_generation_prompt=True),
            encode_chat(messages, tokenizer, other, add_generation_prompt=True),
        ),
        (
            "markers_as_text",
            "Marcadores tokenizados como texto normal: '<|user|>' se parte en trozos "
            "y deja de ser una señal de control.",
            rendered,
            tokenizer.encode(rendered),
        ),
    ]
    if bos is not None and right[:1] == [bos]:
        variants.append(
            (
                "double_bos",
                "BOS duplicado: la plantilla ya pone <|bos|> y el código lo añade otra vez.",
                "<|bos|>" + rendered,
                [bos] + right,
            )
        )
    return [{"name": n, "note": note, "text": text, "ids": ids} for n, note, text, ids in variants]
