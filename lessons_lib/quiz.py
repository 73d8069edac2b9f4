"""Short multiple-choice quizzes, one per lesson, with an explanation for every option.

In a notebook::

    from lessons_lib import quiz
    quiz.show("04")                  # the quiz of notebook 04, as widgets

Each question lists its options as A, B, C, ...; the learner picks a letter and
presses *Check*. A wrong pick gets the explanation of why that option is wrong
(and may try again); a right pick gets why it is right, plus why each other option
is wrong. Without a browser, the same feedback comes back as text::

    q = quiz.Quiz("02")
    q.answer(0, "B")                 # question 1, option B -> feedback text

``QUIZZES[lesson_id]`` holds the questions: lesson ids follow the notebooks of the
same number; "08" and "10" (the review notebook) share the question about judging
an architecture that claims to replace attention. Every question has
exactly one correct option; :class:`Question` refuses anything else.
"""

from __future__ import annotations

import html
import string
from dataclasses import dataclass

from .feedback import FAILED, NOT_ATTEMPTED, PASSED, box_html

__all__ = ["Option", "Question", "Quiz", "QUIZZES", "show"]

LETTERS = string.ascii_uppercase


@dataclass(frozen=True)
class Option:
    """One answer: its text, whether it is correct, and why (or why not)."""

    text: str
    correct: bool
    explanation: str


@dataclass(frozen=True)
class Question:
    """A question with its options; exactly one option is correct.

    ``source`` notes where the question comes from (e.g. the seed lesson's
    "Check Your Understanding" question it rephrases), for maintainers.
    """

    prompt: str
    options: tuple[Option, ...]
    source: str = ""

    def __post_init__(self):
        object.__setattr__(self, "options", tuple(self.options))
        if len(self.options) < 2:
            raise ValueError(f"A question needs at least 2 options; {self.prompt!r} has {len(self.options)}.")
        n_correct = sum(option.correct for option in self.options)
        if n_correct != 1:
            raise ValueError(f"A question needs exactly one correct option; {self.prompt!r} has {n_correct}.")
        for letter, option in zip(LETTERS, self.options):
            if not option.text.strip() or not option.explanation.strip():
                raise ValueError(f"Option {letter} of {self.prompt!r} needs both a text and an explanation.")
        if len({option.text for option in self.options}) != len(self.options):
            raise ValueError(f"Two options of {self.prompt!r} have the same text.")

    @property
    def correct_index(self) -> int:
        return next(i for i, option in enumerate(self.options) if option.correct)

    def index_of(self, choice) -> int:
        """The option index for ``choice``: an index (0, 1, ...), a letter ("A", "b") or the option's text."""
        if isinstance(choice, bool):
            raise TypeError(f"Choose an option by letter (A-{LETTERS[len(self.options) - 1]}) or index; "
                            f"got {choice!r}.")
        if isinstance(choice, int):
            if 0 <= choice < len(self.options):
                return choice
        elif isinstance(choice, str):
            text = choice.strip()
            if len(text) == 1 and text.upper() in LETTERS[: len(self.options)]:
                return LETTERS.index(text.upper())
            for i, option in enumerate(self.options):
                if option.text == text:
                    return i
        else:
            raise TypeError(f"Choose an option by letter or index; got {choice!r} ({type(choice).__name__}).")
        raise ValueError(
            f"{choice!r} is not one of the options: use a letter A-{LETTERS[len(self.options) - 1]} "
            f"or an index 0-{len(self.options) - 1}."
        )

    def feedback(self, choice) -> str:
        """The feedback text for picking ``choice`` (see :meth:`index_of`); None means nothing picked."""
        if choice is None:
            return "Pick an answer first, then press Check."
        index = self.index_of(choice)
        picked = self.options[index]
        letter = LETTERS[index]
        if not picked.correct:
            return f"✗ Not quite: {letter} is not the answer. {picked.explanation} Try another answer."
        others = [f"{LETTERS[i]}. {option.text} — {option.explanation}"
                  for i, option in enumerate(self.options) if i != index]
        return "\n".join([f"✓ Correct: {letter}. {picked.explanation}", "Why not the others:", *others])

    def text(self, number: int | None = None) -> str:
        """The question and its lettered options as plain text (no answers)."""
        head = f"Q{number}. {self.prompt}" if number is not None else self.prompt
        return "\n".join([head, *(f"  {LETTERS[i]}. {o.text}" for i, o in enumerate(self.options))])


