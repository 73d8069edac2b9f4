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
same number; "08" and "10" (the review notebook) share the seed's Q3, about judging an
architecture that claims to replace attention; "10" also asks the seed's Q1 and Q2 (taken
from lessons 02 and 05), then a review of the course. Every question has
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
     "length: in notebook 08 you measured it, time and memory of the plain formula rising with a "
     "slope of about 2 on a log-log plot (twice the tokens, about four times the cost). An "
     "efficiency claim is a claim about that slope, and how tokens interact tells you what the "
     "new mechanism may give up in return (a recurrence, for example, must squeeze the past into "
     "a fixed-size state). FlashAttention, by contrast, keeps the slope of the time and lowers "
     "the memory: same result, different bookkeeping."),
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
    "06": (
        _q("d_model = 512 is split into 8 heads. Compared with one head of width 512, how many parameters "
           "do W_Q, W_K, W_V and W_O have together?",
           ("8 times as many: each head needs its own projections.", W,
            "Each head's projections are only d_head = 64 columns wide: the 8 heads' W_Q^i, side by side, "
            "are exactly one 512 × 512 W_Q. More heads means narrower heads, not more weights."),
           ("The same, 4 · 512² ≈ 1.05 million: the heads share out the columns of the same matrices.", R,
            "Right. Head i owns columns i·64 … i·64 + 63 of W_Q, W_K and W_V; the matrix products cost "
            "the same too. Only the softmax work and the number of attention weights grow with the heads "
            "(8 · L² instead of L²)."),
           ("One eighth: each head sees only 64 of the 512 features.", W,
            "Each head reads all 512 input features (its W_Q^i is 512 × 64); it is the output of each "
            "head that is narrower."),
           ("It depends on the sequence length.", W,
            "Weights are per feature, not per token: the same W_Q serves a sequence of any length."),
           source="seed 000 and 004, multi-head attention"),
        _q("Q has shape (L, d_model). Why does splitting it into heads need a transpose after "
           "Q.reshape(L, n_heads, d_head)?",
           ("To bring the head axis to the front, (n_heads, L, d_head), so each head is an ordinary "
            "(L, d_head) matrix and all heads attend in one batched product.", R,
            "Yes. The reshape only groups each token's columns by head (no number moves); the transpose "
            "makes 'head' the batch axis, and merging undoes both steps in reverse order."),
           ("Because reshape changes the numbers and the transpose puts them back.", W,
            "A reshape never changes or moves a number in memory; it only reads the same numbers with "
            "new axis boundaries."),
           ("It is not needed: Q.reshape(n_heads, L, d_head) gives the same result.", W,
            "Same shape, wrong numbers: that reshape makes its first 'head' out of whole rows of the "
            "first tokens, instead of the first d_head columns of every token."),
           ("To transpose K for Q·Kᵀ.", W,
            "Kᵀ is a separate, later step (swap the last two axes of K); this transpose swaps tokens "
            "and heads."),
           source="seed 000, MultiHead = Concat(head_1 … head_h)·W_O"),
        _q("Why do transformers use several heads instead of one head of the same total width?",
           ("Several heads are cheaper to compute.", W,
            "The matrix products cost the same, and the softmax work grows with the number of heads: "
            "heads are not a saving."),
           ("Each head has its own softmax, so each can put its weight somewhere else: one on the "
            "previous token, one on the subject, one spread out, at the same time.", R,
            "Right. One softmax row is one distribution over the keys; a single head has to compromise "
            "between the places it wants to look. h heads give each token h distributions, concatenated "
            "and mixed by W_O."),
           ("Each head reads a different part of the sentence.", W,
            "Every head sees every token (subject to the mask); heads differ in what they look for, "
            "not in which tokens they may see."),
           ("With one head, the weights of a row would not sum to 1.", W,
            "Every head's rows sum to 1, whatever the number of heads: each has its own softmax."),
           source="seed 000 and 004, heads that attend to different things"),
    ),
    "07": (
        _q("Why is the causal mask added to the scores as −∞ before the softmax, rather than by zeroing "
           "the weights after it?",
           ("Both give the same weights; −∞ is only a convention.", W,
            "Zeroing afterwards leaves rows that sum to less than 1, and the future scores have already "
            "taken their share of each row's total: the past weights still depend on the future."),
           ("exp(−∞) = 0, so the masked keys get exactly 0 weight and the softmax shares the whole 1 among "
            "the allowed keys only: nothing of the future enters the row, not even through the sum.", R,
            "Yes. The leak experiment shows it: with −∞ before the softmax, changing a future token moves "
            "earlier outputs by exactly 0.0."),
           ("−∞ makes the computation faster.", W,
            "A dense implementation computes every score anyway; the mask is about correctness (fused "
            "kernels may skip masked blocks, but that is an optimisation of the same result)."),
           ("Softmax cannot take zeros as input.", W,
            "Softmax takes any finite number; a score of 0 gets weight exp(0) = 1 before normalising, "
            "which is exactly why 0 is not a mask."),
           source="seed 000 and 004, causal masking"),
        _q("You pass torch.triu(torch.ones(L, L), diagonal=1).bool(), nn.MultiheadAttention's causal mask, "
           "as attn_mask to torch's scaled_dot_product_attention. What happens?",
           ("The same causal attention: both functions read True as masked.", W,
            "SDPA's boolean mask means the opposite: True = may attend. The two conventions differ, which "
            "is the trap."),
           ("An error: SDPA only accepts float masks.", W,
            "SDPA accepts boolean masks (True = may attend) and float masks (added to the scores)."),
           ("Each token attends only to later tokens, and the last token may attend to nothing (its "
            "output is 0): the mask is inverted, because SDPA reads True as may attend.", R,
            "Right. Invert it (~mask) or build it with tril. A check such as "
            "masks.causal_mask_mistake(mask) names this mistake before it ships."),
           ("torch detects the mix-up and inverts the mask for you.", W,
            "Nothing can tell a deliberate mask from an inverted one; the library does what the "
            "convention says."),
           source="the convention trap"),
        _q("A sequence of 3 real tokens is padded to 5 in a batch, and the model is causal. Which keys may "
           "query 2 (the third real token) attend to?",
           ("Keys 0, 1, 2: itself and the tokens before it; the padding keys 3 and 4 are hidden anyway.", R,
            "Yes: causal allows keys 0…2, padding hides keys 3 and 4; the mask is their AND, True only "
            "where both allow."),
           ("Keys 0 to 4: padding is only about which outputs are used.", W,
            "Padding keys must be hidden from the real tokens, or their made-up vectors would leak into "
            "the real outputs."),
           ("Keys 3 and 4 only.", W,
            "That is the inverted mask: it hides what should be seen and shows the future and the "
            "padding."),
           ("Only key 2, itself.", W,
            "A causal mask allows every earlier token too; only a window of size 1 would leave only "
            "itself."),
           source="mask gallery: causal + padding"),
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
        _q("The paper uses d_model = 512 and h = 8 heads. How many numbers long is each head's query "
           "vector (its d_k)?",
           ("512: every head sees the whole model width.", W,
            "Each head gets its own slice: d_k = d_model / h. With all 512 per head, the 8 heads together "
            "would cost 8 times one full-width attention."),
           ("64 = 512 / 8.", R,
            "Yes: d_k = d_v = d_model / h = 64, so the 8 heads together cost about as much as one head of "
            "width 512 (notebook 06), and the scores are divided by √64 = 8."),
           ("8, one number per head.", W,
            "8 is the number of heads, not the length of a head's vectors."),
           ("4,096 = 512 × 8.", W,
            "The heads split the width between them; they do not multiply it."),
           source="Vaswani et al. §3.2.2; notebook 06"),
        _q("Causal masking sets the scores of future tokens to −∞ before the softmax. Why before and not "
           "after?",
           ("Because exp(−∞) = 0: the future gets weight exactly 0 and the softmax shares the whole 1 "
            "among the allowed tokens.", R,
            "Right. Zeroing weights after the softmax would leave each row summing to less than 1; "
            "masking the scores first keeps every row a probability distribution over the past "
            "(notebook 07)."),
           ("It makes no difference; after would work as well.", W,
            "Zeroing after the softmax leaves rows that no longer sum to 1: the weight the future had is "
            "simply lost instead of shared among the allowed tokens."),
           ("−∞ makes the computation faster.", W,
            "It costs the same: the mask is about what may be seen, not about speed."),
           ("So that the model can still peek at the future a little.", W,
            "exp(−∞) is exactly 0: no weight at all reaches a future token, which the leak test of "
            "notebook 07 checks."),
           source="seed 000 and 004, causal masking; notebook 07"),
        _q("FlashAttention computes attention tile by tile with an online softmax. How does its output "
           "compare with the plain formula's?",
           ("the same numbers (up to rounding), while it never holds the N × N matrix: memory grows "
            "with N, time still with N².", R,
            "Yes: it is exact, not an approximation. It changes the bookkeeping (running maxima and sums "
            "per row), not the mathematics (notebook 08)."),
           ("an approximation that drops the small weights.", W,
            "Nothing is dropped: the online softmax rescales what it has summed so far whenever a larger "
            "score appears, so the result equals softmax(Q·Kᵀ/√d_k)·V."),
           ("computed in time that grows linearly with N.", W,
            "Every query still meets every key, so the work stays quadratic; what shrinks is the memory."),
           ("different, because each tile has its own softmax.", W,
            "The tiles' partial results are merged with the running maximum and sum of each row, which "
            "gives exactly the softmax over the whole row."),
           source="seed 004, FlashAttention; notebook 08"),
        _q("In notebook 09 a trained head sends 100% of the attention of “it” to the first token <s>. What "
           "may you conclude from that weight alone?",
           ("That <s> is the most important word for understanding “it”.", W,
            "A weight says where the head looks, not how much that matters: <s> carries almost nothing "
            "(its value is small), and the referent head answers from other words."),
           ("Little about importance: the row has to sum to 1, so a head with nothing to fetch parks "
            "its weight somewhere harmless. To judge importance, change something and measure (switch "
            "the head off, compare accuracies).", R,
            "Right: high weight is not importance. Notebook 09 shows the sink forming, its value "
            "shrinking, and the weight going to “nothing” instead once the head is given an off slot."),
           ("That the model is broken.", W,
            "The same model resolves “it” on held-out sentences nearly every time; sinks are common in "
            "large trained models too."),
           ("That <s> is the referent of “it”.", W,
            "<s> is not a word of the sentence; the referent head, which gives the answer, points at a "
            "noun."),
           source="seed 004, common misconceptions; notebook 09"),
    ),
    "09": (
        _q("After training, the referent head gives “animal” a weight of 1.00 in sentence A. What does that "
           "weight come from?",
           ("The model understands that animals get tired.", W,
            "It has never seen an animal: it multiplies vectors it learned from 2,000 made-up sentences. "
            "Give it nonsense (“the street didn't cross the road because it was too sleepy”) and it "
            "still answers, just as confidently."),
           ("The query of “it” has a far larger dot product with the key of “animal” than with any other "
            "key, and softmax turns that gap into nearly all of the weight.", R,
            "Right: arithmetic, not awareness. Layers 1 and 2 change the vectors of “it” and of the nouns "
            "so that this one dot product wins."),
           ("“animal” is the most important word of the sentence for every head.", W,
            "Weights belong to one head and one query: other heads send “it” to <s> or to “because”."),
           ("The model memorised sentence A while training.", W,
            "“animal” and “street” never appear together in a training sentence: the pair is held out."),
           source="seed 004, why it matters and misconceptions"),
        _q("Held-out accuracy is nearly 100% although every held-out sentence pairs an animal and a place "
           "that never met in training. What does that show?",
           ("The model memorised each pair.", W,
            "It cannot have: no held-out pair occurs in any training sentence."),
           ("The answer is always the first noun, and the model learned that.", W,
            "The first noun is the referent in about half of the sentences (measured in the notebook): "
            "the word order varies on purpose."),
           ("It learned something that carries over to new pairs: the kind of the adjective (tired → an "
            "animal, wide → a road) decides which noun's key matches the query of “it”.", R,
            "Yes: every single word was seen in training, only the combinations are new, and a rule over "
            "word kinds handles new combinations."),
           ("It reads the answer off the position of “it”.", W,
            "“it” moves around (fillers, eight templates), and the referent sits on either side of the "
            "other noun."),
           source="seed 004, why it matters"),
        _q("A head whose row must sum to 1 has nothing to fetch for a dummy “it” (“it was too late”). "
           "Where does its weight go, with and without an off slot?",
           ("Without an off slot it spreads evenly over the words; with one, nothing changes.", W,
            "The experiment shows the opposite: plain softmax parks about 0.9 of the weight on <s>, "
            "and the off slot takes almost all of it away from the words."),
           ("Without an off slot it goes to a sink, the first token <s>, whose value shrinks toward 0; "
            "with an off slot it goes to “nothing”: the weights on all words, <s> included, add up to "
            "almost 0.", R,
            "Right: the sink is a way to add (almost) nothing when the rows must sum to 1; given a way "
            "to attend to nothing, the head takes that instead."),
           ("In both cases it goes to the nouns.", W,
            "Fetching a noun would add that noun's value where the answer must be zero; training pushes "
            "the weight away from them."),
           ("In both cases it goes to <s>.", W,
            "With an off slot the weight on <s> falls close to 0: the head no longer needs a sink."),
           source="seed 004, common misconceptions (first token as anchor); notebook 09"),
    ),
}


def _seed_question(n: int) -> Question:
    """The seed lesson's "Check Your Understanding" question ``n``, from the lesson that asks it first."""
    tag = f"Check Your Understanding Q{n}"
    return next(q for questions in QUIZZES.values() for q in questions if q.source.endswith(tag))


# Notebook 10 asks the seed's three questions in order (Q1 from lesson 02, Q2 from 05, Q3 its own),
# then its review across the course; each question is written once.
QUIZZES["10"] = (_seed_question(1), _seed_question(2), *QUIZZES["10"])


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
