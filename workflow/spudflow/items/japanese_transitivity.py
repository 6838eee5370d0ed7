"""Japanese transitivity: the transitive and the intransitive verb of a pair in the same context.

The context grammar: zero or one adverbial and zero to two arguments (noun + particle) whose
particles differ, the constituents in any order, then the verb and "。". With 11 nouns (which may
repeat), 3 particles and 3 adverbials this gives

    no argument:    1 + 3                         =     4
    one argument:   33 + 3 adverbials x 33 x 2 orders  =   231
    two arguments:  6 particle orders x 121 noun pairs = 726; + 3 x 726 x 3 adverb slots = 7,260

7,495 contexts per verb pair. A context is `obligatory` (the transitive verb is required) when an
argument carries を or there are two arguments, otherwise `ambiguous`.

Variants: base (the most common pairs), rare (the least common; both by the rarer verb's count,
among pairs with both verbs seen), longer (base pairs with a prefix) and relative (base pairs
with a relative clause before one argument).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pyarrow as pa

from spudflow.core.artifacts import ITEMS_JAPANESE, JAPANESE_NOUNS, JAPANESE_PARTICLES
from spudflow.core.errors import InputError
from spudflow.core.progress import progress
from spudflow.core.sampling import sample_indices
from spudflow.items.japanese_lexicon import VerbPair, ranked, read_lexicon, seen_pairs
from spudflow.items.table import ItemsBuilder, Region

NOUNS = JAPANESE_NOUNS
PARTICLES = JAPANESE_PARTICLES
ADVERBIALS = ("勝手に", "よく", "たぶん")
PREFIX = "美しい天気な日、時々"
RELATIVE_CLAUSES = ("金髪の女が知らなかった", "金髪の女を助けた", "金髪の女が気をつけた")
CONTEXTS_PER_PAIR = 7495
VARIANTS = ("base", "rare", "longer", "relative")



@dataclass(frozen=True)
class Context:
    index: int
    arguments: tuple[tuple[str, str], ...]   # (noun, particle), sentence order
    adverbial: str | None
    adverbial_slot: int | None               # the adverbial comes before argument k (or last)

    @property
    def label(self) -> str:
        obligatory = len(self.arguments) == 2 or any(p == "を" for _, p in self.arguments)
        return "obligatory" if obligatory else "ambiguous"

    @property
    def particles(self) -> str:
        return "".join(p for _, p in self.arguments)

    def parts(self, clause: tuple[int, str] | None = None) -> list[tuple[str, str]]:
        """(role, text) constituents: "argument", "adverbial" and, before argument k of
        `clause = (k, text)`, "relative_clause"."""
        parts = []
        for k, (noun, particle) in enumerate(self.arguments):
            if self.adverbial_slot == k:
                parts.append(("adverbial", self.adverbial))
            if clause is not None and clause[0] == k:
                parts.append(("relative_clause", clause[1]))
            parts.append(("argument", noun + particle))
        if self.adverbial is not None and self.adverbial_slot == len(self.arguments):
            parts.append(("adverbial", self.adverbial))
        return parts

    @property
    def order(self) -> str:
        """Constituent order: each argument by its particle, the adverbial as `adv`."""
        return "-".join("adv" if role == "adverbial" else text[-1] for role, text in self.parts())

    @property
    def text(self) -> str:
        return "".join(text for _, text in self.parts())


def _argument_sequences(n: int):
    if n == 0:
        yield ()
    elif n == 1:
        for particle in PARTICLES:
            for noun in NOUNS:
                yield ((noun, particle),)
    else:
        for p1, p2 in itertools.permutations(PARTICLES, 2):
            for n1 in NOUNS:
                for n2 in NOUNS:
                    yield ((n1, p1), (n2, p2))


@cache
def enumerate_contexts() -> tuple[Context, ...]:
    """Every context of the grammar, in a fixed order (the context_index)."""
    contexts = []
    for n_arguments in (0, 1, 2):
        for adverbial in (None, *ADVERBIALS):
            for arguments in _argument_sequences(n_arguments):
                slots = [None] if adverbial is None else range(n_arguments + 1)
                for slot in slots:
                    contexts.append(Context(len(contexts), arguments, adverbial, slot))
    assert len(contexts) == CONTEXTS_PER_PAIR
    return tuple(contexts)


def select_pairs(pairs: list[VerbPair], variant: str, n_verb_pairs: int,
                 lexicon: str | Path, rank_by: str = "min",
                 min_count: int = 1) -> list[tuple[int, VerbPair]]:
    """(rank, pair) of the variant's pairs: of those seen `min_count` times, the n most common,
    or for `rare` the n least (thesis §4.4.1; japanese_lexicon)."""
    usable = seen_pairs(pairs, min_count)
    if len(usable) < n_verb_pairs:
        raise InputError(lexicon, None, f"{len(usable)} of {len(pairs)} verb pairs have both "
                         f"verbs counted at least {min_count} times, {n_verb_pairs} needed")
    ranking = list(enumerate(ranked(usable, rank_by), start=1))
    return ranking[-n_verb_pairs:] if variant == "rare" else ranking[:n_verb_pairs]


def _add_pair(builder: ItemsBuilder, group: str, place: tuple[int, int], pair: VerbPair,
              context: Context, prefix: str | None, clause: tuple[int, str] | None) -> None:
    """The two items of one pair in one context; `place`: the pair's (frequency rank, number in
    the lexicon)."""
    rank, number = place
    head = prefix or ""
    regions = [Region("prefix", 0, len(prefix))] if prefix else []
    for role, text in context.parts(clause):
        if role == "relative_clause":
            regions.append(Region("relative_clause", len(head), len(head) + len(text)))
        head += text
    # Obligatory contexts need the transitive verb; ambiguous ones take either, so no label.
    obligatory = context.label == "obligatory"
    for form, verb in (("transitive", pair.transitive), ("intransitive", pair.intransitive)):
        label = (1 if form == "transitive" else 0) if obligatory else None
        builder.add(
            f"{group}:{form}", group, head + verb + "。", label,
            regions=[*regions, Region("verb", len(head), len(head) + len(verb))],
            verb_pair=pair.id, pair_rank=rank, pair_number=number, pair_count=pair.count,
            verb_form=form,
            verb=verb, context_index=context.index, context_label=context.label,
            adverbial=context.adverbial, n_arguments=len(context.arguments),
            particles=context.particles, context=context.text, order=context.order,
            arguments=[noun + particle for noun, particle in context.arguments], prefix=prefix,
            relative_clause=None if clause is None else clause[1],
            relative_argument=None if clause is None else clause[0])


def build_japanese_items(lexicon: str | Path, variant: str, dataset: str,
                         n_verb_pairs: int = 50, sample: int | None = None,
                         seed: int = 0, rank_by: str = "min", min_count: int = 1) -> pa.Table:
    """Items of one variant. `sample` pairs (verb pair x context) are drawn, seeded, from the
    n_verb_pairs x 7,495 of base and rare. longer and relative draw from the base pairs whose
    context has an argument (7,491 per verb pair), so with the same (sample, seed) they share
    their pairs: the thesis's counts show its sample had no argument-less context (its relative
    ambiguous pairs are exactly 3x its longer ones: 657 and 219 in Table 3). relative turns each
    drawn pair into one pair per argument and clause."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    pairs = read_lexicon(lexicon)
    chosen = select_pairs(pairs, variant, n_verb_pairs, lexicon, rank_by, min_count)
    # The thesis numbers a pair by its place in its lexicon's list (Kageyama & Jacobsen's
    # 306 pairs and one added): here its place among the lexicon file's pairs.
    numbers = {pair.id: number for number, pair in enumerate(pairs, start=1)}
    contexts = enumerate_contexts()
    builder = ItemsBuilder(dataset, "ja", ITEMS_JAPANESE)
    if variant in ("longer", "relative"):
        contexts = tuple(c for c in contexts if c.arguments)
    drawn = sample_indices(len(chosen) * len(contexts), sample, seed)
    for index in progress(drawn, desc=f"{dataset} pairs", total=len(drawn), unit="pair"):
        rank, pair = chosen[index // len(contexts)]
        context = contexts[index % len(contexts)]
        group = f"{dataset}:{pair.id}:c{context.index}"
        if variant == "relative":
            for k in range(len(context.arguments)):
                for c, clause in enumerate(RELATIVE_CLAUSES):
                    _add_pair(builder, f"{group}:rc{k}.{c}", (rank, numbers[pair.id]), pair,
                              context, None, (k, clause))
        else:
            prefix = PREFIX if variant == "longer" else None
            _add_pair(builder, group, (rank, numbers[pair.id]), pair, context, prefix, None)
    return builder.table()
