"""spatial-generate on tiny GGUF checkpoints, and the chain facts spatial-import states for it.

The generated tokens are checked against a computation that shares nothing with the loop: the
reference semantics of a prefill of the whole sequence so far, imported on its own at position 0
(no cache carried, no decode, no rope table refilled), whose last token must be the next one
generated. Under --dtype f32 the two paths round alike up to f32 sums in another order, and the
seeds below leave no near tie among the chosen tokens."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gguf")

sys.path.insert(0, str(Path(__file__).parent))
from tiny_gguf import Tiny, write_gguf  # noqa: E402

from spatial_dialect.passes.pipeline import default_context  # noqa: E402
from spatial_dialect.tools.frontend.diagnostics import parse_source  # noqa: E402
from spatial_dialect.tools.interpreters.reference import evaluate  # noqa: E402
from spatial_dialect.tools.spatial_generate import main  # noqa: E402
from spatial_dialect.tools.spatial_import import import_checkpoint  # noqa: E402

PROMPT = [5, 17, 99]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("generate")
    return {
        "llama": write_gguf(d / "llama.gguf", Tiny("llama", "F16")),
        "qwen3": write_gguf(d / "qwen3.gguf", Tiny("qwen3", "Q8_0", tied=True, seed=1)),
    }


def run(capsys, *argv) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


def generated(capsys, *argv) -> list[int]:
    status, out, err = run(capsys, *argv, "--json")
    assert status == 0, err
    result = json.loads(out)  # one object, nothing else on stdout
    assert set(result) == {"tokens", "text"} and result["text"] is None  # no tokenizer
    return result["tokens"]


def recomputed(path: Path, prompt: list[int], n: int) -> list[int]:
    """n greedy tokens, each from a prefill of the whole sequence so far (reference semantics,
    f32, position 0, empty caches): no state carried between steps."""
    from spatial_dialect.tools.frontend.weights import checkpoint_inputs

    ids = list(prompt)
    for _ in range(n):
        text = import_checkpoint(str(path), "prefill", tokens=len(ids), cache=64, dtype="f32")
        fn = next(iter(parse_source(default_context(), text, "prefill").ops))
        inputs = {"ids": np.array(ids, np.int32), "pos": np.zeros(1, np.int32)}
        for arg in fn.body.block.args:
            if arg.name_hint.endswith("_cache"):
                inputs[arg.name_hint] = np.zeros((64, arg.type.get_shape()[1]), np.float32)
        inputs.update(checkpoint_inputs(str(path), fn, inputs))
        ids.append(int(evaluate(fn, inputs)[0][-1]))
    return ids[len(prompt) :]


@pytest.mark.parametrize("arch", ["llama", "qwen3"])
def test_the_reference_generation_is_a_prefill_of_everything_so_far(capsys, models, arch):
    ids = ",".join(map(str, PROMPT))
    tokens = generated(
        capsys, models[arch], "--ids", ids, "-n", 6, "--backend", "reference", "--dtype", "f32"
    )
    assert tokens == recomputed(models[arch], PROMPT, 6)


@pytest.mark.parametrize("target", ["wormhole_n150", "h100"])
@pytest.mark.parametrize("arch", ["llama", "qwen3"])
def test_the_simulated_generation_is_the_reference_one(capsys, models, arch, target):
    ids = ",".join(map(str, PROMPT))
    common = [models[arch], "--ids", ids, "-n", 4, "--dtype", "f32"]
    simulated = generated(capsys, *common, "--target", target)
    assert simulated == generated(capsys, *common, "--backend", "reference")


@pytest.mark.parametrize(
    "target, backend", [("wormhole_n150", "tt-lang-sim"), ("h100", "triton-interpret")]
)
def test_the_vendors_executors_generate_the_same(capsys, models, target, backend):
    """The programs we print, run by Tenstorrent's simulator and Triton's interpreter, one step
    after the prefill each (they are slow on CPUs)."""
    common = [models["llama"], "--ids", "5,17,99", "-n", 2, "--dtype", "f32"]
    tokens = generated(capsys, *common, "--target", target, "--backend", backend)
    assert tokens == generated(capsys, *common, "--backend", "reference")


def test_a_weights_chain_is_a_generation(models, tmp_path, capsys):
    """spatial-run --chain --weights: the prefill at position 0 from zero caches, the decode at
    the row after it on the prefill's last token; the caches hold those rows and nothing else."""
    from spatial_dialect.tools.spatial_run import main as run_main

    path = tmp_path / "both.mlir"
    path.write_text(import_checkpoint(str(models["llama"]), "both", tokens=3, cache=32))
    saved = tmp_path / "run.npz"
    chain = ["--chain", "llama_prefill,llama_decode", "--weights", str(models["llama"])]
    status = run_main([str(path), "--target", "h100", *chain, "--save", str(saved)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "@llama_prefill, 28 input(s) from file, 1 drawn with seed 0, 0 fed and 0 shared" in out
    assert "from zero state at position 0" in out
    assert "@llama_decode, 2 input(s) from file, 0 drawn with seed 0, 5 fed and 21 shared" in out
    assert "at the row after the previous entry's" in out
    with np.load(saved) as run_:
        assert run_["prefill.pos"].tolist() == [0] and run_["decode.pos"].tolist() == [3]
        cache = run_["reference/llama_decode/l0_k_cache"]
        assert np.all(cache[:4] != 0, axis=1).all() and not cache[4:].any()
        # the decode's cache row 3 is the prefill's last token's key at position 3
        ids = [*run_["prefill.ids"].tolist(), int(run_["reference/llama_prefill/token"][-1])]
        assert "decode.ids" not in run_.files  # fed, not an input of the chain
    ref = import_checkpoint(str(models["llama"]), "prefill", tokens=4, cache=32)
    fn = next(iter(parse_source(default_context(), ref, "prefill").ops))
    inputs = {"ids": np.array(ids, np.int32), "pos": np.zeros(1, np.int32)}
    for arg in fn.body.block.args:
        if arg.name_hint.endswith("_cache"):
            inputs[arg.name_hint] = np.zeros((32, 64), np.float16)
    from spatial_dialect.tools.frontend.weights import checkpoint_inputs

    inputs.update(checkpoint_inputs(str(models["llama"]), fn, inputs))
    whole = evaluate(fn, inputs)[1]  # l0_k_cache of one prefill of the four tokens
    np.testing.assert_allclose(cache[3], whole[3], rtol=2e-2, atol=2e-2)


def test_a_drawn_chain_places_the_decode_after_the_prefill(models, tmp_path, capsys):
    """Without --weights the prefill's position is drawn, in the range where the decode after it
    still fits the cache, and the decode sits at the row after it."""
    from spatial_dialect.tools.spatial_run import main as run_main

    path = tmp_path / "both.mlir"
    path.write_text(import_checkpoint(str(models["llama"]), "both", tokens=8, cache=32))
    for seed in range(6):
        saved = tmp_path / f"run{seed}.npz"
        chain = ["--chain", "llama_prefill,llama_decode", "--reference-only"]
        assert run_main([str(path), *chain, "--seed", str(seed), "--save", str(saved)]) == 0
        with np.load(saved) as run_:
            pos = int(run_["prefill.pos"][0])
            assert 0 <= pos <= 32 - 8 - 1 and run_["decode.pos"].tolist() == [pos + 8]
    capsys.readouterr()


def test_the_text_output(capsys, models):
    status, out, _ = run(capsys, models["llama"], "--ids", "1,2", "-n", 3, "--backend", "reference")
    lines = out.splitlines()
    assert status == 0
    assert lines[0].startswith(
        "spatial-generate: 2 prompt token(s), 3 to generate on the reference"
    )
    assert [line.split()[2] for line in lines[1:4]] == ["@llama_prefill", *["@llama_decode"] * 2]
    assert lines[4].startswith("generated 3 token(s)")
    assert lines[5] == " ".join(line.split()[4] for line in lines[1:4])  # no tokenizer: the ids


def test_progress_goes_to_stderr_when_asked(capsys, models):
    argv = ["--ids", "1,2", "-n", 3, "--backend", "reference"]
    status, out, err = run(capsys, models["llama"], *argv, "--progress")
    assert status == 0 and "[" not in out
    assert err.split("\r")[1:] == [
        "[" + "#" * 10 + "." * 20 + "] 1/3",
        "[" + "#" * 20 + "." * 10 + "] 2/3",
        "[" + "#" * 30 + "] 3/3\n",
    ]
    status, out, err = run(capsys, models["llama"], *argv)
    assert status == 0 and err == ""  # not a terminal, not asked


@pytest.mark.parametrize(
    "argv, says, code",
    [
        (["--ids", "1,x"], "'1,x' is not a list of token ids", 2),
        (["--ids", "-3"], "a token id is not negative", 2),
        (["--ids", "1", "-n", "0"], "-n 0: generate at least one token", 1),
        (["--ids", "1", "-n", "-2"], "-n -2: generate at least one token", 1),
        (["--ids", "300"], "token id 300 is outside the vocabulary of 256", 1),
        (["--ids", "1", "-n", "600"], "over the model's context_length 512", 1),
        (["--ids", "1", "--backend", "nope"], "invalid choice: 'nope'", 2),
        (["--prompt", "hello"], "carries no tokenizer: give the prompt as --ids", 1),
        (["--ids", "1", "--target", "nope"], "unknown target 'nope'", 1),
    ],
)
def test_bad_input_is_one_line(capsys, models, argv, says, code):
    target = [] if "--target" in argv else ["--target", "h100"]
    status, out, err = run(capsys, models["llama"], *target, "-n", "2", *argv)
    assert status == code
    assert says in err and len([line for line in err.splitlines() if "error" in line]) == 1
    assert "compiled" not in out  # refused before anything was compiled or run


# ── The tokenizer of a GGUF file, as llama.cpp's converter writes it ────────────────────────


@pytest.fixture(scope="module")
def with_tokenizer(tmp_path_factory):
    """(a tiny llama GGUF carrying the byte-level BPE tokenizer test/oracle/checkpoints.py trains,
    as llama.cpp's converter writes one; that tokenizer.json)."""
    pytest.importorskip("tokenizers")
    sys.path.insert(0, str(Path(__file__).parents[1] / "oracle"))
    from checkpoints import VOCAB, train_tokenizer

    d = tmp_path_factory.mktemp("tokenizer")
    train_tokenizer(d)
    spec = json.loads((d / "tokenizer.json").read_text())["model"]
    vocab = sorted(spec["vocab"], key=spec["vocab"].get)
    vocab += [f"<pad{i}>" for i in range(VOCAB - len(vocab))]
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["merges"]]
    special = (spec["vocab"]["<|endoftext|>"],)
    tiny = Tiny(
        "llama",
        vocab=VOCAB,
        converter=True,
        tokens=tuple(vocab),
        merges=tuple(merges),
        special=special,
        pre="gpt-2",
    )
    return write_gguf(d / "tok.gguf", tiny), d / "tokenizer.json"


def test_a_gguf_tokenizer_is_the_checkpoints_own(with_tokenizer):
    """A byte-level BPE tokenizer written into a GGUF's tokenizer.ggml.* metadata encodes and
    decodes as the tokenizer.json it came from."""
    import tokenizers
    from checkpoints import CORPUS, PROMPT

    from spatial_dialect.tools.frontend.tokenizer import checkpoint_tokenizer

    path, json_file = with_tokenizer
    hf = tokenizers.Tokenizer.from_file(str(json_file))
    tok = checkpoint_tokenizer(path)
    for text in (PROMPT, CORPUS, "unseen words: Zürich, 1234 ... !<|endoftext|>"):
        assert tok.encode(text).ids == hf.encode(text).ids
        assert tok.decode(tok.encode(text).ids) == hf.decode(hf.encode(text).ids)
    assert tok.decode(tok.encode(PROMPT).ids) == PROMPT


def test_a_prompt_goes_through_the_tokenizer(capsys, with_tokenizer):
    """--prompt: the ids are the tokenizer's encoding (the same generation as --ids of them),
    and the text is the generated ids decoded."""
    import tokenizers
    from checkpoints import PROMPT

    path, json_file = with_tokenizer
    hf = tokenizers.Tokenizer.from_file(str(json_file))
    ids = ",".join(map(str, hf.encode(PROMPT).ids))
    status, out, _ = run(
        capsys, path, "--prompt", PROMPT, "-n", 4, "--backend", "reference", "--json"
    )
    assert status == 0
    result = json.loads(out)
    assert result["text"] == hf.decode(result["tokens"])
    status, out, _ = run(capsys, path, "--ids", ids, "-n", 4, "--backend", "reference", "--json")
    assert json.loads(out) == result
    status, out, _ = run(capsys, path, "--prompt", PROMPT, "-n", 2, "--backend", "reference")
    assert out.splitlines()[-1] == PROMPT + hf.decode(result["tokens"][:2])


def test_a_prompt_longer_than_the_context_is_one_line(capsys, tmp_path):
    path = write_gguf(tmp_path / "short.gguf", Tiny("llama", keys=(("context_length", 8),)))
    status, _, err = run(capsys, path, "--ids", ",".join(["1"] * 9), "-n", 1, "--target", "h100")
    assert status == 1
    assert err == (
        "spatial-generate: error: a prompt of 9 token(s) and 1 generated need 9 positions, "
        "over the model's context_length 8\n"
    )


@pytest.mark.parametrize(
    "tiny, says",
    [
        (Tiny(converter=True), "does not build: Error while initializing BPE"),
        (Tiny(converter=True, pre="falcon"), "tokenizer.ggml.pre 'falcon' is not built"),
    ],
)
def test_a_gguf_tokenizer_not_built_is_named(tmp_path, tiny, says):
    from spatial_dialect.tools.frontend.tokenizer import TokenizerError, checkpoint_tokenizer

    with pytest.raises(TokenizerError, match=says):
        checkpoint_tokenizer(write_gguf(tmp_path / "t.gguf", tiny))


# ── What spatial-import states for a chain ───────────────────────────────────────────────────


def test_both_states_what_feeds_the_decode(models):
    """The decode's ids are the token the prefill chose (chain.fed_by) and its position the row
    after the prefill's (chain.position); the prefill's own inputs carry neither."""
    text = import_checkpoint(str(models["llama"]), "both", tokens=4, cache=32)
    assert '%decode.ids: tensor<1xi32> {chain.fed_by = "token"}' in text
    assert '%decode.pos: tensor<1xi32> {chain.position = "next"}' in text
    assert "%prefill.ids: tensor<4xi32>,\n" in text and "%prefill.pos: tensor<1xi32>,\n" in text


def test_logits_and_the_hidden_state_are_optional_outputs(models):
    text = import_checkpoint(str(models["qwen3"]), "decode", cache=32, extra=("logits", "final"))
    (ret,) = [line for line in text.splitlines() if "func.return" in line]
    assert ret.split(":")[0].split()[1:] == [
        "%token,",
        "%l0_kc,",
        "%l0_vc,",
        "%l1_kc,",
        "%l1_vc,",
        "%logits,",
        "%final",
    ]
    assert "tensor<1x256xbf16>, tensor<1x128xbf16>" in ret
    plain = import_checkpoint(str(models["qwen3"]), "decode", cache=32)
    (ret,) = [line for line in plain.splitlines() if "func.return" in line]
    assert "%logits" not in ret and "%final" not in ret


def test_the_import_command_takes_logits_and_hidden(models, tmp_path):
    from spatial_dialect.tools.spatial_import import main as import_main

    out = tmp_path / "step.mlir"
    argv = [str(models["llama"]), "--step", "prefill", "--tokens", "4", "--cache", "32"]
    assert import_main([*argv, "--hidden", "-o", str(out)]) == 0
    (ret,) = [line for line in out.read_text().splitlines() if "func.return" in line]
    assert ret.split(" : ")[0].endswith("%l1_vc, %final")
    assert import_main([*argv, "--logits", "--hidden", "-o", str(out)]) == 0
    (ret,) = [line for line in out.read_text().splitlines() if "func.return" in line]
    assert ret.split(" : ")[0].endswith("%l1_vc, %logits, %final")