def _q(prompt: str, *options: tuple[str, bool, str], source: str = "") -> Question:
    return Question(prompt, tuple(Option(*option) for option in options), source)


R, W = True, False  # right, wrong: keeps the tables below readable

# Shared by lesson 08 (cost and FlashAttention) and the review of lesson 10.
_SEED_Q3 = _q(
    "A startup claims its new architecture \"replaces attention with a more efficient mechanism\". "
    "Which question gets at the mathematics behind the claim?",
    ("How many stars does its GitHub repository have?", W,
     "Popularity says nothing about how the mechanism works or how its cost grows."),
    ("Is it faster than a GPU?", W,
     "That compares an algorithm with a piece of hardware; the new mechanism could run on a GPU "
     "just as well."),
    ("Is it written in Python?", W,
     "The programming language changes constant factors at most, not how the cost grows with the "
     "length of the input."),
    ("How do tokens exchange information in it (pairwise dot products as in attention, "
     "convolutions, a recurrence, or something else), and how does its cost grow with the sequence "
     "length?", R,
     "Right. Attention compares every pair of tokens, so its cost grows with the square of the "
     "length. An efficiency claim is a claim about that growth, and how tokens interact tells you "
     "what the new mechanism may give up in return (a recurrence, for example, must squeeze the "
     "past into a fixed-size state)."),
    source="seed 000, Check Your Understanding Q3",
)

_SCORE_GROWTH = _q(
    "From a 1,000-token prompt to a 100,000-token prompt, by what factor does the number of "
    "query-key scores (per head and layer) grow?",
    ("100", W,
     "That is how much the sequence grew. Scores count pairs of tokens, N × N, so the factor is "
     "squared."),
    ("10,000", R,
     "Yes: (100,000)² / (1,000)² = 10,000, from 1 million scores to 10 billion."),
    ("1,000", W,
     "Scores count pairs (N × N): the factor is 100², not 100 × 10."),
    ("1: only memory grows, not the number of scores.", W,
     "Every query is compared with every key, so the number of scores grows with the square of N, "
     "and the memory to hold them with it."),
    source="seed 004, quadratic cost",
)

QUIZZES: dict[str, tuple[Question, ...]] = {
    "00": (
        _q("In Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V, what is one row of the matrix Q?",
           ("A learned weight matrix that turns embeddings into queries.", W,
            "That is W_Q. Q is what comes out after the token embeddings X are multiplied by it: "
            "Q = X·W_Q, with one row per token."),
           ("The query vector of one token: what that token is looking for among the others.", R,
            "Yes. Rows are tokens, so row i of Q is token i's query, which is compared with every key to "
            "decide where token i looks."),
           ("A probability distribution saying how much one token attends to each other token.", W,
            "That is a row of the attention weights, softmax(Q·Kᵀ / √d_k), which only appears in step 3."),
           ("One vector summarising the meaning of the whole sentence.", W,
            "Attention keeps one vector per token; nothing in the formula squeezes the sentence into a "
            "single row."),
           source="seed 000, core formula and symbol table"),
        _q("What does d_k, under the square root, count?",
           ("The number of tokens in the sequence.", W,
            "The number of tokens is the sequence length. It sets the size of the score matrix "
            "(seq_len × seq_len), not the scaling factor."),
           ("The number of attention heads.", W,
            "Heads come later (multi-head attention). Inside one head, d_k is the width of that head's "
            "queries and keys."),
           ("How many numbers each query and each key vector has.", R,
            "Right: Q and K are (seq_len, d_k). A query-key dot product adds up d_k products, which is why "
            "its size grows with d_k and why the formula divides by √d_k."),
           ("The size of the vocabulary.", W,
            "The vocabulary size matters for the embedding table that makes X, not inside attention."),
           source="seed 000, symbol table"),
        _q("Which part of the formula turns raw similarity scores into weights that are positive and add up "
           "to 1 along each row?",
           ("Dividing by √d_k.", W,
            "Scaling changes how big the scores are, but they can still be negative and their rows add up "
            "to nothing in particular."),
           ("The transpose in Kᵀ.", W,
            "The transpose only lines up the shapes, so that the matrix product pairs every query with "
            "every key."),
           ("The final multiplication by V.", W,
            "Multiplying by V uses the weights to mix the values; it does not make the weights."),
           ("The row-wise softmax.", R,
            "Yes: softmax exponentiates every score (so all become positive) and divides by the row's total "
            "(so each row adds up to 1)."),
           source="seed 000, symbol table"),
    ),
    "01": (
        _q("\"The animal didn't cross the street because it was too tired\": here 'it' is the animal. With "
           "\"too wide\" instead, 'it' is the street. How can attention tell the two apart?",
           ("It cannot: the vector of 'it' is computed from the word 'it' alone, so the model has to guess.",
            W,
            "Before attention, 'it' does start from the same embedding in both sentences. Attention is "
            "exactly the step that changes this, by mixing in information from the other tokens."),
           ("'it' builds its new vector from all the other tokens, weighted by how well their keys match "
            "its query; in a trained model the words 'tired' or 'wide' shift that match toward 'animal' or "
            "'street'.", R,
            "Right. Context enters through the weights. In a real transformer, earlier layers have already "
            "mixed 'tired' or 'wide' into the vector of 'it', so its query differs between the two "
            "sentences and so does the key it matches best."),
           ("A hand-written grammar rule links a pronoun to the nearest noun before it.", W,
            "No such rule is written in, and it would fail here: the nearest noun before 'it' is 'street' "
            "in both sentences, which is wrong for 'tired'."),
           ("Attention uses only the position of 'it' in the sentence.", W,
            "'it' sits at the same position in both sentences, yet the answer differs: the content of the "
            "other words decides."),
           source="seed 004, why attention matters"),
        _q("How does attention differ from looking up a key in a Python dictionary?",
           ("Attention also needs the query to equal a key exactly, or it fails.", W,
            "A poor match never fails in attention; it just gets a small weight. Similarity, not equality, "
            "is what counts."),
           ("Attention returns exactly one value: the one whose key is most similar to the query.", W,
            "That would be a hard arg-max lookup. Softmax gives every key a share, so the output mixes "
            "several values; only when one score dwarfs all others does it come close to picking one."),
           ("A dictionary returns the value of the one key that matches exactly; attention compares the "
            "query with every key and returns a blend of all values, weighted by how well each key "
            "matches.", R,
            "Yes, a soft lookup: good matches get large weights, poor ones small (but not zero) weights, and "
            "the answer is the weighted average of the values."),
           ("Attention ignores the keys and averages all the values equally.", W,
            "Equal weights happen only when all the scores in a row are equal. The keys are what make the "
            "weights differ."),
           source="seed 004, Q/K/V intuition"),
        _q("In the database picture of attention, which roles do Q, K and V play?",
           ("Q is the content handed back, K is the search request, V is the label a token is found by.", W,
            "The roles are shuffled. The query asks, the key is what the query is compared with, and the "
            "value is what gets handed back."),
           ("Q is the search request, K is the label each token can be found by, V is the content handed "
            "back.", R,
            "Right: Q searches, K indexes, V carries the payload. The Q·K comparison decides how much of "
            "each V reaches the output."),
           ("K is the content handed back, and V decides where to look.", W,
            "It is the other way round: keys set the weights (through Q·Kᵀ), and values are what the "
            "weights average."),
           ("Q, K and V are three copies of the same vector, kept separate for speed.", W,
            "They come from three different learned matrices, so in general they differ; notebook 02 shows "
            "why that matters."),
           source="seed 004, Q/K/V intuition and key takeaways"),
    ),
    "02": (
        _q("Why does every token get three separate projections (a query, a key and a value) instead of one "
           "projection used three times?",
           ("Three was an arbitrary choice in the original paper; any other number would work the same.", W,
            "The number follows from the jobs to do: matching needs two sides (the query and the key), and "
            "a third vector (the value) carries the content."),
           ("To make the model three times larger.", W,
            "The extra parameters are a side effect, not the purpose. The separate matrices earn their "
            "place because matching and carrying content are different jobs."),
           ("Q and K only serve to measure relevance (through their dot product), while V is what actually "
            "gets averaged into the output. Separate projections let the model learn one representation "
            "for matching and another for the content it passes on.", R,
            "Right. What makes two tokens relevant to each other is not necessarily the information worth "
            "passing along, so each gets its own learned matrix."),
           ("Q and K are redundant: one shared projection for both would behave exactly the same.", W,
            "With Q = K the score matrix would be symmetric (q_i·q_j = q_j·q_i): 'it' would find 'animal' "
            "exactly as relevant as 'animal' finds 'it', and each token would tend to match itself best. "
            "Separate W_Q and W_K allow relevance in one direction only."),
           source="seed 000, Check Your Understanding Q1"),
        _q("X holds 6 tokens with d_model = 8, so X is (6, 8), and W_Q is (8, 4). What is the shape of "
           "Q = X·W_Q?",
           ("(8, 4)", W,
            "That is W_Q itself. A product keeps the rows of its left factor (the tokens) and the columns "
            "of its right factor."),
           ("(6, 4)", R,
            "Yes: (6, 8)·(8, 4) gives (6, 4), one 4-number query per token; the inner 8s meet in the dot "
            "products."),
           ("(6, 8)", W,
            "That is X. Multiplying by W_Q changes each token's width from d_model = 8 to d_k = 4."),
           ("(4, 6)", W,
            "That would be Qᵀ. The rows stay tokens."),
           source="seed 000, step 1"),
        _q("Does each token have its own W_Q?",
           ("Yes: every position in the sentence has its own learned W_Q.", W,
            "Then a sentence longer than any seen in training would have no matrices for its last tokens. "
            "Sharing one W_Q is what lets attention handle any length."),
           ("Yes: every word of the vocabulary has its own W_Q.", W,
            "Which word a token is enters through its embedding (its row of X), not through the projection "
            "matrices."),
           ("No: one W_Q (and one W_K, one W_V) is applied to every token's row; tokens get different "
            "queries because their embeddings differ.", R,
            "Right: X·W_Q applies the same matrix to each row of X, so the same three matrices serve a "
            "sequence of any length."),
           source="seed 000, step 1"),
    ),
    "03": (
        _q("In the score matrix Q·Kᵀ, what is entry (i, j)?",
           ("The dot product q_i · k_j: how well token j's key matches token i's query.", R,
            "Yes: row i belongs to query i, column j to key j, and the entry is their dot product, large "
            "when the two vectors point the same way."),
           ("The dot product k_i · q_j.", W,
            "That is entry (j, i), from the transposed matrix K·Qᵀ. In Q·Kᵀ the row index belongs to the "
            "query."),
           ("The probability that token i attends to token j.", W,
            "Not yet: raw scores can be any real number, negative ones included. They become probabilities "
            "only after scaling and softmax (step 3)."),
           ("The dot product of the embeddings of tokens i and j.", W,
            "The scores compare the projected vectors (queries and keys), not the raw embeddings; W_Q and "
            "W_K decide which aspects of the tokens get compared."),
           source="seed 000, step 2"),
        _q("Q holds 5 queries and K holds 7 keys, both with d_k = 16. What is the shape of Q·Kᵀ?",
           ("(16, 16)", W,
            "d_k is summed over inside each dot product, so it does not appear in the shape of the scores."),
           ("(7, 5)", W,
            "That is K·Qᵀ, the transposed matrix. In Q·Kᵀ rows are queries and columns are keys."),
           ("(5, 16)", W,
            "That is the shape of Q. The scores have one column per key."),
           ("(5, 7)", R,
            "Right: (5, 16)·(16, 7) gives (5, 7), one score for every (query, key) pair."),
           source="seed 000, step 2"),
        _q("Why does the formula use Kᵀ rather than K?",
           ("Transposing normalises the keys.", W,
            "A transpose only rearranges entries into a different layout; no value changes."),
           ("Q is (L, d_k) and K is (S, d_k); turning K into (d_k, S) lets one matrix product pair every "
            "query row with every key row.", R,
            "Yes: in Q·Kᵀ, entry (i, j) is row i of Q times column j of Kᵀ, which is key j."),
           ("It makes the score matrix symmetric.", W,
            "Q·Kᵀ is symmetric only in special cases (such as Q = K). In general, how relevant j is to i "
            "differs from how relevant i is to j."),
           source="seed 000, step 2; seed 004, step 1"),
    ),
    "04": (
        _q("Why are the scores divided by √d_k before the softmax?",
           ("So that each row of weights adds up to 1.", W,
            "Softmax does that on its own; scaling does not change whether rows add up to 1."),
           ("With query and key entries of mean 0 and variance 1, a dot product adds up d_k terms, so its "
            "variance is d_k and its typical size √d_k. Dividing by √d_k brings the scores back to a spread "
            "of about 1 whatever d_k is.", R,
            "Right. Without it, wider heads would produce larger scores, and softmax would saturate."),
           ("To make the computation faster.", W,
            "It costs one extra multiplication per score; its purpose is numerical, not speed."),
           ("Because d_k is the number of tokens, and an average must divide by it.", W,
            "d_k is the length of the query and key vectors, not the number of tokens; and it is softmax "
            "that turns the scores into weights."),
           source="seed 000, step 3; seed 004, step 2"),
        _q("What happens to softmax when the scores in a row are very large in size, as with d_k = 512 "
           "and no scaling?",
           ("It becomes uniform: every token gets the same weight.", W,
            "That is the opposite extreme, reached when all the scores are close to zero (for instance "
            "after dividing by too much)."),
           ("The rows stop adding up to 1.", W,
            "Softmax rows always add up to 1 (up to rounding). What changes is how the weight is spread."),
           ("It saturates: almost all the weight goes to the largest score, the others get nearly zero, "
            "and the gradients for those other tokens nearly vanish.", R,
            "Yes. Softmax of large numbers is almost one-hot, and a one-hot softmax barely changes when the "
            "scores change, so learning slows down."),
           ("Some weights become negative.", W,
            "exp of any number is positive, so softmax weights are never negative."),
           source="seed 000, step 3 and symbol table"),
        _q("A classmate divides by d_k instead of √d_k. With d_k = 256, what do the weights look like?",
           ("Too flat: the scores shrink by 256 instead of 16, so they all sit near 0 and the weights come "
            "out nearly uniform.", R,
            "Right. Dividing by too much removes the differences between scores, so attention cannot focus "
            "on anything."),
           ("Exactly the same: the two differ only by a constant.", W,
            "Softmax ignores a constant added to a row, not a constant factor. Dividing by a larger number "
            "makes the distribution flatter."),
           ("Saturated: almost one-hot.", W,
            "That is what too little scaling does. Dividing by d_k is too much scaling."),
           source="seed 000, step 3"),
        _q("After the softmax, what holds for every row of the weight matrix?",
           ("Every column adds up to 1.", W,
            "Softmax runs along each row (over the keys, for one query). A column can add up to anything "
            "between 0 and the number of queries."),
           ("The diagonal entry is the largest: each token attends most to itself.", W,
            "That happens often but is not guaranteed: in the 'it' example the largest weight goes to "
            "'animal' or 'street'."),
           ("The entries add up to d_k.", W,
            "d_k plays no part in the softmax's normalisation; the entries add up to 1."),
           ("Every entry lies between 0 and 1 and the row adds up to 1: a probability distribution over "
            "the keys.", R,
            "Yes: row i says what share of its attention query i gives to each key."),
           source="seed 000, step 3; seed 004, step 3"),
    ),
    "05": (
        _q("The weights of token i add up to 1 over all tokens j. What does that guarantee about token i's "
           "output?",
           ("Token i spreads its attention equally over all tokens.", W,
            "Adding up to 1 says nothing about equal shares: 0.9 + 0.05 + 0.05 adds up to 1 too. Equal "
            "weights occur only when all the scores in the row are equal."),
           ("The output is a weighted average (a convex combination) of the value vectors, so it stays in "
            "their range: each coordinate lies between the smallest and the largest value of that "
            "coordinate among the v_j.", R,
            "Right. Non-negative weights that add up to 1 cannot overshoot: the output lies among the "
            "values, on their scale, however long the sequence."),
           ("Token i can attend to only one token at a time.", W,
            "Any number of weights may be non-zero; they only have to share a total of 1."),
           ("Token i's output is the same as its input.", W,
            "The output mixes the value vectors of many tokens. It equals token i's own value vector only "
            "if all the weight sits on token i."),
           source="seed 000, Check Your Understanding Q2"),
        _q("weights is (4, 6) and V is (6, 3). What is the shape of weights·V, and what is its row 2?",
           ("(6, 3); row 2 is the value vector of token 2.", W,
            "The output has one row per query (4 of them), and each row mixes all the value vectors."),
           ("(4, 6); row 2 is the weights of query 2.", W,
            "That is the shape of the weights. Multiplying by V replaces each weight row by a mixture of "
            "value vectors, d_v = 3 numbers long."),
           ("(4, 3); row 2 is Σ_j weights[2, j] · v_j, the value vectors mixed with query 2's weights.", R,
            "Yes: (4, 6)·(6, 3) gives (4, 3), and each output row is a weighted sum of the rows of V."),
           source="seed 000, step 4; seed 004, step 4"),
        _q("In row i, all of the weight (1.0) sits on token j. What is output i?",
           ("The average of all the value vectors.", W,
            "That is the result of uniform weights, where every token gets the same share."),
           ("Exactly v_j, the value vector of token j.", R,
            "Right: Σ weights[i, j'] · v_j' keeps only the term with weight 1."),
           ("k_j, the key of token j.", W,
            "Keys never reach the output; they only shape the weights. The output is made of values."),
           ("A vector of zeros.", W,
            "Zeros would need all weights to be 0; here one weight is 1."),
           source="seed 000, step 4"),
    ),
    "08": (
        _SEED_Q3,
        _SCORE_GROWTH,
        _q("Naive attention and FlashAttention give the same output. What does FlashAttention change?",
           ("It computes fewer scores, about N·log N instead of N².", W,
            "Every query is still compared with every key: the same N² scores and the same 4·N²·d "
            "operations of the two matrix products. What changes is where the scores live."),
           ("It never stores the N × N score matrix: it works tile by tile with a running maximum and "
            "sum, so its memory grows like N, and on a GPU fewer trips to slow memory make it faster.", R,
            "Right. The arithmetic is the same N², but the scores of one tile live only in fast "
            "memory and are gone before the next tile, so nothing of size N × N is ever written."),
           ("It approximates the softmax, trading a little accuracy for speed.", W,
            "It is exact: the rescaling by exp(m − m') makes the result equal to the naive one up to "
            "rounding (≤ 1e-12 in float64, as the lesson checks)."),
           ("It skips the keys far away from each query.", W,
            "That is a sliding-window mask, which changes the result. FlashAttention computes full "
            "attention; with a causal mask it skips only tiles whose weights would be 0 anyway."),
           source="seed 004, quadratic cost and FlashAttention"),
        _q("A new tile raises row i's running maximum from m = 2 to m' = 5. What happens to its running "
           "sum ℓ = Σ exp(s_j − m) before the tile's own terms are added?",
           ("It is multiplied by exp(2 − 5) = exp(−3) ≈ 0.05.", R,
            "Right. Each old term exp(s_j − 2) must become exp(s_j − 5) = exp(s_j − 2) · exp(2 − 5): "
            "measured against a larger maximum, the old terms shrink."),
           ("It is multiplied by exp(5 − 2) = exp(3) ≈ 20.", W,
            "That factor is upside down: it makes the old terms grow although they are now measured "
            "against a larger maximum. The factor is exp(m − m'), which is never more than 1."),
           ("Nothing: the old sum is kept as it is.", W,
            "The old terms were computed against m = 2; kept as they are they count exp(3) ≈ 20 times "
            "too much next to the new terms computed against 5."),
           ("It is set back to 0, and the earlier tiles are read again.", W,
            "That would be a second pass over the keys, the very thing the online softmax avoids: "
            "one multiplication fixes all the old terms at once."),
           source="online softmax (Milakov & Gimelshein 2018), FlashAttention (Dao et al. 2022)"),
    ),
    "10": (
        _SEED_Q3,
        _SCORE_GROWTH,
    ),
}


def _lesson_questions(lesson_id) -> tuple[str, tuple[Question, ...]]:
    key = f"{lesson_id:02d}" if isinstance(lesson_id, int) and not isinstance(lesson_id, bool) else lesson_id
    if not isinstance(key, str):
        raise TypeError(f"lesson_id must be a string such as \"02\"; got {lesson_id!r}.")
    if key not in QUIZZES:
        raise ValueError(f"There is no quiz for lesson {lesson_id!r}; quizzes exist for {sorted(QUIZZES)}.")
    return key, QUIZZES[key]


# --------------------------------------------------------------------------- widgets


class QuestionView:
    """One question as widgets: the prompt and lettered options (HTML), A/B/C/D radio buttons,
    a Check button and a feedback area. ``select`` and ``check`` drive it without a browser."""

    def __init__(self, question: Question, number: int):
        import ipywidgets as widgets

        self.question, self.number = question, number
        items = "".join(f"<li><strong>{LETTERS[i]}.</strong> {html.escape(o.text)}</li>"
                        for i, o in enumerate(question.options))
        self.prompt = widgets.HTML(
            f'<div style="font-size:1.05em;line-height:1.45"><p><strong>Q{number}.</strong> '
            f'{html.escape(question.prompt)}</p>'
            f'<ul style="list-style:none;padding-left:0.5em">{items}</ul></div>'
        )
        self.choices = widgets.RadioButtons(
            options=[(LETTERS[i], i) for i in range(len(question.options))], value=None,
            description="Your answer:", orientation="horizontal", style={"description_width": "initial"},
            layout=widgets.Layout(width="auto"),
        )
        self.choices.add_class("lessons-quiz-choices")
        self.button = widgets.Button(description="Check", tooltip=f"Check your answer to question {number}",
                                     icon="check", button_style="primary",
                                     layout=widgets.Layout(margin="0 0 0 1em"))
        self.button.add_class("lessons-quiz-check")
        self.feedback = widgets.HTML("")
        self.feedback.add_class("lessons-quiz-feedback")
        self.button.on_click(lambda _button: self.check())
        self.choices.observe(self._clear_feedback, names="value")
        row = widgets.HBox([self.choices, self.button], layout=widgets.Layout(align_items="center"))
        self.widget = widgets.VBox([self.prompt, row, self.feedback])

    def _clear_feedback(self, _change) -> None:
        """A new pick makes the old feedback stale: clear it until Check is pressed again."""
        self.feedback.value = ""

    def select(self, choice) -> None:
        """Pick an option by letter, index or text (as a learner clicking a radio button)."""
        self.choices.value = self.question.index_of(choice)

    def check(self) -> str:
        """Show and return the feedback for the current pick (as the Check button does)."""
        text = self.question.feedback(self.choices.value)
        self.feedback.value = _feedback_html(text)
        return text


def _feedback_html(text: str) -> str:
    """The quiz's feedback text in the course's feedback box (the same look as the exercise checks)."""
    status = PASSED if text.startswith("✓") else FAILED if text.startswith("✗") else NOT_ATTEMPTED
    first, *rest = text.split("\n")
    body = f"<div>{html.escape(first)}</div>"
    if rest:
        body += f"<div style='margin-top:0.3em'><em>{html.escape(rest[0])}</em></div><ul>"
        body += "".join(f"<li>{html.escape(line)}</li>" for line in rest[1:]) + "</ul>"
    return box_html(status, body, css_class="lessons-quiz-box")


class Quiz:
    """The quiz of one lesson, as widgets (``.widget``) and as text.

    Displays itself in Jupyter; its plain-text form (what GitHub, nbviewer and nbval
    see) lists the questions and options without the answers. ``answer`` picks an
    option and returns the feedback text, for tests and headless use.
    """

    def __init__(self, lesson_id):
        import ipywidgets as widgets

        self.lesson_id, self.questions = _lesson_questions(lesson_id)
        self.views = [QuestionView(q, n) for n, q in enumerate(self.questions, start=1)]
        title = widgets.HTML(f"<h3>Quiz, lesson {self.lesson_id}: check your understanding</h3>")
        self.widget = widgets.VBox([title, *(view.widget for view in self.views)])
        self.widget.add_class("lessons-quiz")

    def answer(self, question: int, choice) -> str:
        """Pick ``choice`` (letter, index or text) in question ``question`` (0-based) and check it."""
        if isinstance(question, bool) or not isinstance(question, int) or not 0 <= question < len(self.views):
            raise ValueError(f"question must be an index 0-{len(self.views) - 1}; got {question!r}.")
        view = self.views[question]
        view.select(choice)
        return view.check()

    def text(self) -> str:
        lines = [f"Quiz, lesson {self.lesson_id} ({len(self.questions)} questions; "
                 "run the notebook to check your answers)"]
        return "\n\n".join([*lines, *(q.text(n) for n, q in enumerate(self.questions, start=1))])

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = self.text()
        return bundle


def show(lesson_id) -> None:
    """Display the quiz of a lesson (e.g. ``show("04")``) below the current cell.

    Returns nothing, so the quiz shows once; use :class:`Quiz` for an object to drive.
    """
    from IPython.display import display

    display(Quiz(lesson_id))
